package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"repro/internal/rows"
)

// The papers' own training data is not in the data directory (see the
// catalogue's StandIn): a paper profile reads a local copy, named by -var,
// in the format its publisher distributes. The readers below take those
// files as published -- header, quoting and column order -- so a user copies
// the download into place and converts nothing. Unlike the catalogue's
// files they have no pinned checksum: the runner hashes them into the
// reading stage's key.

// RowError is a bad row or a file in the wrong format: the file, the 1-based
// line (0 when the problem is the file as a whole) and what is wrong.
type RowError struct {
	Path   string
	Line   int
	Reason string
}

func (e *RowError) Error() string {
	if e.Line == 0 {
		return e.Path + ": " + e.Reason
	}
	return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Reason)
}

// openMaybeGz opens path, decompressing it when it starts with gzip's magic
// bytes: the published files come both ways (wiki1m as .txt, C4 as
// .json.gz, MTEB's sets as .jsonl.gz).
func openMaybeGz(path string) (io.Reader, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err // *PathError names the file
	}
	br := bufio.NewReader(f)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, &RowError{Path: path, Reason: fmt.Sprintf("not a gzip file: %v", err)}
		}
		return zr, func() { zr.Close(); f.Close() }, nil
	}
	return br, func() { f.Close() }, nil
}

// scanLines calls line for each line of path (gzip or plain) with its
// 1-based number, without the newline or a CR before it.
func scanLines(path string, line func(n int, b []byte) error) error {
	r, done, err := openMaybeGz(path)
	if err != nil {
		return err
	}
	defer done()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<26)
	n := 0
	for sc.Scan() {
		n++
		if err := line(n, bytes.TrimSuffix(sc.Bytes(), []byte{'\r'})); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return &RowError{Path: path, Line: n + 1, Reason: err.Error()}
	}
	if n == 0 {
		return &RowError{Path: path, Reason: "empty file"}
	}
	return nil
}

// SimCSENLIHeader is the header of SimCSE's nli_for_simcse.csv.
var SimCSENLIHeader = []string{"sent0", "sent1", "hard_neg"}

// ReadSimCSENLI reads SimCSE's NLI training set as published
// (nli_for_simcse.csv: comma-separated, RFC 4180 quoting, header
// sent0,sent1,hard_neg; 275,601 rows of SNLI+MNLI train premise,
// entailment, contradiction). Every field must be non-empty.
func ReadSimCSENLI(path string) ([]rows.Triplet, error) {
	r, done, err := openMaybeGz(path)
	if err != nil {
		return nil, err
	}
	defer done()
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // counted here, to say which columns are wanted
	cr.ReuseRecord = true
	var out []rows.Triplet
	for first := true; ; first = false {
		rec, err := cr.Read()
		if err == io.EOF {
			if first {
				return nil, &RowError{Path: path, Reason: "empty file (want the header sent0,sent1,hard_neg)"}
			}
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, &RowError{Path: path, Line: pe.StartLine, Reason: "not CSV: " + pe.Err.Error()}
			}
			return nil, &RowError{Path: path, Reason: err.Error()}
		}
		line, _ := cr.FieldPos(0)
		if first {
			rec[0] = strings.TrimPrefix(rec[0], "\ufeff")
			if strings.Join(rec, ",") != strings.Join(SimCSENLIHeader, ",") {
				return nil, &RowError{Path: path, Line: line, Reason: fmt.Sprintf("header is %q, want %q (SimCSE's nli_for_simcse.csv)", strings.Join(rec, ","), strings.Join(SimCSENLIHeader, ","))}
			}
			continue
		}
		if len(rec) != 3 {
			return nil, &RowError{Path: path, Line: line, Reason: fmt.Sprintf("%d comma-separated fields, want 3 (sent0, sent1, hard_neg)", len(rec))}
		}
		for i, s := range rec {
			if strings.TrimSpace(s) == "" {
				return nil, &RowError{Path: path, Line: line, Reason: "empty " + SimCSENLIHeader[i]}
			}
		}
		out = append(out, rows.Triplet{Anchor: rec[0], Positive: rec[1], Negative: rec[2]})
	}
	if len(out) == 0 {
		return nil, &RowError{Path: path, Reason: "no rows after the header"}
	}
	return out, nil
}

