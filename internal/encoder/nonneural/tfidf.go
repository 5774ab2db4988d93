package nonneural

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"repro/internal/encoder"
)

const tfidfVocab = "vocab.tsv"

// TFIDFMeta is encoder.json of a tfidf artifact.
type TFIDFMeta struct {
	Type        string `json:"type"`
	Dim         int    `json:"dim"`
	Documents   int    `json:"documents"` // corpus size the idf was fitted on
	MaxFeatures int    `json:"max_features"`
	Tokenizer   string `json:"tokenizer"`
	Vocab       string `json:"vocab"` // TSV: term, document frequency, idf; row i is dimension i
}

const tfidfTokenizer = `sklearn-default: lowercase, (?u)\b\w\w+\b`

// TFIDF is a fitted TF-IDF vectoriser.
type TFIDF struct {
	Terms []string // sorted; Terms[i] is dimension i
	DF    []int
	IDF   []float64
	N     int // documents fitted on
	Max   int // max_features used (0: none)
	index map[string]int
}

// TFIDFTokens splits s as scikit-learn's default analyzer does: lower-case,
// then every maximal run of two or more word characters (Unicode letters,
// numbers, underscore; Python's \w) is a token. Go's strings.ToLower stands
// in for Python's str.lower (they differ only for a few special cases).
func TFIDFTokens(s string) []string {
	s = strings.ToLower(s)
	var out []string
	start := -1
	for i, r := range s {
		w := r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
		if w && start < 0 {
			start = i
		} else if !w && start >= 0 {
			if utf8.RuneCountInString(s[start:i]) >= 2 {
				out = append(out, s[start:i])
			}
			start = -1
		}
	}
	if start >= 0 && utf8.RuneCountInString(s[start:]) >= 2 {
		out = append(out, s[start:])
	}
	return out
}

// FitTFIDF fits vocabulary and idf on corpus (one document per sentence).
// With maxFeatures > 0 only the maxFeatures terms of highest total count in
// the corpus are kept, as TfidfVectorizer(max_features=...) does; ties at
// the cut are broken alphabetically (sklearn's order there is unspecified).
// Dimensions are the kept terms in alphabetical order (sklearn's order);
// idf = ln((1+n)/(1+df)) + 1 (smooth_idf=True).
func FitTFIDF(corpus []string, maxFeatures int) (*TFIDF, error) {
	if len(corpus) == 0 {
		return nil, fmt.Errorf("tfidf: empty corpus")
	}
	if maxFeatures < 0 {
		return nil, fmt.Errorf("tfidf: max_features %d is negative", maxFeatures)
	}
	df := map[string]int{}
	tf := map[string]int{}
	for _, s := range corpus {
		seen := map[string]bool{}
		for _, t := range TFIDFTokens(s) {
			tf[t]++
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	if len(df) == 0 {
		return nil, fmt.Errorf("tfidf: the corpus of %d sentences has no token of two or more word characters", len(corpus))
	}
	terms := make([]string, 0, len(df))
	for t := range df {
		terms = append(terms, t)
	}
	if maxFeatures > 0 && len(terms) > maxFeatures {
		sort.Slice(terms, func(i, j int) bool {
			if tf[terms[i]] != tf[terms[j]] {
				return tf[terms[i]] > tf[terms[j]]
			}
			return terms[i] < terms[j]
		})
		terms = terms[:maxFeatures]
	}
	sort.Strings(terms)
	m := &TFIDF{Terms: terms, DF: make([]int, len(terms)), IDF: make([]float64, len(terms)), N: len(corpus), Max: maxFeatures}
	for i, t := range terms {
		m.DF[i] = df[t]
		m.IDF[i] = math.Log(float64(1+m.N)/float64(1+df[t])) + 1
	}
	m.buildIndex()
	return m, nil
}

func (m *TFIDF) buildIndex() {
	m.index = make(map[string]int, len(m.Terms))
	for i, t := range m.Terms {
		m.index[t] = i
	}
}

// Dim is the vocabulary size.
func (m *TFIDF) Dim() int { return len(m.Terms) }

// Encode returns the L2-normalised tf-idf vector of each sentence (raw
// counts times idf); a sentence with no vocabulary term is the zero vector,
// as in sklearn.
func (m *TFIDF) Encode(ctx context.Context, sentences []string) ([][]float32, error) {
	out := make([][]float32, len(sentences))
	for i, s := range sentences {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		counts := map[int]int{}
		for _, t := range TFIDFTokens(s) {
			if j, ok := m.index[t]; ok {
				counts[j]++
			}
		}
		norm := 0.0
		for j, c := range counts {
			x := float64(c) * m.IDF[j]
			norm += x * x
		}
		v := make([]float32, len(m.Terms))
		if norm > 0 {
			norm = math.Sqrt(norm)
			for j, c := range counts {
				v[j] = float32(float64(c) * m.IDF[j] / norm)
			}
		}
		out[i] = v
	}
	return out, nil
}

// Write stores the fitted vectoriser as a tfidf artifact in dir.
func (m *TFIDF) Write(dir string) error {
	var b strings.Builder
	for i, t := range m.Terms {
		fmt.Fprintf(&b, "%s\t%d\t%s\n", t, m.DF[i], strconv.FormatFloat(m.IDF[i], 'g', -1, 64))
	}
	if err := os.WriteFile(filepath.Join(dir, tfidfVocab), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return encoder.WriteMeta(dir, TFIDFMeta{
		Type: TypeTFIDF, Dim: len(m.Terms), Documents: m.N, MaxFeatures: m.Max, Tokenizer: tfidfTokenizer, Vocab: tfidfVocab,
	})
}

func openTFIDF(dir string, raw json.RawMessage) (encoder.Encoder, error) {
	var meta TFIDFMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("tfidf: %s: %v", filepath.Join(dir, "encoder.json"), err)
	}
	if meta.Tokenizer != tfidfTokenizer {
		return nil, fmt.Errorf("tfidf: %s: tokenizer %q, this build has %q", dir, meta.Tokenizer, tfidfTokenizer)
	}
	p := filepath.Join(dir, meta.Vocab)
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("tfidf: %v", err)
	}
	defer f.Close()
	m := &TFIDF{N: meta.Documents, Max: meta.MaxFeatures}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) != 3 {
			return nil, fmt.Errorf("tfidf: %s:%d: %d TAB-separated columns, want 3 (term, df, idf)", p, line, len(fs))
		}
		df, err1 := strconv.Atoi(fs[1])
		idf, err2 := strconv.ParseFloat(fs[2], 64)
		if err1 != nil || err2 != nil || df <= 0 || idf <= 0 {
			return nil, fmt.Errorf("tfidf: %s:%d: bad df %q or idf %q", p, line, fs[1], fs[2])
		}
		if line > 1 && fs[0] <= m.Terms[len(m.Terms)-1] {
			return nil, fmt.Errorf("tfidf: %s:%d: term %q out of order", p, line, fs[0])
		}
		m.Terms = append(m.Terms, fs[0])
		m.DF = append(m.DF, df)
		m.IDF = append(m.IDF, idf)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tfidf: %s: %v", p, err)
	}
	if len(m.Terms) == 0 || len(m.Terms) != meta.Dim {
		return nil, fmt.Errorf("tfidf: %s: %d terms, encoder.json says dim %d", p, len(m.Terms), meta.Dim)
	}
	m.buildIndex()
	return m, nil
}
