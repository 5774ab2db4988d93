package gpt2

import (
	"fmt"
	"sync"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/generate"
	"repro/internal/tensor"
	"repro/internal/tensor/backend"
)

// Decoding on a device (generate.DeviceModel): the weights are placed
// once (OnDevice), and a session keeps its key/value caches, each
// sequence's position and its logits in device memory; a step uploads
// only its token ids (everything else a step reads is there already) and,
// when the engine draws on the device, downloads only the drawn ids. The
// arithmetic is the host session's (Session) bit for bit: the same
// operators, on the device, and the one-query attention of the CPU.

var deviceLocks sync.Map // *Model -> *sync.Mutex

// OnDevice places the weights on dev and returns the model whose sessions
// decode there; release frees the device copies (generate.DeviceModel).
// A second call on the same model waits for the first one's release.
func (m *Model) OnDevice(dev backend.Device) (generate.Model, func()) {
	mu, _ := deviceLocks.LoadOrStore(m, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	var leaves []mat.Tensor
	for _, p := range m.Params() {
		leaves = append(leaves, p)
	}
	tensor.Place(dev, leaves...)
	return &deviceModel{Model: m, dev: dev}, func() {
		tensor.Discard(leaves...)
		mu.(*sync.Mutex).Unlock()
	}
}

// deviceModel is a Model whose weights are placed on dev.
type deviceModel struct {
	*Model
	dev backend.Device
}

// devSession is Session on a device.
type devSession struct {
	m      *Model
	dev    backend.Device
	cap, n int
	lens   []int        // tokens held by each sequence (the host's copy)
	pos    *tensor.Ints // lens on the device: each sequence's next position
	ids    *tensor.Ints // the step's tokens
	k, v   []*tensor.Cache
	logits mat.Tensor      // [n, V] on the device: the last step's graph
	st     *tensor.Streams // the sequences' random streams (Streams)
}

var _ generate.DeviceSession = (*devSession)(nil)

// Start reads the prompts as Model.Start does, on the device.
func (d *deviceModel) Start(prompts [][]int, capacity int) (generate.Session, error) {
	m, c := d.Model, d.Model.Config
	b, err := m.startBatch(prompts, capacity)
	if err != nil {
		return nil, err
	}
	s := &devSession{m: m, dev: d.dev, cap: capacity, n: b.B, lens: append([]int(nil), b.Lens...)}
	D := c.NEmbd
	for range m.Blocks {
		s.k = append(s.k, tensor.NewCache(d.dev, b.B, capacity, D))
		s.v = append(s.v, tensor.NewCache(d.dev, b.B, capacity, D))
	}
	spec := tensor.AttentionSpec{Batch: b.B, Heads: c.NHead, QLen: b.T, KLen: b.T, KeyLens: b.Lens, Causal: true}
	attend := func(i int, q, k, v mat.Tensor) mat.Tensor {
		for r := 0; r < b.B; r++ {
			s.k[i].Fill(r, k, r*b.T, b.Lens[r])
			s.v[i].Fill(r, v, r*b.T, b.Lens[r])
		}
		sp := spec
		sp.Scale = c.attnScale(i)
		return tensor.Attention(q, k, v, sp)
	}
	h := m.blocks(m.embed(b.IDs, positions(b.B, b.T), nil), attend, affine, nil)
	last := make([]int, b.B)
	for r := range last {
		last[r] = r*b.T + b.Lens[r] - 1
	}
	s.logits = tensor.Linear(tensor.Gather(h, last), m.output(), nil)
	s.pos = tensor.NewInts(d.dev, s.lens, "positions")
	return s, nil
}

func (s *devSession) Len() int               { return s.n }
func (s *devSession) Device() backend.Device { return s.dev }

// Logits downloads the logits (counted): for the host's processors and
// penalties.
func (s *devSession) Logits() []float32 { return tensor.Data(s.logits) }

// Lens returns the number of tokens each sequence holds.
func (s *devSession) Lens() []int { return append([]int(nil), s.lens...) }

// Append is Session.Append on the device: only the tokens go up.
func (s *devSession) Append(tokens []int) error {
	c := s.m.Config
	if len(tokens) != s.n {
		return fmt.Errorf("gpt2: %d tokens for %d sequences", len(tokens), s.n)
	}
	for i, t := range tokens {
		if t < 0 || t >= c.VocabSize {
			return fmt.Errorf("gpt2: token %d of sequence %d outside the vocabulary of %d", t, i, c.VocabSize)
		}
		if s.lens[i] >= s.cap {
			return fmt.Errorf("gpt2: sequence %d is full (%d tokens, the session's capacity)", i, s.cap)
		}
	}
	tensor.Release(s.logits)
	if s.ids == nil {
		s.ids = tensor.NewInts(s.dev, tokens, "token ids")
	} else {
		s.ids.Set(tokens, "token ids")
	}
	x := tensor.Add(tensor.GatherAt(s.m.WTE, s.ids), tensor.GatherAt(s.m.WPE, s.pos))
	x = tensor.Dropout(x, c.EmbdPdrop, nil)
	attend := func(i int, q, k, v mat.Tensor) mat.Tensor {
		return tensor.DecodeAttention(q, k, v, s.k[i], s.v[i], s.pos,
			tensor.DecodeSpec{Heads: c.NHead, Scale: c.attnScale(i), Lens: s.pos, LenAdd: 1})
	}
	h := s.m.blocks(x, attend, affine, nil)
	s.pos.Add(1)
	for i := range s.lens {
		s.lens[i]++
	}
	s.logits = tensor.Linear(h, s.m.output(), nil)
	return nil
}

// Select keeps the sequences rows, in that order: their caches, positions,
// streams and logits, gathered on the device (the row indices go up).
func (s *devSession) Select(rows []int) error {
	for _, r := range rows {
		if r < 0 || r >= s.n {
			return fmt.Errorf("gpt2: select row %d of %d sequences", r, s.n)
		}
	}
	ri := tensor.NewInts(s.dev, rows, "selected rows")
	defer ri.Free()
	for l := range s.k {
		s.k[l].Gather(ri)
		s.v[l].Gather(ri)
	}
	s.pos.Gather(ri)
	if s.st != nil {
		s.st.Gather(ri)
	}
	old := s.logits
	s.logits = tensor.GatherAt(old, ri)
	tensor.Release(old)
	lens := make([]int, len(rows))
	for i, r := range rows {
		lens[i] = s.lens[r]
	}
	s.lens, s.n = lens, len(rows)
	return nil
}

// Streams uploads the sequences' random streams (generate.DeviceSession).
func (s *devSession) Streams(states [][2]uint64) error {
	if len(states) != s.n {
		return fmt.Errorf("gpt2: %d streams for %d sequences", len(states), s.n)
	}
	if s.st != nil {
		s.st.Free()
	}
	s.st = tensor.NewStreams(s.dev, states)
	return nil
}

// Draw chooses the next tokens on the device (generate.DeviceSession).
func (s *devSession) Draw(smp backend.Sampling) ([]int, error) {
	if s.st == nil && !smp.Greedy {
		return nil, fmt.Errorf("gpt2: drawing needs the sequences' streams")
	}
	return tensor.DrawTokens(s.logits, smp, s.st), nil
}

// Close frees the session's device memory.
func (s *devSession) Close() {
	tensor.Release(s.logits)
	s.logits = nil
	for l := range s.k {
		s.k[l].Free()
		s.v[l].Free()
	}
	for _, x := range []*tensor.Ints{s.pos, s.ids} {
		if x != nil {
			x.Free()
		}
	}
	if s.st != nil {
		s.st.Free()
	}
}
