package t5

import (
	"fmt"
	"sync"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/generate"
	"repro/internal/tensor"
	"repro/internal/tensor/backend"
)

// Decoding on a device (generate.DeviceModel): the weights are placed
// once (OnDevice); a session encodes its inputs there, keeps the
// cross-attention keys and values, the self-attention caches, each
// sequence's position, source length and its logits in device memory, and
// computes the decoder's relative position bias there from the positions;
// a step uploads only its token ids and, when the engine draws on the
// device, downloads only the drawn ids. The arithmetic is the host
// session's bit for bit.

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
	m         *Model
	dev       backend.Device
	cap, n, S int
	lens      []int        // decoder tokens held by each sequence (the host's copy)
	pos       *tensor.Ints // lens on the device: each sequence's next position
	src       *tensor.Ints // each sequence's source length
	rb        *tensor.Ints // the decoder's bucket of each distance 0..cap-1
	ids       *tensor.Ints // the step's tokens
	ck, cv    []*tensor.Cache
	k, v      []*tensor.Cache
	logits    mat.Tensor // [n, V] on the device: the last step's graph
	st        *tensor.Streams
}

var _ generate.DeviceSession = (*devSession)(nil)

// Start encodes the prompts and feeds the start token as Model.Start
// does, on the device.
func (d *deviceModel) Start(prompts [][]int, capacity int) (generate.Session, error) {
	m, c := d.Model, d.Model.Config
	src, err := m.startBatch(prompts, capacity)
	if err != nil {
		return nil, err
	}
	enc, err := m.Encode(src, nil)
	if err != nil {
		return nil, err
	}
	s := &devSession{m: m, dev: d.dev, cap: capacity, n: src.B, S: src.T, lens: make([]int, src.B)}
	I := c.Inner()
	var roots []mat.Tensor
	for _, b := range m.Decoder {
		k, v := linear(enc.Hidden, b.Cross.K), linear(enc.Hidden, b.Cross.V)
		s.ck = append(s.ck, tensor.CacheOf(k, src.B, src.T))
		s.cv = append(s.cv, tensor.CacheOf(v, src.B, src.T))
		s.k = append(s.k, tensor.NewCache(d.dev, src.B, capacity, I))
		s.v = append(s.v, tensor.NewCache(d.dev, src.B, capacity, I))
		roots = append(roots, k, v)
	}
	for _, r := range roots { // the encoder's graph with them
		tensor.Release(r)
	}
	rb := make([]int, capacity)
	for dist := range rb {
		rb[dist] = Bucket(-dist, false, c.RelBuckets, c.RelMaxDistance)
	}
	s.rb = tensor.NewInts(d.dev, rb, "position buckets")
	s.src = tensor.NewInts(d.dev, src.Lens, "source lengths")
	s.pos = tensor.NewInts(d.dev, s.lens, "positions")
	start := make([]int, src.B)
	for i := range start {
		start[i] = c.DecoderStartTokenID
	}
	if err := s.Append(start); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *devSession) Len() int               { return s.n }
func (s *devSession) Device() backend.Device { return s.dev }

// Logits downloads the logits (counted): for the host's processors and
// penalties.
func (s *devSession) Logits() []float32 { return tensor.Data(s.logits) }

// Append is Session.Append on the device: only the tokens go up.
func (s *devSession) Append(tokens []int) error {
	m, c := s.m, s.m.Config
	if len(tokens) != s.n {
		return fmt.Errorf("t5: %d tokens for %d sequences", len(tokens), s.n)
	}
	if err := checkTokens(tokens, s.lens, s.cap, c.VocabSize); err != nil {
		return err
	}
	tensor.Release(s.logits)
	s.logits = nil
	if s.ids == nil {
		s.ids = tensor.NewInts(s.dev, tokens, "token ids")
	} else {
		s.ids.Set(tokens, "token ids")
	}
	H := c.NumHeads
	bias := tensor.DecodeBucketBias(m.Decoder[0].Self.RelBias, H, s.rb, s.pos, s.cap)
	selfAttend := func(l int, a Attention, q, h mat.Tensor) mat.Tensor {
		return tensor.DecodeAttention(q, linear(h, a.K), linear(h, a.V), s.k[l], s.v[l], s.pos,
			tensor.DecodeSpec{Heads: H, Scale: 1, Lens: s.pos, LenAdd: 1, Bias: bias})
	}
	crossAttend := func(l int, _ Attention, q, _ mat.Tensor) mat.Tensor {
		return tensor.DecodeAttention(q, nil, nil, s.ck[l], s.cv[l], nil, tensor.DecodeSpec{Heads: H, Scale: 1, Lens: s.src})
	}
	h := m.decoderStack(tensor.GatherAt(m.Shared, s.ids), selfAttend, crossAttend, linear, nil)
	s.pos.Add(1)
	for i := range s.lens {
		s.lens[i]++
	}
	if m.LMHead == nil {
		h = tensor.Scale(h, m.outScale())
	}
	s.logits = linear(h, m.output())
	return nil
}

// Select keeps the sequences rows, in that order: their caches,
// cross-attention keys and values, lengths, streams and logits, gathered
// on the device (the row indices go up).
func (s *devSession) Select(rows []int) error {
	for _, r := range rows {
		if r < 0 || r >= s.n {
			return fmt.Errorf("t5: select row %d of %d sequences", r, s.n)
		}
	}
	ri := tensor.NewInts(s.dev, rows, "selected rows")
	defer ri.Free()
	for l := range s.k {
		for _, c := range []*tensor.Cache{s.k[l], s.v[l], s.ck[l], s.cv[l]} {
			c.Gather(ri)
		}
	}
	s.pos.Gather(ri)
	s.src.Gather(ri)
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
		return fmt.Errorf("t5: %d streams for %d sequences", len(states), s.n)
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
		return nil, fmt.Errorf("t5: drawing needs the sequences' streams")
	}
	return tensor.DrawTokens(s.logits, smp, s.st), nil
}

// Close frees the session's device memory.
func (s *devSession) Close() {
	tensor.Release(s.logits)
	s.logits = nil
	for l := range s.k {
		for _, c := range []*tensor.Cache{s.k[l], s.v[l], s.ck[l], s.cv[l]} {
			c.Free()
		}
	}
	for _, x := range []*tensor.Ints{s.pos, s.src, s.rb, s.ids} {
		if x != nil {
			x.Free()
		}
	}
	if s.st != nil {
		s.st.Free()
	}
}
