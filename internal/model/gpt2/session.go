package gpt2

import (
	"fmt"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/generate"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/backend"
	"repro/internal/tensor/kernel"
)

// Session is a batch of sequences being decoded (generate.Session): per
// layer a key and a value cache of capacity rows per sequence, the number
// of tokens each sequence holds, and the logits of its next position.
type Session struct {
	m *Model
	// packed holds every weight packed for the CPU sgemm, when the CPU
	// backend runs (nil otherwise): decoding multiplies each weight by a
	// few rows per step, and packing it every time would cost as much as
	// the products.
	packed map[*nn.Param]*kernel.PackedB
	cap    int
	n      int         // sequences
	rows   int         // sequences the caches have room for (>= n)
	lens   []int       // tokens held by each sequence
	k, v   [][]float32 // per layer, [rows*cap, D]
	logits []float32   // [n, V]
}

var _ generate.Model = (*Model)(nil)
var _ generate.Session = (*Session)(nil)

// Start reads the prompts (one sequence each; lengths may differ) in one
// padded causal pass, fills the caches and computes each sequence's
// next-token logits (generate.Model).
func (m *Model) Start(prompts [][]int, capacity int) (generate.Session, error) {
	c := m.Config
	b, err := m.startBatch(prompts, capacity)
	if err != nil {
		return nil, err
	}
	s := &Session{m: m, cap: capacity, n: b.B, rows: b.B, lens: append([]int(nil), b.Lens...)}
	if err := s.pack(); err != nil {
		return nil, err
	}
	D := c.NEmbd
	s.k, s.v = make([][]float32, c.NLayer), make([][]float32, c.NLayer)
	for i := range s.k {
		s.k[i] = make([]float32, b.B*capacity*D)
		s.v[i] = make([]float32, b.B*capacity*D)
	}
	spec := tensor.AttentionSpec{Batch: b.B, Heads: c.NHead, QLen: b.T, KLen: b.T, KeyLens: b.Lens, Causal: true}
	attend := func(i int, q, k, v mat.Tensor) mat.Tensor {
		K, V := tensor.Data(k), tensor.Data(v)
		for r := 0; r < b.B; r++ {
			copy(s.k[i][r*capacity*D:], K[r*b.T*D:(r*b.T+b.Lens[r])*D])
			copy(s.v[i][r*capacity*D:], V[r*b.T*D:(r*b.T+b.Lens[r])*D])
		}
		sp := spec
		sp.Scale = c.attnScale(i)
		return tensor.Attention(q, k, v, sp)
	}
	h := m.blocks(m.embed(b.IDs, positions(b.B, b.T), nil), attend, s.affine, nil)
	last := make([]int, b.B)
	for r := range last {
		last[r] = r*b.T + b.Lens[r] - 1
	}
	s.head(tensor.Gather(h, last))
	return s, nil
}

// startBatch checks Start's arguments and pads the prompts into a batch.
func (m *Model) startBatch(prompts [][]int, capacity int) (transformer.Batch, error) {
	c := m.Config
	if len(prompts) == 0 {
		return transformer.Batch{}, fmt.Errorf("gpt2: no prompts")
	}
	if capacity < 1 || capacity > c.NPositions {
		return transformer.Batch{}, fmt.Errorf("gpt2: capacity %d outside 1..%d (the context window)", capacity, c.NPositions)
	}
	for i, p := range prompts {
		switch {
		case len(p) == 0:
			return transformer.Batch{}, fmt.Errorf("gpt2: prompt %d is empty (start it with a token such as <|endoftext|>)", i)
		case len(p) > capacity:
			return transformer.Batch{}, fmt.Errorf("gpt2: prompt %d has %d tokens, more than the capacity of %d", i, len(p), capacity)
		}
	}
	b, err := transformer.NewBatch(prompts, c.EOSTokenID)
	if err != nil {
		return transformer.Batch{}, fmt.Errorf("gpt2: %w", err)
	}
	if err := m.validate(b); err != nil {
		return transformer.Batch{}, err
	}
	return b, nil
}

// pack prepacks every weight (the output layer as its transpose) when the
// CPU backend runs; the products then give the same bits as unpacked ones.
func (s *Session) pack() error {
	if backend.Current() != backend.CPU() {
		return nil
	}
	s.packed = map[*nn.Param]*kernel.PackedB{}
	add := func(p *nn.Param, trans bool) error {
		r, c := tensor.Dims(p)
		k, n := r, c
		if trans {
			k, n = c, r
		}
		pb, err := kernel.PackB(trans, k, n, tensor.Data(p), c)
		if err != nil {
			return fmt.Errorf("gpt2: %w", err)
		}
		s.packed[p] = pb
		return nil
	}
	for _, b := range s.m.Blocks {
		for _, l := range []Conv1D{b.CAttn, b.CProj, b.CFc, b.MProj} {
			if err := add(l.Weight, false); err != nil {
				return err
			}
		}
	}
	return add(s.m.output(), true)
}

// affine is x W + b with W prepacked when the session has it.
func (s *Session) affine(x mat.Tensor, l Conv1D) mat.Tensor {
	pw := s.packed[l.Weight]
	if pw == nil {
		return tensor.Affine(x, l.Weight, l.Bias)
	}
	n, in := tensor.Dims(x)
	out := pw.N()
	y := make([]float32, n*out)
	bias := tensor.Data(l.Bias)
	for i := 0; i < n; i++ {
		copy(y[i*out:(i+1)*out], bias)
	}
	kernel.SgemmPacked(false, n, 1, tensor.Data(x), in, pw, 1, y, out)
	return view(y, n, out)
}

