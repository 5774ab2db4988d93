package nonneural

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"repro/internal/dataset"
	"repro/internal/encoder"
)

const (
	gloveVocab   = "vocab.txt"
	gloveVectors = "vectors.f32"
	// gloveTokenizer names Tokenize's rules; bump it when they change.
	gloveTokenizer = "ptb-lower-v1"
)

// GloVeMeta is encoder.json of a glove_avg artifact.
type GloVeMeta struct {
	Type      string `json:"type"`
	Dim       int    `json:"dim"`
	Words     int    `json:"words"`
	Tokenizer string `json:"tokenizer"`
	Source    string `json:"source,omitempty"` // the vectors dataset, for provenance
	Vocab     string `json:"vocab"`
	Vectors   string `json:"vectors"`
}

// GloVeAvg averages word vectors.
type GloVeAvg struct {
	index map[string]int
	dim   int
	data  []float32
}

// NewGloVeAvg builds the encoder from a vector table.
func NewGloVeAvg(v *dataset.Vectors) *GloVeAvg {
	g := &GloVeAvg{index: make(map[string]int, len(v.Words)), dim: v.Dim, data: v.Data}
	for i, w := range v.Words {
		g.index[w] = i
	}
	return g
}

// WriteGloVeAvg writes a glove_avg artifact of the table v into dir.
func WriteGloVeAvg(dir string, v *dataset.Vectors, source string) error {
	if v.Dim <= 0 || len(v.Data) != len(v.Words)*v.Dim {
		return fmt.Errorf("glove_avg: %d words, dim %d and %d values do not agree", len(v.Words), v.Dim, len(v.Data))
	}
	var vb strings.Builder
	for _, w := range v.Words {
		if strings.ContainsAny(w, "\n\r") {
			return fmt.Errorf("glove_avg: word %q holds a line break", w)
		}
		vb.WriteString(w)
		vb.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, gloveVocab), []byte(vb.String()), 0o644); err != nil {
		return err
	}
	buf := make([]byte, 4*len(v.Data))
	for i, x := range v.Data {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
	}
	if err := os.WriteFile(filepath.Join(dir, gloveVectors), buf, 0o644); err != nil {
		return err
	}
	return encoder.WriteMeta(dir, GloVeMeta{
		Type: TypeGloVeAvg, Dim: v.Dim, Words: len(v.Words), Tokenizer: gloveTokenizer,
		Source: source, Vocab: gloveVocab, Vectors: gloveVectors,
	})
}

