package t5

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
// decoder layer the cross-attention keys and values of each sequence's
// encoded input (computed once, in Start) and a self-attention key/value
// cache of cap rows per sequence, the decoder tokens each sequence holds,
// and the logits of its next position.
type Session struct {
	m *Model
	// packed holds the decoder's weights packed for the CPU sgemm, when
	// the CPU backend runs (nil otherwise): each step multiplies every
	// weight by a few rows, and packing it every time would cost as much
	// as the products.
	packed map[*nn.Param]*kernel.PackedB
	cap    int
	n      int
	S      int         // padded source length
	src    []int       // real source length of each sequence
	lens   []int       // decoder tokens held by each sequence
	ck, cv [][]float32 // per layer, [n*S, inner]
	k, v   [][]float32 // per layer, [n*cap, inner]
	logits []float32   // [n, V]
}

var _ generate.Model = (*Model)(nil)
var _ generate.Session = (*Session)(nil)
var _ generate.Scorer = (*Model)(nil)

// Start encodes the prompts (one sequence each; lengths may differ) in one
// padded pass, projects the encoder output to every decoder layer's
// cross-attention keys and values, and feeds the decoder start token, so
// that Logits are each sequence's first output token (generate.Model).
// capacity bounds the decoder tokens per sequence, the start token
// included.
func (m *Model) Start(prompts [][]int, capacity int) (generate.Session, error) {
	c := m.Config
	src, err := m.startBatch(prompts, capacity)
	if err != nil {
		return nil, err
	}
	enc, err := m.Encode(src, nil)
	if err != nil {
		return nil, err
	}
	L := len(m.Decoder)
	s := &Session{m: m, cap: capacity, n: src.B, S: src.T, src: append([]int(nil), src.Lens...), lens: make([]int, src.B),
		ck: make([][]float32, L), cv: make([][]float32, L), k: make([][]float32, L), v: make([][]float32, L)}
	if err := s.pack(); err != nil {
		return nil, err
	}
	I := c.Inner()
	for i, b := range m.Decoder {
		s.ck[i] = tensor.Data(linear(enc.Hidden, b.Cross.K))
		s.cv[i] = tensor.Data(linear(enc.Hidden, b.Cross.V))
		s.k[i] = make([]float32, src.B*capacity*I)
		s.v[i] = make([]float32, src.B*capacity*I)
	}
	start := make([]int, src.B)
	for i := range start {
		start[i] = c.DecoderStartTokenID
	}
	if err := s.Append(start); err != nil {
		return nil, err
	}
	return s, nil
}

// startBatch checks Start's arguments and pads the prompts into a batch.
func (m *Model) startBatch(prompts [][]int, capacity int) (transformer.Batch, error) {
	if len(prompts) == 0 {
		return transformer.Batch{}, fmt.Errorf("t5: no prompts")
	}
	if capacity < 1 {
		return transformer.Batch{}, fmt.Errorf("t5: capacity %d must be at least 1", capacity)
	}
	for i, p := range prompts {
		if len(p) == 0 {
			return transformer.Batch{}, fmt.Errorf("t5: prompt %d is empty", i)
		}
	}
	src, err := transformer.NewBatch(prompts, m.Config.PadTokenID)
	if err != nil {
		return transformer.Batch{}, fmt.Errorf("t5: %w", err)
	}
	return src, nil
}

// Len is the number of sequences.
func (s *Session) Len() int { return s.n }

// Logits returns the next-token logits, [Len, V].
func (s *Session) Logits() []float32 { return s.logits }

func view(data []float32, rows, cols int) *tensor.Matrix {
	return mat.NewDense[float32](mat.WithShape(rows, cols), mat.WithBacking(data[:rows*cols]))
}

// Append feeds tokens[i] to sequence i at its next decoder position and
// computes the next logits.
func (s *Session) Append(tokens []int) error {
	m, c := s.m, s.m.Config
	if len(tokens) != s.n {
		return fmt.Errorf("t5: %d tokens for %d sequences", len(tokens), s.n)
	}
	if err := checkTokens(tokens, s.lens, s.cap, c.VocabSize); err != nil {
		return err
	}
	keyLens := make([]int, s.n)
	for i := range tokens {
		keyLens[i] = s.lens[i] + 1
	}
	H, I := c.NumHeads, c.Inner()
	// The decoder's relative position bias of each sequence's one query
	// (position lens[i]) against its cache: [n*H, cap].
	table := tensor.Data(m.Decoder[0].Self.RelBias)
	bias := make([]float32, s.n*H*s.cap)
	for i := 0; i < s.n; i++ {
		for j := 0; j < keyLens[i]; j++ {
			bk := Bucket(j-s.lens[i], false, c.RelBuckets, c.RelMaxDistance)
			for h := 0; h < H; h++ {
				bias[(i*H+h)*s.cap+j] = table[bk*H+h]
			}
		}
	}
	self := tensor.AttentionSpec{Batch: s.n, Heads: H, QLen: 1, KLen: s.cap, KeyLens: keyLens, Scale: 1,
		Bias: tensor.New(s.n*H, s.cap, bias)}
	cross := tensor.AttentionSpec{Batch: s.n, Heads: H, QLen: 1, KLen: s.S, KeyLens: s.src, Scale: 1}
	selfAttend := func(l int, a Attention, q, h mat.Tensor) mat.Tensor {
		K, V := tensor.Data(s.linear(h, a.K)), tensor.Data(s.linear(h, a.V))
		for r := 0; r < s.n; r++ {
			at := (r*s.cap + s.lens[r]) * I
			copy(s.k[l][at:at+I], K[r*I:(r+1)*I])
			copy(s.v[l][at:at+I], V[r*I:(r+1)*I])
		}
		return tensor.Attention(q, view(s.k[l], s.n*s.cap, I), view(s.v[l], s.n*s.cap, I), self)
	}
	crossAttend := func(l int, _ Attention, q, _ mat.Tensor) mat.Tensor {
		return tensor.Attention(q, view(s.ck[l], s.n*s.S, I), view(s.cv[l], s.n*s.S, I), cross)
	}
	x := tensor.Gather(m.Shared, tokens)
	h := m.decoderStack(x, selfAttend, crossAttend, s.linear, nil)
	for i := range s.lens {
		s.lens[i]++
	}
	if m.LMHead == nil {
		h = tensor.Scale(h, m.outScale())
	}
	s.logits = tensor.Data(s.linear(h, m.output()))
	return nil
}

