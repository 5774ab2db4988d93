package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"repro/internal/rows"
)

// lineReader yields the lines of a file (gzip-decompressed when gz) with
// their 1-based numbers, so every reader can say where a problem is.
type lineReader struct {
	name string
	f    *os.File
	zr   *gzip.Reader
	sc   *bufio.Scanner
	line int
}

func openLines(path string, gz bool) (*lineReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *PathError names the file
	}
	lr := &lineReader{name: path, f: f}
	var r io.Reader = f
	if gz {
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%s: empty file", path)
			}
			return nil, fmt.Errorf("%s: not a gzip file: %v", path, err)
		}
		lr.zr, r = zr, zr
	}
	lr.sc = bufio.NewScanner(r)
	lr.sc.Buffer(make([]byte, 0, 1<<16), 1<<26) // Brown/BBC documents are one long line each
	return lr, nil
}

// next returns the next line without its newline (and without a CR before it).
func (lr *lineReader) next() ([]byte, bool) {
	if !lr.sc.Scan() {
		return nil, false
	}
	lr.line++
	return bytes.TrimSuffix(lr.sc.Bytes(), []byte{'\r'}), true
}

// err reports a read error (including a corrupt gzip stream) at the line
// where it happened.
func (lr *lineReader) err() error {
	if err := lr.sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %v", lr.name, lr.line+1, err)
	}
	return nil
}

func (lr *lineReader) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", lr.name, lr.line, fmt.Sprintf(format, args...))
}

func (lr *lineReader) close() {
	if lr.zr != nil {
		lr.zr.Close()
	}
	lr.f.Close()
}

// readTSV reads a TAB-separated file with the given header, calling row for
// each data line with its fields. Fields are split on TAB only: the STS and
// NLI files hold bare double quotes, so CSV quoting rules must not apply.
func readTSV(path string, header []string, row func(lr *lineReader, fields []string) error) (int, error) {
	lr, err := openLines(path, false)
	if err != nil {
		return 0, err
	}
	defer lr.close()
	want := strings.Join(header, "\t")
	first, ok := lr.next()
	if !ok {
		if err := lr.err(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%s: empty file (want the header %q)", path, want)
	}
	if string(first) != want {
		return 0, lr.errorf("header is %q, want %q", first, want)
	}
	n := 0
	for {
		b, ok := lr.next()
		if !ok {
			break
		}
		fields := strings.Split(string(b), "\t")
		if len(fields) != len(header) {
			return 0, lr.errorf("%d TAB-separated columns, want %d (%s)", len(fields), len(header), strings.Join(header, ", "))
		}
		if err := row(lr, fields); err != nil {
			return 0, err
		}
		n++
	}
	if err := lr.err(); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: no rows after the header", path)
	}
	return n, nil
}

