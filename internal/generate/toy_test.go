package generate

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// bigram is a toy language model for the engine's tests: the logits of
// the next token are a fixed row of a V x V table indexed by the last
// token, so every expected output can be worked out by hand.
type bigram struct {
	v      int
	table  [][]float32
	maxLen int
	starts int // Start calls, to check that prompts are read once
}

func newBigram(v int, seed uint64) *bigram {
	r := rand.New(rand.NewPCG(seed, 1))
	b := &bigram{v: v}
	for i := 0; i < v; i++ {
		row := make([]float32, v)
		for j := range row {
			row[j] = float32(r.NormFloat64() * 2)
		}
		b.table = append(b.table, row)
	}
	return b
}

func (b *bigram) VocabSize() int { return b.v }
func (b *bigram) MaxLength() int { return b.maxLen }

func (b *bigram) Start(prompts [][]int, capacity int) (Session, error) {
	b.starts++
	s := &bigramSession{m: b, cap: capacity}
	for i, p := range prompts {
		if len(p) == 0 || len(p) > capacity {
			return nil, fmt.Errorf("bigram: prompt %d of %d tokens, capacity %d", i, len(p), capacity)
		}
		s.seqs = append(s.seqs, append([]int(nil), p...))
	}
	s.fill()
	return s, nil
}

type bigramSession struct {
	m      *bigram
	cap    int
	seqs   [][]int
	logits []float32
}

func (s *bigramSession) fill() {
	s.logits = s.logits[:0]
	for _, q := range s.seqs {
		s.logits = append(s.logits, s.m.table[q[len(q)-1]]...)
	}
}

func (s *bigramSession) Len() int          { return len(s.seqs) }
func (s *bigramSession) Logits() []float32 { return s.logits }

func (s *bigramSession) Append(tokens []int) error {
	if len(tokens) != len(s.seqs) {
		return fmt.Errorf("bigram: %d tokens for %d sequences", len(tokens), len(s.seqs))
	}
	for i, t := range tokens {
		if len(s.seqs[i]) >= s.cap {
			return fmt.Errorf("bigram: sequence %d is full", i)
		}
		s.seqs[i] = append(s.seqs[i], t)
	}
	s.fill()
	return nil
}

func (s *bigramSession) Select(rows []int) error {
	var seqs [][]int
	for _, r := range rows {
		seqs = append(seqs, append([]int(nil), s.seqs[r]...))
	}
	s.seqs = seqs
	s.fill()
	return nil
}

// argmax is the greedy choice.
func argmax(row []float32) int {
	best := 0
	for j, v := range row {
		if v > row[best] {
			best = j
		}
	}
	return best
}

// softmax64 is the reference softmax of a row.
func softmax64(row []float32) []float64 {
	mx := math.Inf(-1)
	for _, v := range row {
		mx = math.Max(mx, float64(v))
	}
	p := make([]float64, len(row))
	var z float64
	for j, v := range row {
		p[j] = math.Exp(float64(v) - mx)
		z += p[j]
	}
	for j := range p {
		p[j] /= z
	}
	return p
}