// checkTokens checks a step's tokens against the vocabulary and each
// sequence's room.
func checkTokens(tokens, lens []int, capacity, vocab int) error {
	for i, t := range tokens {
		if t < 0 || t >= vocab {
			return fmt.Errorf("t5: token %d of sequence %d outside the vocabulary of %d", t, i, vocab)
		}
		if lens[i] >= capacity {
			return fmt.Errorf("t5: sequence %d is full (%d decoder tokens, the session's capacity)", i, capacity)
		}
	}
	return nil
}

// pack prepacks the decoder's weights and the output layer (each as its
// transpose: they are [out, in]) when the CPU backend runs; the products
// then give the same bits as unpacked ones.
func (s *Session) pack() error {
	if backend.Current() != backend.CPU() {
		return nil
	}
	s.packed = map[*nn.Param]*kernel.PackedB{}
	add := func(p *nn.Param) error {
		if p == nil {
			return nil
		}
		out, in := tensor.Dims(p)
		pb, err := kernel.PackB(true, in, out, tensor.Data(p), in)
		if err != nil {
			return fmt.Errorf("t5: %w", err)
		}
		s.packed[p] = pb
		return nil
	}
	for _, b := range s.m.Decoder {
		for _, p := range []*nn.Param{b.Self.Q, b.Self.K, b.Self.V, b.Self.O, b.Cross.Q, b.Cross.O, b.FF.Wi, b.FF.Wi1, b.FF.Wo} {
			if err := add(p); err != nil {
				return err
			}
		}
	}
	return add(s.m.output())
}

// linear is x W^T with W prepacked when the session has it.
func (s *Session) linear(x mat.Tensor, w *nn.Param) mat.Tensor {
	pw := s.packed[w]
	if pw == nil {
		return linear(x, w)
	}
	n, in := tensor.Dims(x)
	out := pw.N()
	y := make([]float32, n*out)
	kernel.SgemmPacked(false, n, 1, tensor.Data(x), in, pw, 0, y, out)
	return view(y, n, out)
}

// Select keeps the sequences rows, in that order (generate.Session): their
// caches, cross-attention keys and values, and logits.
func (s *Session) Select(rows []int) error {
	for _, r := range rows {
		if r < 0 || r >= s.n {
			return fmt.Errorf("t5: select row %d of %d sequences", r, s.n)
		}
	}
	c := s.m.Config
	I, V := c.Inner(), c.VocabSize
	pick := func(src []float32, block int) []float32 {
		out := make([]float32, len(rows)*block)
		for i, r := range rows {
			copy(out[i*block:(i+1)*block], src[r*block:(r+1)*block])
		}
		return out
	}
	for l := range s.k {
		s.k[l], s.v[l] = pick(s.k[l], s.cap*I), pick(s.v[l], s.cap*I)
		s.ck[l], s.cv[l] = pick(s.ck[l], s.S*I), pick(s.cv[l], s.S*I)
	}
	s.logits = pick(s.logits, V)
	src, lens := make([]int, len(rows)), make([]int, len(rows))
	for i, r := range rows {
		src[i], lens[i] = s.src[r], s.lens[r]
	}
	s.src, s.lens, s.n = src, lens, len(rows)
	return nil
}

// ScoreTokens returns the natural-log probability of every token of
// conts[i] given prompts[i] (the encoder's input) and the continuation's
// earlier tokens, from one teacher-forced pass (generate.Scorer).
func (m *Model) ScoreTokens(prompts, conts [][]int) ([][]float64, error) {
	if len(prompts) != len(conts) {
		return nil, fmt.Errorf("t5: %d prompts and %d continuations", len(prompts), len(conts))
	}
	if len(prompts) == 0 {
		return nil, nil
	}
	c := m.Config
	decs := make([][]int, len(prompts))
	for i := range prompts {
		if len(prompts[i]) == 0 {
			return nil, fmt.Errorf("t5: prompt %d is empty", i)
		}
		decs[i] = []int{c.DecoderStartTokenID}
		if len(conts[i]) > 1 {
			decs[i] = append(decs[i], conts[i][:len(conts[i])-1]...)
		}
	}
	src, err := transformer.NewBatch(prompts, c.PadTokenID)
	if err != nil {
		return nil, fmt.Errorf("t5: %w", err)
	}
	dec, err := transformer.NewBatch(decs, c.PadTokenID)
	if err != nil {
		return nil, fmt.Errorf("t5: %w", err)
	}
	logits, err := m.Forward(src, dec, nil)
	if err != nil {
		return nil, err
	}
	L := tensor.Data(logits)
	V := c.VocabSize
	out := make([][]float64, len(prompts))
	for i := range conts {
		out[i] = make([]float64, len(conts[i]))
		for j, tok := range conts[i] {
			if tok < 0 || tok >= V {
				return nil, fmt.Errorf("t5: token %d of continuation %d outside the vocabulary of %d", tok, i, V)
			}
			row := (i*dec.T + j) * V
			out[i][j] = generate.LogProb(L[row:row+V], tok)
		}
	}
	return out, nil
}
