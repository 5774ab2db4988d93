package dino

import (
	"context"
	"strings"
	"testing"

	"repro/internal/generate"
)

// charLM is a toy model over bytes: after a prompt it writes `word`
// (then spaces) one byte per step, then the quote when quote is set; the
// prompt text is ignored, so every draw is the same and tries can be
// counted exactly.
type charLM struct {
	word  string
	quote bool
}

func (m *charLM) VocabSize() int { return 128 }
func (m *charLM) MaxLength() int { return 0 }
func (m *charLM) Start(prompts [][]int, capacity int) (generate.Session, error) {
	s := &charSession{m: m}
	for range prompts {
		s.pos = append(s.pos, 0)
	}
	return s, nil
}

type charSession struct {
	m   *charLM
	pos []int
}

func (s *charSession) Len() int { return len(s.pos) }
func (s *charSession) Logits() []float32 {
	out := make([]float32, 128*len(s.pos))
	for i, p := range s.pos {
		next := byte(' ')
		switch {
		case p < len(s.m.word):
			next = s.m.word[p]
		case s.m.quote:
			next = '"'
		}
		out[i*128+int(next)] = 50
	}
	return out
}
func (s *charSession) Append(tokens []int) error {
	for i := range s.pos {
		s.pos[i]++
	}
	return nil
}
func (s *charSession) Select(rows []int) error {
	pos := make([]int, len(rows))
	for i, r := range rows {
		pos[i] = s.pos[r]
	}
	s.pos = pos
	return nil
}

func charGenerator(m *charLM) LM {
	enc := func(t string) []int {
		ids := make([]int, len(t))
		for i := range t {
			ids[i] = int(t[i] & 127)
		}
		return ids
	}
	dec := func(ids []int) string {
		var b strings.Builder
		for _, id := range ids {
			b.WriteByte(byte(id))
		}
		return b.String()
	}
	return LM{Model: m, Prompt: enc, Encode: enc, Decode: dec, EOS: -1}
}

func config(lambda float64) Config {
	return Config{Template: Template, Labels: Labels, X2PerX1: 2, MaxTries: 5, Sampling: generate.Sampling{Temperature: 1, TopK: 5, TopP: 0.9},
		MaxNewTokens: 12, Quote: `"`, Lambda: lambda, Epsilon: 0.01, Seed: 1, BatchSize: 7}
}

// TestGeneratePairsTries: a model that closes the quote gives two x2 per
// (x1, y) from the first try; one that never does is tried five times per
// (x1, y), every draw counted as dropped and every cell short.
func TestGeneratePairsTries(t *testing.T) {
	t.Parallel()
	x1s := []string{"A man plays.", "A dog runs.", "Rain falls."}
	for _, lambda := range []float64{0, 100} {
		ps, st, err := GeneratePairs(context.Background(), charGenerator(&charLM{word: "Hello there", quote: true}), x1s, config(lambda))
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 18 {
			t.Fatalf("lambda %v: %d pairs, want 3 x1 x 3 labels x 2", lambda, len(ps))
		}
		for i, p := range ps {
			if p.Sentence2 != "Hello there" || p.Try != 0 || p.Sentence1 != x1s[i/6] || p.Label != Labels[(i/2)%3].Value {
				t.Errorf("lambda %v, pair %d: %+v", lambda, i, p)
			}
		}
		for _, s := range st {
			if s.Drawn != 6 || s.Kept != 6 || s.NoQuote+s.Short+s.Surplus+s.Empty != 0 {
				t.Errorf("lambda %v: stats %+v", lambda, s)
			}
		}
	}
	ps, st, err := GeneratePairs(context.Background(), charGenerator(&charLM{word: "Never closed"}), x1s, config(100))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 0 {
		t.Errorf("%d pairs without a quote", len(ps))
	}
	for _, s := range st {
		// 3 x1 x 5 tries x 2 draws, all without a quote; 3 cells short.
		if s.Drawn != 30 || s.NoQuote != 30 || s.Short != 3 {
			t.Errorf("no quote: stats %+v", s)
		}
	}
}

// TestGenerateBadInput: empty X1, an empty sentence, a negative lambda, a
// template without x1 -- errors before any generation.
func TestGenerateBadInput(t *testing.T) {
	t.Parallel()
	g := charGenerator(&charLM{word: "x", quote: true})
	bad := config(100)
	bad.Lambda = -1
	noX := config(100)
	noX.Template = "Task: [I]"
	for _, tc := range []struct {
		x1s  []string
		c    Config
		want string
	}{
		{nil, config(100), "no input sentences x1"},
		{[]string{"a", " "}, config(100), "input sentence 2 is empty"},
		{[]string{"a"}, bad, "lambda -1 must be a finite number >= 0"},
		{[]string{"a"}, noX, "has no [X] placeholder"},
	} {
		_, _, err := GeneratePairs(context.Background(), g, tc.x1s, tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.x1s, err, tc.want)
		}
	}
	xs, st, err := GenerateX1(context.Background(), g, X1Config{Template: Template, Labels: Labels, Count: 3, MaxRounds: 2,
		Sampling: generate.Sampling{Temperature: 1, TopP: 0.9}, MaxNewTokens: 5, Quote: `"`, Seed: 1})
	// Every draw is "x": one distinct sentence, the rest duplicates (3 draws, then the 2 missing).
	if err != nil || len(xs) != 1 || st.Duplicate != 4 || st.Drawn != 5 || st.Rounds != 2 {
		t.Errorf("x1: %v %+v %v", xs, st, err)
	}
}