// head computes the logits of the final hidden states h [n, D] into the
// session's buffer (reused across steps: it is the largest allocation).
func (s *Session) head(h mat.Tensor) {
	c := s.m.Config
	n := s.n
	if cap(s.logits) < n*c.VocabSize {
		s.logits = make([]float32, n*c.VocabSize)
	}
	s.logits = s.logits[:n*c.VocabSize]
	if pw := s.packed[s.m.output()]; pw != nil {
		kernel.SgemmPacked(false, n, 1, tensor.Data(h), c.NEmbd, pw, 0, s.logits, c.VocabSize)
		return
	}
	backend.Current().Sgemm(false, true, n, c.VocabSize, c.NEmbd, 1, tensor.Data(h), c.NEmbd,
		tensor.Data(s.m.output()), c.NEmbd, 0, s.logits, c.VocabSize)
}

// Len is the number of sequences.
func (s *Session) Len() int { return s.n }

// Logits returns the next-token logits, [Len, V].
func (s *Session) Logits() []float32 { return s.logits }

// Lens returns the number of tokens each sequence holds.
func (s *Session) Lens() []int { return append([]int(nil), s.lens...) }

// view wraps a cache slice as a matrix without copying it.
func view(data []float32, rows, cols int) *tensor.Matrix {
	return mat.NewDense[float32](mat.WithShape(rows, cols), mat.WithBacking(data[:rows*cols]))
}

// Append feeds tokens[i] to sequence i at its own next position and
// computes the next logits.
func (s *Session) Append(tokens []int) error {
	c := s.m.Config
	if len(tokens) != s.n {
		return fmt.Errorf("gpt2: %d tokens for %d sequences", len(tokens), s.n)
	}
	pos := make([]int, s.n)
	keyLens := make([]int, s.n)
	for i, t := range tokens {
		if t < 0 || t >= c.VocabSize {
			return fmt.Errorf("gpt2: token %d of sequence %d outside the vocabulary of %d", t, i, c.VocabSize)
		}
		if s.lens[i] >= s.cap {
			return fmt.Errorf("gpt2: sequence %d is full (%d tokens, the session's capacity)", i, s.cap)
		}
		pos[i] = s.lens[i]
		keyLens[i] = s.lens[i] + 1
	}
	D := c.NEmbd
	spec := tensor.AttentionSpec{Batch: s.n, Heads: c.NHead, QLen: 1, KLen: s.cap, KeyLens: keyLens}
	attend := func(i int, q, k, v mat.Tensor) mat.Tensor {
		K, V := tensor.Data(k), tensor.Data(v)
		for r := 0; r < s.n; r++ {
			at := (r*s.cap + s.lens[r]) * D
			copy(s.k[i][at:at+D], K[r*D:(r+1)*D])
			copy(s.v[i][at:at+D], V[r*D:(r+1)*D])
		}
		sp := spec
		sp.Scale = c.attnScale(i)
		return tensor.Attention(q, view(s.k[i], s.n*s.cap, D), view(s.v[i], s.n*s.cap, D), sp)
	}
	h := s.m.blocks(s.m.embed(tokens, pos, nil), attend, s.affine, nil)
	for i := range s.lens {
		s.lens[i]++
	}
	s.head(h)
	return nil
}

// Select keeps the sequences rows, in that order (generate.Session). A
// strictly increasing selection compacts the caches in place; one that
// reorders or repeats copies them.
func (s *Session) Select(rows []int) error {
	for _, r := range rows {
		if r < 0 || r >= s.n {
			return fmt.Errorf("gpt2: select row %d of %d sequences", r, s.n)
		}
	}
	c := s.m.Config
	D, V, block := c.NEmbd, c.VocabSize, s.cap*c.NEmbd
	increasing := true
	for i, r := range rows {
		if r < i || (i > 0 && r <= rows[i-1]) {
			increasing = false
		}
	}
	lens := make([]int, len(rows))
	for i, r := range rows {
		lens[i] = s.lens[r]
	}
	if increasing {
		for l := range s.k {
			for i, r := range rows {
				if i != r {
					copy(s.k[l][i*block:i*block+lens[i]*D], s.k[l][r*block:r*block+lens[i]*D])
					copy(s.v[l][i*block:i*block+lens[i]*D], s.v[l][r*block:r*block+lens[i]*D])
				}
			}
		}
		for i, r := range rows {
			if i != r {
				copy(s.logits[i*V:(i+1)*V], s.logits[r*V:(r+1)*V])
			}
		}
	} else {
		for l := range s.k {
			k, v := make([]float32, len(rows)*block), make([]float32, len(rows)*block)
			for i, r := range rows {
				copy(k[i*block:i*block+lens[i]*D], s.k[l][r*block:r*block+lens[i]*D])
				copy(v[i*block:i*block+lens[i]*D], s.v[l][r*block:r*block+lens[i]*D])
			}
			s.k[l], s.v[l] = k, v
		}
		logits := make([]float32, len(rows)*V)
		for i, r := range rows {
			copy(logits[i*V:(i+1)*V], s.logits[r*V:(r+1)*V])
		}
		s.logits = logits
		s.rows = len(rows)
	}
	s.n = len(rows)
	s.lens = lens
	s.logits = s.logits[:s.n*V]
	return nil
}
