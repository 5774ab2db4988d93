package nonneural

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"repro/internal/encoder"
)

const fileVectors = "vectors.jsonl"

// FileMeta is encoder.json of a file artifact.
type FileMeta struct {
	Type    string `json:"type"`
	Dim     int    `json:"dim"`
	Count   int    `json:"count"`
	Vectors string `json:"vectors"`
	// Source is the name of the file it was copied from, for provenance:
	// the base name only, so the artifact is the same bytes wherever the
	// file lies (the loader hands stages absolute paths).
	Source string `json:"source,omitempty"`
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

// Limits of a vectors file: it is streamed line by line, so memory holds
// one line and the vectors themselves, never the whole file; a line longer
// than MaxVectorLine or a (decompressed) file larger than MaxVectorFile is
// an error, not an allocation that grows until the kernel kills the
// process.
const (
	MaxVectorLine = 64 << 20
	MaxVectorFile = 8 << 30
)

// ReadVectorFile reads a vectors JSONL file (gzip when the name ends in
// .gz): one {"text", "vector"} object a line, every vector of the same,
// non-zero length. A text may repeat only with the same vector. It must be
// a regular file. When copyTo is not nil the decompressed bytes are copied
// to it as they are read. Errors name the file and line.
func ReadVectorFile(path string, copyTo io.Writer) (*FileVectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: not a gzip file: %v", path, err)
		}
		r = zr
	}
	r = &limitedReader{r: r, left: MaxVectorFile, path: path}
	if copyTo != nil {
		r = io.TeeReader(r, copyTo)
	}
	fv := &FileVectors{vecs: map[string][]float32{}}
	first := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), MaxVectorLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("%s:%d: invalid UTF-8", path, line)
		}
		var row VectorRow
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&row); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if len(row.Vector) == 0 {
			return nil, fmt.Errorf("%s:%d: no \"vector\" (want {\"text\": ..., \"vector\": [...]})", path, line)
		}
		if fv.dim == 0 {
			fv.dim = len(row.Vector)
		} else if len(row.Vector) != fv.dim {
			return nil, fmt.Errorf("%s:%d: vector of %d values, want %d (the first vector's length)", path, line, len(row.Vector), fv.dim)
		}
		if prev, ok := fv.vecs[row.Text]; ok {
			if !slices.Equal(prev, row.Vector) {
				return nil, fmt.Errorf("%s:%d: text %s repeats line %d with a different vector", path, line, quote(row.Text), first[row.Text])
			}
			continue
		}
		fv.vecs[row.Text] = row.Vector
		first[row.Text] = line
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: a line longer than %d MiB (is this a vectors file?)", path, line+1, MaxVectorLine>>20)
		}
		return nil, fmt.Errorf("%s:%d: %v", path, line+1, err)
	}
	if len(fv.vecs) == 0 {
		return nil, fmt.Errorf("%s: no vectors (empty file)", path)
	}
	return fv, nil
}

// limitedReader fails, rather than stops, past its limit.
type limitedReader struct {
	r    io.Reader
	left int64
	path string
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, fmt.Errorf("%s: larger than %d GiB", l.path, int64(MaxVectorFile)>>30)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// WriteFileVectors validates the vectors file at src and copies it
// (decompressed) into dir as a self-contained file artifact.
func WriteFileVectors(dir, src string) error {
	out, err := os.Create(filepath.Join(dir, fileVectors))
	if err != nil {
		return err
	}
	defer out.Close()
	bw := bufio.NewWriterSize(out, 1<<20)
	fv, err := ReadVectorFile(src, bw)
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return encoder.WriteMeta(dir, FileMeta{Type: TypeFile, Dim: fv.dim, Count: len(fv.vecs), Vectors: fileVectors, Source: filepath.Base(src)})
}

func openFile(dir string, raw json.RawMessage) (encoder.Encoder, error) {
	var m FileMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("file encoder: %s: %v", filepath.Join(dir, "encoder.json"), err)
	}
	if m.Vectors == "" {
		return nil, fmt.Errorf("file encoder: %s: encoder.json names no vectors file", dir)
	}
	fv, err := ReadVectorFile(filepath.Join(dir, m.Vectors), nil)
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
