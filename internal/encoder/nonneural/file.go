package nonneural

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"repro/internal/encoder"
)

const fileVectors = "vectors.jsonl"

// FileMeta is encoder.json of a file artifact.
type FileMeta struct {
	Type    string `json:"type"`
	Dim     int    `json:"dim"`
	Count   int    `json:"count"`
	Vectors string `json:"vectors"`
	Source  string `json:"source,omitempty"` // the path it was copied from, for provenance
}

// VectorRow is one line of a vectors file.
type VectorRow struct {
	Text   string    `json:"text"`
	Vector []float32 `json:"vector"`
}

// FileVectors maps exact sentence texts to precomputed vectors.
type FileVectors struct {
	dim  int
	vecs map[string][]float32
}

// ReadVectorFile reads a vectors JSONL file (gzip when the name ends in
// .gz): one {"text", "vector"} object a line, every vector of the same,
// non-zero length. A text may repeat only with the same vector. Errors name
// the file and line.
func ReadVectorFile(path string) (*FileVectors, []byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: not a gzip file: %v", path, err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, nil, fmt.Errorf("%s: %v", path, err)
		}
	}
	fv := &FileVectors{vecs: map[string][]float32{}}
	first := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var r VectorRow
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if len(r.Vector) == 0 {
			return nil, nil, fmt.Errorf("%s:%d: no \"vector\" (want {\"text\": ..., \"vector\": [...]})", path, line)
		}
		if fv.dim == 0 {
			fv.dim = len(r.Vector)
		} else if len(r.Vector) != fv.dim {
			return nil, nil, fmt.Errorf("%s:%d: vector of %d values, want %d (the first vector's length)", path, line, len(r.Vector), fv.dim)
		}
		if prev, ok := fv.vecs[r.Text]; ok {
			if !slices.Equal(prev, r.Vector) {
				return nil, nil, fmt.Errorf("%s:%d: text %s repeats line %d with a different vector", path, line, quote(r.Text), first[r.Text])
			}
			continue
		}
		fv.vecs[r.Text] = r.Vector
		first[r.Text] = line
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s:%d: %v", path, line+1, err)
	}
	if len(fv.vecs) == 0 {
		return nil, nil, fmt.Errorf("%s: no vectors (empty file)", path)
	}
	return fv, raw, nil
}

// WriteFileVectors validates the vectors file at src and copies it
// (decompressed) into dir as a self-contained file artifact.
func WriteFileVectors(dir, src string) error {
	fv, raw, err := ReadVectorFile(src)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, fileVectors), raw, 0o644); err != nil {
		return err
	}
	return encoder.WriteMeta(dir, FileMeta{Type: TypeFile, Dim: fv.dim, Count: len(fv.vecs), Vectors: fileVectors, Source: src})
}

func openFile(dir string, raw json.RawMessage) (encoder.Encoder, error) {
	var m FileMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("file encoder: %s: %v", filepath.Join(dir, "encoder.json"), err)
	}
	if m.Vectors == "" {
		return nil, fmt.Errorf("file encoder: %s: encoder.json names no vectors file", dir)
	}
	fv, _, err := ReadVectorFile(filepath.Join(dir, m.Vectors))
	if err != nil {
		return nil, fmt.Errorf("file encoder: %v", err)
	}
	if fv.dim != m.Dim {
		return nil, fmt.Errorf("file encoder: %s: vectors have %d values, encoder.json says %d", dir, fv.dim, m.Dim)
	}
	return fv, nil
}

// Dim is the length of the vectors.
func (fv *FileVectors) Dim() int { return fv.dim }

// Len is the number of distinct texts with a vector.
func (fv *FileVectors) Len() int { return len(fv.vecs) }

// Encode looks each sentence up by its exact text. A sentence without a
// vector is an error that quotes the first such sentence and counts them,
// so the user can compute the missing vectors.
func (fv *FileVectors) Encode(ctx context.Context, sentences []string) ([][]float32, error) {
	out := make([][]float32, len(sentences))
	missing, firstMissing := 0, ""
	for i, s := range sentences {
		v, ok := fv.vecs[s]
		if !ok {
			if missing == 0 {
				firstMissing = s
			}
			missing++
			continue
		}
		out[i] = slices.Clone(v) // callers may normalise in place
	}
	if missing > 0 {
		return nil, fmt.Errorf("file encoder: no vector for %d of %d sentences; the first is %s (the file has %d texts; texts must match exactly)",
			missing, len(sentences), quote(firstMissing), len(fv.vecs))
	}
	return out, nil
}

func quote(s string) string {
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "..."
	}
	return fmt.Sprintf("%q", s)
}
