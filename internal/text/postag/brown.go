package postag

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Sentence is a tagged sentence; Tags[i] tags Tokens[i].
type Sentence struct {
	Tokens []string `json:"tokens"`
	Tags   []string `json:"tags"`
}

// Document is one Brown Corpus document as stored in brown.jsonl.gz.
type Document struct {
	ID        string     `json:"id"`
	Category  string     `json:"category"`
	Sentences []Sentence `json:"sentences"`
}

// BrownFile is the Brown Corpus's path inside the data directory.
const BrownFile = "brown/brown.jsonl.gz"

// ReadBrown reads the gzip'd JSONL Brown Corpus (one document per line,
// original Brown tags). A malformed line is reported with file and line.
func ReadBrown(path string) ([]Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return decodeBrown(zr, path)
}

func decodeBrown(r io.Reader, name string) ([]Document, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<26)
	var docs []Document
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var d Document
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		for i, s := range d.Sentences {
			if len(s.Tokens) != len(s.Tags) {
				return nil, fmt.Errorf("%s:%d: document %s sentence %d has %d tokens but %d tags", name, line, d.ID, i+1, len(s.Tokens), len(s.Tags))
			}
		}
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", name, line+1, err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no documents", name)
	}
	return docs, nil
}

// Coarse tags: a universal-style tagset (Petrov et al. 2012) refined where
// the chunker needs it: MD apart from VERB (verb groups start with a
// modal), NEG for "not"/"n't", PROPN apart from NOUN, and possessive
// pronouns under DET (they open a noun phrase as a determiner does).
const (
	NOUN  = "NOUN"
	PROPN = "PROPN"
	PRON  = "PRON"
	DET   = "DET"
	ADJ   = "ADJ"
	NUM   = "NUM"
	VERB  = "VERB"
	MD    = "MD"
	ADV   = "ADV"
	ADP   = "ADP"
	PRT   = "PRT"
	CONJ  = "CONJ"
	NEG   = "NEG"
	PUNCT = "."
	X     = "X"
)

var coarse = map[string]string{
	"nn": NOUN, "nns": NOUN, "nr": NOUN, "nrs": NOUN,
	"np": PROPN, "nps": PROPN,
	"pn": PRON, "pp$$": PRON, "ppl": PRON, "ppls": PRON, "ppo": PRON, "pps": PRON,
	"ppss": PRON, "wpo": PRON, "wps": PRON, "ex": PRON,
	"at": DET, "dt": DET, "dti": DET, "dts": DET, "dtx": DET, "abn": DET, "abx": DET,
	"ap": DET, "wdt": DET, "pp$": DET, "wp$": DET,
	"jj": ADJ, "jjr": ADJ, "jjs": ADJ, "jjt": ADJ, "od": ADJ,
	"cd":  NUM,
	"md":  MD,
	"abl": ADV, "rb": ADV, "rbr": ADV, "rbt": ADV, "rn": ADV, "ql": ADV, "qlp": ADV, "wql": ADV, "wrb": ADV,
	"in": ADP,
	"rp": PRT, "to": PRT,
	"cc": CONJ, "cs": CONJ,
	"uh": X, "nil": X,
}

// Coarse maps an original Brown tag to the coarse tagset. Title ("-tl"),
// headline ("-hl") and citation ("-nc") suffixes and the possessive "$"
// are dropped, "fw-" foreign words become X, a contraction ("ppss+md")
// takes the tag of its first part, and a negated form ("md*", "doz*")
// keeps its base tag ("*" alone is NEG).
func Coarse(tag string) string {
	if strings.HasPrefix(tag, "fw-") {
		return X
	}
	t, _, _ := strings.Cut(tag, "+")
	for _, suf := range []string{"-tl", "-hl", "-nc"} {
		if i := strings.Index(t, suf); i > 0 {
			t = t[:i]
		}
	}
	if !strings.ContainsFunc(t, func(r rune) bool { return r >= 'a' && r <= 'z' }) {
		if t == "*" {
			return NEG
		}
		return PUNCT
	}
	t = strings.TrimSuffix(t, "*")
	if c, ok := coarse[t]; ok {
		return c
	}
	if c, ok := coarse[strings.TrimSuffix(t, "$")]; ok {
		return c
	}
	switch {
	case strings.HasPrefix(t, "vb"), strings.HasPrefix(t, "be"),
		strings.HasPrefix(t, "do"), strings.HasPrefix(t, "hv"):
		return VERB
	}
	return X
}

// NormalizeToken maps Brown's quote tokens (“ and ”) to the plain double
// quote that words.Tokenize produces, so the tagger sees the same symbols
// in training and in use.
func NormalizeToken(tok string) string {
	if tok == "``" || tok == "''" {
		return `"`
	}
	return tok
}

// CoarseSentences flattens documents into sentences with coarse tags and
// normalised tokens.
func CoarseSentences(docs []Document) []Sentence {
	var out []Sentence
	for _, d := range docs {
		for _, s := range d.Sentences {
			c := Sentence{Tokens: make([]string, len(s.Tokens)), Tags: make([]string, len(s.Tags))}
			for i := range s.Tokens {
				c.Tokens[i] = NormalizeToken(s.Tokens[i])
				c.Tags[i] = Coarse(s.Tags[i])
			}
			out = append(out, c)
		}
	}
	return out
}