func openGloVe(dir string, raw json.RawMessage) (encoder.Encoder, error) {
	var m GloVeMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("glove_avg: %s: %v", filepath.Join(dir, "encoder.json"), err)
	}
	if m.Tokenizer != gloveTokenizer {
		return nil, fmt.Errorf("glove_avg: %s: tokenizer %q, this build has %q (rebuild the encoder)", dir, m.Tokenizer, gloveTokenizer)
	}
	if m.Dim <= 0 || m.Words <= 0 || m.Vocab == "" || m.Vectors == "" {
		return nil, fmt.Errorf("glove_avg: %s: encoder.json needs dim, words, vocab and vectors", dir)
	}
	vp := filepath.Join(dir, m.Vocab)
	f, err := os.Open(vp)
	if err != nil {
		return nil, fmt.Errorf("glove_avg: %v", err)
	}
	defer f.Close()
	var words []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		words = append(words, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("glove_avg: %s: %v", vp, err)
	}
	if len(words) != m.Words {
		return nil, fmt.Errorf("glove_avg: %s: %d words, encoder.json says %d", vp, len(words), m.Words)
	}
	xp := filepath.Join(dir, m.Vectors)
	b, err := os.ReadFile(xp)
	if err != nil {
		return nil, fmt.Errorf("glove_avg: %v", err)
	}
	if len(b) != 4*m.Words*m.Dim {
		return nil, fmt.Errorf("glove_avg: %s: %d bytes, want %d (words x dim x 4)", xp, len(b), 4*m.Words*m.Dim)
	}
	data := make([]float32, m.Words*m.Dim)
	for i := range data {
		data[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return NewGloVeAvg(&dataset.Vectors{Words: words, Dim: m.Dim, Data: data}), nil
}

// Dim is the vector size.
func (g *GloVeAvg) Dim() int { return g.dim }

// Encode returns the mean vector of each sentence's in-vocabulary tokens
// (accumulated in float64). A sentence with no known token gets the zero
// vector, as in SentEval's bow baseline; cosine treats it as dissimilar to
// everything.
func (g *GloVeAvg) Encode(ctx context.Context, sentences []string) ([][]float32, error) {
	out := make([][]float32, len(sentences))
	acc := make([]float64, g.dim)
	known := func(w string) bool { _, ok := g.index[w]; return ok }
	for i, s := range sentences {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		clear(acc)
		n := 0
		for _, t := range Tokenize(s, known) {
			j, ok := g.index[t]
			if !ok {
				continue
			}
			for k, x := range g.data[j*g.dim : (j+1)*g.dim] {
				acc[k] += float64(x)
			}
			n++
		}
		v := make([]float32, g.dim)
		if n > 0 {
			for k := range v {
				v[k] = float32(acc[k] / float64(n))
			}
		}
		out[i] = v
	}
	return out, nil
}

// Tokenize splits a sentence into lower-case word tokens the way the text
// GloVe 6B was trained on was tokenised (Stanford PTB tokeniser), since our
// STS text is untokenised and SentEval's bow baseline assumes Moses-split
// text that it splits on spaces:
//
//   - lower-case, split on white space;
//   - leading and trailing punctuation and symbols split off one rune per
//     token ("(hello)," -> "(", "hello", ")", ",");
//   - clitics split off as PTB does: "don't" -> "do" "n't", "it's" -> "it"
//     "'s" (also 're 've 'll 'd 'm; ’ is read as ');
//   - a remaining word with inner hyphens or slashes is kept whole when
//     known (GloVe has "well-known"), otherwise split into its parts.
//
// known reports whether a word has a vector; nil means every word does.
func Tokenize(s string, known func(string) bool) []string {
	if known == nil {
		known = func(string) bool { return true }
	}
	s = strings.ToLower(strings.ReplaceAll(s, "’", "'"))
	var out []string
	for _, chunk := range strings.Fields(s) {
		rs := []rune(chunk)
		i, j := 0, len(rs)
		for i < j && isEdgePunct(rs[i]) {
			out = append(out, string(rs[i]))
			i++
		}
		var tail []string
		for j > i && isEdgePunct(rs[j-1]) {
			tail = append(tail, string(rs[j-1]))
			j--
		}
		if i < j {
			core := string(rs[i:j])
			// "u.s." and "e.g.": keep a final dot that belongs to the word.
			if len(tail) > 0 && tail[len(tail)-1] == "." && strings.Contains(core, ".") && known(core+".") {
				core += "."
				tail = tail[:len(tail)-1]
			}
			out = append(out, splitWord(core, known)...)
		}
		for k := len(tail) - 1; k >= 0; k-- {
			out = append(out, tail[k])
		}
	}
	return out
}

var clitics = []string{"n't", "'s", "'re", "'ve", "'ll", "'d", "'m"}

func splitWord(w string, known func(string) bool) []string {
	for _, c := range clitics {
		if strings.HasSuffix(w, c) && len(w) > len(c) {
			return append(splitWord(w[:len(w)-len(c)], known), c)
		}
	}
	if known(w) || !strings.ContainsAny(w, "-/") {
		return []string{w}
	}
	var out []string
	for _, p := range strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '/' }) {
		out = append(out, splitWord(p, known)...)
	}
	return out
}

// isEdgePunct: punctuation or a symbol that PTB splits off a word's edge.
func isEdgePunct(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) }