// ReadSTS reads an STS file (header score<TAB>sentence1<TAB>sentence2),
// labelling its pairs with task and subset. A score must be a finite
// number; sentences must not be empty.
func ReadSTS(path, task, subset string) ([]rows.STSPair, error) {
	var out []rows.STSPair
	_, err := readTSV(path, []string{"score", "sentence1", "sentence2"}, func(lr *lineReader, f []string) error {
		s, err := strconv.ParseFloat(f[0], 64)
		if err != nil || math.IsNaN(s) || math.IsInf(s, 0) {
			return lr.errorf("score %q is not a number", f[0])
		}
		if f[1] == "" || f[2] == "" {
			return lr.errorf("empty sentence")
		}
		out = append(out, rows.STSPair{Task: task, Subset: subset, Sentence1: f[1], Sentence2: f[2], Score: s})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadNLI reads an NLI triplet file (header
// sent0<TAB>entailment<TAB>contradiction). The anchor and positive must be
// non-empty; an empty contradiction means no hard negative.
func ReadNLI(path string) ([]rows.Triplet, error) {
	var out []rows.Triplet
	_, err := readTSV(path, []string{"sent0", "entailment", "contradiction"}, func(lr *lineReader, f []string) error {
		if f[0] == "" || f[1] == "" {
			return lr.errorf("empty sent0 or entailment")
		}
		out = append(out, rows.Triplet{Anchor: f[0], Positive: f[1], Negative: f[2]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readJSONLGz decodes a gzip JSONL file of T strictly (unknown keys are an
// error, so a file of the wrong kind fails at line 1), checking each row.
func readJSONLGz[T any](path string, check func(*T) error) ([]T, error) {
	lr, err := openLines(path, true)
	if err != nil {
		return nil, err
	}
	defer lr.close()
	var out []T
	for {
		b, ok := lr.next()
		if !ok {
			break
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, lr.errorf("blank line")
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, lr.errorf("%v", err)
		}
		if dec.More() {
			return nil, lr.errorf("more than one JSON value on the line")
		}
		if err := check(&v); err != nil {
			return nil, lr.errorf("%v", err)
		}
		out = append(out, v)
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty file (no rows)", path)
	}
	return out, nil
}

func nonEmpty(what string, ss []string) error {
	if len(ss) == 0 {
		return fmt.Errorf("no %s", what)
	}
	for i, s := range ss {
		if s == "" {
			return fmt.Errorf("%s %d is empty", what, i+1)
		}
	}
	return nil
}

// BBCDoc is one BBC News article. DupOf names an earlier article with an
// identical body ("" when there is none).
type BBCDoc struct {
	ID        string   `json:"id"`
	Category  string   `json:"category"`
	Headline  string   `json:"headline"`
	Sentences []string `json:"sentences"`
	DupOf     string   `json:"dup_of"`
}

// ReadBBC reads the BBC News JSONL (gzip) file.
func ReadBBC(path string) ([]BBCDoc, error) {
	return readJSONLGz(path, func(d *BBCDoc) error {
		if d.ID == "" || d.Category == "" || d.Headline == "" {
			return fmt.Errorf("missing id, category or headline")
		}
		return nonEmpty("sentence", d.Sentences)
	})
}

// ReadRerank reads a reranking JSONL (gzip) file: {"id", "query",
// "positive": [...], "negative": [...]}.
func ReadRerank(path string) ([]rows.RerankQuery, error) {
	return readJSONLGz(path, func(q *rows.RerankQuery) error {
		if q.ID == "" || q.Query == "" {
			return fmt.Errorf("missing id or query")
		}
		for _, c := range append(append([]string(nil), q.Positive...), q.Negative...) {
			if c == "" {
				return fmt.Errorf("empty candidate")
			}
		}
		if len(q.Positive)+len(q.Negative) == 0 {
			return fmt.Errorf("query %s has no candidates", q.ID)
		}
		return nil
	})
}

// BrownSentence is one tagged sentence: Tokens[i] has tag Tags[i] (Brown
// tagset, lower case).
type BrownSentence struct {
	Tokens []string `json:"tokens"`
	Tags   []string `json:"tags"`
}

// Text joins the tokens with spaces, writing the corpus's quote tokens (two
// backquotes, two apostrophes) as a plain double quote so the sentence reads
// like ordinary text.
func (s BrownSentence) Text() string {
	ts := make([]string, len(s.Tokens))
	for i, t := range s.Tokens {
		switch t {
		case "``", "''":
			t = `"`
		}
		ts[i] = t
	}
	return strings.Join(ts, " ")
}

// BrownDoc is one of the 500 Brown Corpus documents.
type BrownDoc struct {
	ID        string          `json:"id"`
	Category  string          `json:"category"`
	Sentences []BrownSentence `json:"sentences"`
}

// ReadBrown reads the Brown Corpus JSONL (gzip) file.
func ReadBrown(path string) ([]BrownDoc, error) {
	return readJSONLGz(path, func(d *BrownDoc) error {
		if d.ID == "" || d.Category == "" {
			return fmt.Errorf("missing id or category")
		}
		if len(d.Sentences) == 0 {
			return fmt.Errorf("document %s has no sentences", d.ID)
		}
		for i, s := range d.Sentences {
			if len(s.Tokens) == 0 || len(s.Tokens) != len(s.Tags) {
				return fmt.Errorf("document %s sentence %d: %d tokens and %d tags (want equal, non-zero)", d.ID, i+1, len(s.Tokens), len(s.Tags))
			}
		}
		return nil
	})
}

// ReadLines reads a gzip text file of one sentence per line. A blank line
// is an error (the corpora here have none, so one means damage).
func ReadLines(path string) ([]string, error) {
	lr, err := openLines(path, true)
	if err != nil {
		return nil, err
	}
	defer lr.close()
	var out []string
	for {
		b, ok := lr.next()
		if !ok {
			break
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, lr.errorf("blank line")
		}
		out = append(out, string(b))
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty file (no lines)", path)
	}
	return out, nil
}

// Vectors is a word-vector table: row i of Data (Dim values) belongs to
// Words[i].
type Vectors struct {
	Words []string
	Dim   int
	Data  []float32
}

// Vector returns the row of word i.
func (v *Vectors) Vector(i int) []float32 { return v.Data[i*v.Dim : (i+1)*v.Dim] }

// ReadGloVe reads GloVe text vectors (gzip): "word v1 ... vD" per line,
// separated by single spaces. Every line must have the dimension of the
// first; words must be unique.
func ReadGloVe(path string) (*Vectors, error) {
	lr, err := openLines(path, true)
	if err != nil {
		return nil, err
	}
	defer lr.close()
	v := &Vectors{}
	seen := map[string]int{}
	for {
		b, ok := lr.next()
		if !ok {
			break
		}
		fields := strings.Split(string(b), " ")
		if len(fields) < 2 || fields[0] == "" {
			return nil, lr.errorf("want a word and its vector, got %d space-separated fields", len(fields))
		}
		if v.Dim == 0 {
			v.Dim = len(fields) - 1
		} else if len(fields)-1 != v.Dim {
			return nil, lr.errorf("%d values, want %d (the dimension of line 1)", len(fields)-1, v.Dim)
		}
		w := fields[0]
		if prev, dup := seen[w]; dup {
			return nil, lr.errorf("word %q repeats line %d", w, prev)
		}
		seen[w] = lr.line
		for j, s := range fields[1:] {
			x, err := strconv.ParseFloat(s, 32)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, lr.errorf("value %d of %q is %q, not a number", j+1, w, s)
			}
			v.Data = append(v.Data, float32(x))
		}
		v.Words = append(v.Words, w)
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	if len(v.Words) == 0 {
		return nil, fmt.Errorf("%s: empty file (no vectors)", path)
	}
	return v, nil
}