// ReadWiki1M reads SimCSE's wiki1m_for_simcse.txt as published: one
// sentence per line, UTF-8 (gzip-compressed is accepted too). A blank line,
// invalid UTF-8 or a NUL byte is a bad row; a first line that is a CSV or
// JSON row says the file is another dataset.
func ReadWiki1M(path string) ([]string, error) {
	var out []string
	err := scanLines(path, func(n int, b []byte) error {
		if n == 1 {
			if err := notLines(path, b); err != nil {
				return err
			}
		}
		switch {
		case bytes.IndexByte(b, 0) >= 0:
			return &RowError{Path: path, Line: n, Reason: "NUL byte: not a text file of one sentence a line"}
		case !utf8.Valid(b):
			return &RowError{Path: path, Line: n, Reason: "not UTF-8"}
		case len(bytes.TrimSpace(b)) == 0:
			return &RowError{Path: path, Line: n, Reason: "blank line (want one sentence a line)"}
		}
		out = append(out, string(b))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadUSEBTrain reads an unlabelled training set as the Unsupervised
// Sentence Embedding Benchmark publishes it (USEB, TSDAE's data:
// data-train/{askubuntu,cqadupstack,twitter,scidocs}/unsupervised/train.txt),
// the in-domain sentences GenSE's domain adaptation reads (section 3.1:
// "we follow TS-DAE to use unlabelled training set as in-domain
// sentences"): one sentence a line, UTF-8 (gzip-compressed is accepted
// too). Blank lines are skipped (the file is read as split lines, an empty
// last one included, by the code that uses it); invalid UTF-8 or a NUL
// byte is a bad row; a first line that is a CSV or JSON row says the file
// is another dataset.
func ReadUSEBTrain(path string) ([]string, error) {
	var out []string
	err := scanLines(path, func(n int, b []byte) error {
		if n == 1 {
			if err := notLines(path, b); err != nil {
				return err
			}
		}
		switch {
		case bytes.IndexByte(b, 0) >= 0:
			return &RowError{Path: path, Line: n, Reason: "NUL byte: not a text file of one sentence a line"}
		case !utf8.Valid(b):
			return &RowError{Path: path, Line: n, Reason: "not UTF-8"}
		case len(bytes.TrimSpace(b)) == 0:
			return nil
		}
		out = append(out, string(b))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &RowError{Path: path, Reason: "no sentence: every line is blank"}
	}
	return out, nil
}

// notLines recognises, by its first line, a file of another dataset given
// where sentences one a line are wanted.
func notLines(path string, first []byte) error {
	s := strings.TrimPrefix(string(first), "\ufeff")
	switch {
	case s == strings.Join(SimCSENLIHeader, ","):
		return &RowError{Path: path, Line: 1, Reason: "this is SimCSE's NLI CSV (header sent0,sent1,hard_neg), not one sentence a line"}
	case strings.HasPrefix(s, "{\""):
		return &RowError{Path: path, Line: 1, Reason: "a JSON object: JSON lines, not one sentence a line"}
	}
	return nil
}

// c4Doc is one line of C4 as allenai/c4 publishes it
// (en/c4-train.NNNNN-of-01024.json.gz).
type c4Doc struct {
	Text      string `json:"text"`
	Timestamp string `json:"timestamp"`
	URL       string `json:"url"`
}

// ReadC4 reads a C4 file as allenai/c4 publishes it (JSON lines, usually
// gzip-compressed: {"text", "timestamp", "url"}; other keys are an error,
// so a file of another kind fails at its first line) and returns the lines
// of every document's text, whitespace-normalised, in file order. C4's
// cleaning kept only lines ending in terminal punctuation, so a text line
// is a sentence or a few: which one GenSE took as "a sentence" its paper
// does not say (the experiment declares the reading).
func ReadC4(path string) ([]string, error) {
	var out []string
	err := scanLines(path, func(n int, b []byte) error {
		var d c4Doc
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			return &RowError{Path: path, Line: n, Reason: fmt.Sprintf("not a C4 JSON line {\"text\", \"timestamp\", \"url\"}: %v", err)}
		}
		if dec.More() {
			return &RowError{Path: path, Line: n, Reason: "more than one JSON value on the line"}
		}
		if strings.TrimSpace(d.Text) == "" || d.URL == "" {
			return &RowError{Path: path, Line: n, Reason: "missing text or url"}
		}
		for _, l := range strings.Split(d.Text, "\n") {
			if l = strings.Join(strings.Fields(l), " "); l != "" {
				out = append(out, l)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MINDNews is one row of MIND's news.tsv.
type MINDNews struct {
	ID, Category, SubCategory, Title, Abstract, URL string
}

// MINDColumns are news.tsv's columns, in order (the file has no header).
var MINDColumns = []string{"News ID", "Category", "SubCategory", "Title", "Abstract", "URL", "Title Entities", "Abstract Entities"}

var mindID = regexp.MustCompile(`^N[0-9]+$`)

// ReadMINDNews reads MIND's news.tsv as published (Wu et al. 2020): eight
// TAB-separated columns, no header, no quoting (MINDColumns). The ID must
// be N and digits, the title non-empty and the entity columns JSON arrays;
// the abstract may be empty (many are).
func ReadMINDNews(path string) ([]MINDNews, error) {
	var out []MINDNews
	err := scanLines(path, func(n int, b []byte) error {
		f := strings.Split(string(b), "\t")
		if len(f) != len(MINDColumns) {
			return &RowError{Path: path, Line: n, Reason: fmt.Sprintf("%d TAB-separated columns, want %d (%s)", len(f), len(MINDColumns), strings.Join(MINDColumns, ", "))}
		}
		if !mindID.MatchString(f[0]) {
			return &RowError{Path: path, Line: n, Reason: fmt.Sprintf("news ID %q is not N and digits (news.tsv has no header row)", f[0])}
		}
		if strings.TrimSpace(f[3]) == "" {
			return &RowError{Path: path, Line: n, Reason: "empty title"}
		}
		for _, i := range []int{6, 7} {
			if !strings.HasPrefix(f[i], "[") || !json.Valid([]byte(f[i])) {
				return &RowError{Path: path, Line: n, Reason: fmt.Sprintf("%s %q is not a JSON array", MINDColumns[i], f[i])}
			}
		}
		out = append(out, MINDNews{ID: f[0], Category: f[1], SubCategory: f[2], Title: f[3], Abstract: f[4], URL: f[5]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// mtebRerank is one line of an MTEB reranking set's test.jsonl.gz.
type mtebRerank struct {
	Query    string   `json:"query"`
	Positive []string `json:"positive"`
	Negative []string `json:"negative"`
}

// ReadMTEBRerank reads a reranking set as MTEB publishes it (e.g.
// mteb/askubuntudupquestions-reranking test.jsonl.gz: {"query", "positive",
// "negative"} a line). Queries are numbered by line ("1", "2", ...), as the
// file has no ids.
func ReadMTEBRerank(path string) ([]rows.RerankQuery, error) {
	var out []rows.RerankQuery
	err := scanLines(path, func(n int, b []byte) error {
		var q mtebRerank
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			return &RowError{Path: path, Line: n, Reason: fmt.Sprintf("not an MTEB reranking line {\"query\", \"positive\", \"negative\"}: %v", err)}
		}
		if q.Query == "" {
			return &RowError{Path: path, Line: n, Reason: "missing query"}
		}
		for _, c := range append(append([]string(nil), q.Positive...), q.Negative...) {
			if c == "" {
				return &RowError{Path: path, Line: n, Reason: "empty candidate"}
			}
		}
		if len(q.Positive)+len(q.Negative) == 0 {
			return &RowError{Path: path, Line: n, Reason: "no candidates"}
		}
		out = append(out, rows.RerankQuery{ID: strconv.Itoa(n), Query: q.Query, Positive: q.Positive, Negative: q.Negative})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sentenceEnd is the data directory's sentence rule (README, news/bbc):
// a split after . ! or ? (and closing quotes or brackets) followed by
// whitespace and an optional opening quote or bracket before a capital
// letter or a digit.
var sentenceEnd = regexp.MustCompile(`[.!?]["'’”)\]]*\s+["'‘“(\[]?[A-Z0-9]`)

// abbreviations end a token with a dot that does not end a sentence (the
// data directory's list for BBC).
var abbreviations = map[string]bool{}

func init() {
	for _, a := range strings.Fields("Mr Mrs Ms Dr St Prof Gen Sen Rep Gov Lt Col Sgt Capt Rev Jr Sr No vs v Inc Ltd Co Corp Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec eg ie etc approx Mt Ft") {
		abbreviations[a] = true
	}
}

// SplitSentences splits a paragraph into sentences by the rule the data
// directory's BBC sentences were split with (its README): so that MIND's
// abstracts, read in place of BBC's bodies, are split as BBC's were.
// Whitespace is normalised first.
func SplitSentences(text string) []string {
	text = strings.Join(strings.Fields(text), " ")
	var out []string
	start := 0
	for _, m := range sentenceEnd.FindAllStringIndex(text, -1) {
		// m spans the punctuation .. the first letter of the next sentence;
		// the sentence ends before the whitespace.
		end := m[0] + strings.IndexAny(text[m[0]:m[1]], " \t\n")
		if end < start || text[m[0]] == '.' && abbreviated(text[start:m[0]]) {
			continue
		}
		out = append(out, text[start:end])
		start = end + 1
	}
	if rest := strings.TrimSpace(text[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// abbreviated reports whether the last token of s (before a dot) is an
// initial, a dotted abbreviation or one of the listed abbreviations.
func abbreviated(s string) bool {
	tok := s
	if i := strings.LastIndexAny(s, " (\"'‘“"); i >= 0 {
		tok = s[i+1:]
	}
	if len(tok) == 1 && tok[0] >= 'A' && tok[0] <= 'Z' {
		return true
	}
	return strings.Contains(tok, ".") || abbreviations[tok]
}
