package train

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"repro/registry"
)

// Cost estimates for the T5, GPT-2, InfoCSE and PaSeR training types, on
// cost.go's conventions: matrix products only (two FLOPs a multiply-add),
// the backward pass twice the forward, every sequence at its maximum
// length (the estimates are upper bounds where lengths vary).

// t5Shape is what a cost estimate needs of a T5.
type t5Shape struct {
	Enc, Dec  int // encoder and decoder blocks
	D, Inner  int // d_model; heads x d_kv
	FF        int
	Gated     bool // gated-* feed-forward: two input projections
	Vocab     int
	fromWhere string
}

// ffn is one feed-forward sublayer on n tokens.
func (s t5Shape) ffn(n float64) float64 {
	in := 1.0
	if s.Gated {
		in = 2
	}
	return (in + 1) * 2 * n * float64(s.D) * float64(s.FF)
}

// attention is one attention sublayer with nq queries over nk keys: the
// query and output projections on nq rows, key and value on nk, scores and
// the weighted sum.
func (s t5Shape) attention(nq, nk float64) float64 {
	d, a := float64(s.D), float64(s.Inner)
	return 4*nq*d*a + 4*nk*d*a + 4*nq*nk*a
}

// encoder is the FLOPs of one source of n tokens through the encoder.
func (s t5Shape) encoder(n int) float64 {
	l := float64(n)
	return float64(s.Enc) * (s.attention(l, l) + s.ffn(l))
}

// decoder is the FLOPs of m target tokens through the decoder over a
// source of n tokens, with the LM head when head is set.
func (s t5Shape) decoder(m, n int, head bool) float64 {
	t, l := float64(m), float64(n)
	f := float64(s.Dec) * (s.attention(t, t) + s.attention(t, l) + s.ffn(t))
	if head {
		f += 2 * t * float64(s.D) * float64(s.Vocab)
	}
	return f
}

// shape is the T5 a run would train: the first connected model input
// among ports (nil while its stage has not run), hf_checkpoint's, else the
// architecture parameters'.
func (a T5Architecture) shape(in registry.CostInputs, ports ...string) (*t5Shape, error) {
	dir, from := "", ""
	for _, port := range ports {
		if in.Connected[port] {
			m, ok := in.Computed[port]
			if !ok {
				return nil, nil
			}
			dir, from = m.Dir, port
			break
		}
	}
	if dir == "" && a.HFCheckpoint != "" {
		dir, from = a.HFCheckpoint, "hf_checkpoint"
	}
	if dir == "" {
		inner := a.HeadWidth * a.Heads
		if a.HeadWidth == 0 {
			inner = a.Hidden
		}
		return &t5Shape{Enc: a.Layers, Dec: a.Layers, D: a.Hidden, Inner: inner, FF: a.FF,
			Gated: strings.HasPrefix(a.FeedForward, "gated-"), Vocab: a.VocabSize + a.Sentinels, fromWhere: "architecture"}, nil
	}
	var cfg struct {
		DModel     int    `json:"d_model"`
		DKV        int    `json:"d_kv"`
		DFF        int    `json:"d_ff"`
		Layers     int    `json:"num_layers"`
		DecLayers  *int   `json:"num_decoder_layers"`
		Heads      int    `json:"num_heads"`
		VocabSize  int    `json:"vocab_size"`
		FeedFwProj string `json:"feed_forward_proj"`
	}
	if err := readConfig(dir, from, &cfg); err != nil {
		return nil, err
	}
	dec := cfg.Layers
	if cfg.DecLayers != nil {
		dec = *cfg.DecLayers
	}
	return &t5Shape{Enc: cfg.Layers, Dec: dec, D: cfg.DModel, Inner: cfg.Heads * cfg.DKV, FF: cfg.DFF,
		Gated: strings.HasPrefix(cfg.FeedFwProj, "gated-"), Vocab: cfg.VocabSize, fromWhere: from}, nil
}

func (s *t5Shape) String() string {
	return fmt.Sprintf("T5 %d+%d blocks x %d (attention %d, ff %d), vocabulary %d (%s)", s.Enc, s.Dec, s.D, s.Inner, s.FF, s.Vocab, s.fromWhere)
}

// readConfig decodes dir/config.json into v.
func readConfig(dir, from string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: config.json: %w", from, err)
	}
	return nil
}

// spanCorruptionCost: a packed sequence of max_length tokens loses
// noise_density of them to spans of mean_span_length, each span leaving a
// sentinel in the source and a sentinel before it in the target, plus the
// target's EOS. The packed sequences depend on the text's token count, so
// without max_steps the updates are unknown.
func spanCorruptionCost(params any, in registry.CostInputs) (*registry.CostEstimate, error) {
	p := params.(*SpanCorruptionParams)
	s, err := p.T5Architecture.shape(in, "init")
	if s == nil || err != nil {
		return nil, err
	}
	n := float64(p.MaxLength)
	noise := n * p.NoiseDensity
	spans := noise / p.MeanSpanLength
	src, tgt := int(n-noise+spans+1+0.5), int(noise+spans+1+0.5)
	per := s.encoder(src) + s.decoder(tgt, src, true)
	what := fmt.Sprintf("%s, sources of about %d and targets of about %d tokens", s, src, tgt)
	return p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).estimate(per, nil, what)
}

func seq2seqCost(params any, in registry.CostInputs) (*registry.CostEstimate, error) {
	p := params.(*Seq2SeqParams)
	s, err := p.T5Architecture.shape(in, "init")
	if s == nil || err != nil {
		return nil, err
	}
	per := s.encoder(p.MaxSourceLength) + s.decoder(p.MaxTargetLength, p.MaxSourceLength, true)
	what := fmt.Sprintf("%s, sources of %d and targets of %d tokens at most", s, p.MaxSourceLength, p.MaxTargetLength)
	return p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).estimate(per, func() (int, bool, error) {
		return countRows(in, "data", registry.FileInstances, p.MaxInstances)
	}, what)
}

// t5ContrastiveCost: each view through the encoder; in encdec mode one
// decoder step (the pad token) over it, without the LM head.
func t5ContrastiveCost(params any, in registry.CostInputs) (*registry.CostEstimate, error) {
	p := params.(*T5ContrastiveParams)
	s, err := p.T5Architecture.shape(in, "encoder", "init")
	if s == nil || err != nil {
		return nil, err
	}
	views := 2
	if p.HardNegatives {
		views = 3
	}
	one := s.encoder(p.MaxLength)
	if p.Mode == "encdec" {
		one += s.decoder(1, p.MaxLength, false)
	}
	what := fmt.Sprintf("%s, %s mode, %d input(s) of %d tokens per triplet", s, p.Mode, views, p.MaxLength)
	return p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).estimate(float64(views)*one, func() (int, bool, error) {
		return countRows(in, "data", registry.FileTriplets, p.MaxTriplets)
	}, what)
}

// causalLMCost: each window of max_length tokens through the GPT-2 and its
// tied LM head. The windows depend on the texts (packing, splitting), so
// without max_steps the updates are unknown.
func causalLMCost(params any, in registry.CostInputs) (*registry.CostEstimate, error) {
	p := params.(*CausalLMParams)
	a := p.LMArchitecture
	s := &encoderShape{Layers: a.Layers, Hidden: a.Hidden, Intermediate: a.Inner, Vocab: a.VocabSize}
	from := "architecture"
	if a.Vocab == LMVocabGPT2 {
		s.Vocab = gpt2VocabSize
	}
	dir := ""
	switch {
	case in.Connected["init"]:
		m, ok := in.Computed["init"]
		if !ok {
			return nil, nil
		}
		dir, from = m.Dir, "init"
	case a.HFCheckpoint != "":
		dir, from = a.HFCheckpoint, "hf_checkpoint"
	}
	if dir != "" {
		var cfg struct {
			NEmbd     int  `json:"n_embd"`
			NLayer    int  `json:"n_layer"`
			NInner    *int `json:"n_inner"`
			VocabSize int  `json:"vocab_size"`
		}
		if err := readConfig(dir, from, &cfg); err != nil {
			return nil, err
		}
		s = &encoderShape{Layers: cfg.NLayer, Hidden: cfg.NEmbd, Vocab: cfg.VocabSize}
		if cfg.NInner != nil {
			s.Intermediate = *cfg.NInner
		}
	}
	if s.Intermediate == 0 {
		s.Intermediate = 4 * s.Hidden
	}
	n := p.MaxLength
	per := s.forward(n) + 2*float64(n)*float64(s.Hidden)*float64(s.Vocab)
	what := fmt.Sprintf("GPT-2 %d x %d x %d (%s), vocabulary %d, windows of %d tokens", s.Layers, s.Hidden, s.Intermediate, from, s.Vocab, n)
	return p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).estimate(per, nil, what)
}

// gpt2VocabSize is GPT-2's vocabulary (vocab = "gpt2").
const gpt2VocabSize = 50257

// infonceCost: the anchor (max_length) and its positive
// (positive_max_length) through the encoder.
func infonceCost(params any, in registry.CostInputs) (*registry.CostEstimate, error) {
	p := params.(*InfoNCEParams)
	s, from, err := p.Architecture.shape(in)
	if s == nil || err != nil {
		return nil, err
	}
	pos := p.PositiveMaxLength
	if pos == 0 {
		pos = p.MaxLength
	}
	per := s.forward(p.MaxLength) + s.forward(pos) + 2*s.pooler(p.Pooling)
	what := fmt.Sprintf("%d x %d x %d encoder (%s), an anchor of %d and a positive of %d tokens per pair", s.Layers, s.Hidden, s.Intermediate, from, p.MaxLength, pos)
	return p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).estimate(per, func() (int, bool, error) {
		return countRows(in, "data", registry.FilePairs, 0)
	}, what)
}

// headlineCost: a document's max_sentences sentences and its headline
// through the encoder. With max_sentences 0 (all) a document's length is
// unknown before the run: one sentence is counted and the note says so.
func headlineCost(params any, in registry.CostInputs) (*registry.CostEstimate, error) {
	p := params.(*HeadlineParams)
	s, from, err := p.Architecture.shape(in)
	if s == nil || err != nil {
		return nil, err
	}
	sentences, note := p.MaxSentences, ""
	if sentences == 0 {
		sentences, note = 1, "; a document's sentences are all used (max_sentences 0): counted as one, so the estimate is a lower bound"
	}
	per := float64(sentences+1) * (s.forward(p.MaxLength) + s.pooler(p.Pooling))
	what := fmt.Sprintf("%d x %d x %d encoder (%s), %d sentence(s) and a headline of %d tokens per document%s", s.Layers, s.Hidden, s.Intermediate, from, sentences, p.MaxLength, note)
	return p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).estimate(per, func() (int, bool, error) {
		return countRows(in, "data", registry.FileDocuments, 0)
	}, what)
}

// paserDecoder is PaSeR's decoder on targets of t tokens: decoderLayers
// BERT-shaped layers (self-attention and feed-forward on the targets, the
// query and output projections of cross-attention; its keys and values are
// four memory rows, not counted) and the LM head tied to the vocabulary.
func paserDecoder(s *encoderShape, layers, t int) float64 {
	dec := *s
	dec.Layers = layers
	h := float64(s.Hidden)
	return dec.forward(t) + float64(layers)*4*float64(t)*h*h + 2*float64(t)*h*float64(s.Vocab)
}

// paserCost: s and s' through the encoder, the decoder on the targets, and
// with mlm a third encoder pass on a masked copy of s plus the MLM head on
// its masked share.
func paserCost(params any, in registry.CostInputs) (*registry.CostEstimate, error) {
	p := params.(*PaSeRParams)
	s, from, err := p.Architecture.shape(in)
	if s == nil || err != nil {
		return nil, err
	}
	per := 2*(s.forward(p.MaxLength)+s.pooler(p.Pooling)) + paserDecoder(s, p.DecoderLayers, p.MaxTargetLength)
	if p.MLM {
		h, v := float64(s.Hidden), float64(s.Vocab)
		per += s.forward(p.MaxLength) + p.MLMProbability*float64(p.MaxLength)*(2*h*h+2*h*v)
	}
	what := fmt.Sprintf("%d x %d x %d encoder (%s) and %d decoder layer(s), %d encoder and %d target tokens per pair", s.Layers, s.Hidden, s.Intermediate, from, p.DecoderLayers, p.MaxLength, p.MaxTargetLength)
	return p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).estimate(per, func() (int, bool, error) {
		return countRows(in, "data", registry.FilePairs, p.MaxPairs)
	}, what)
}

// paserSupCost: a triplet's three sentences through the encoder, and a
// masked pair's two with the decoder on its targets. The encoder is init's
// (required). An epoch runs over the larger of the two datasets; the
// triplets are counted, so the updates are a lower bound when the masked
// pairs outnumber them.
func paserSupCost(params any, in registry.CostInputs) (*registry.CostEstimate, error) {
	p := params.(*PaSeRSupParams)
	s, from, err := Architecture{}.shape(registry.CostInputs{Computed: in.Computed, Connected: map[string]bool{"init": true}})
	if s == nil || err != nil {
		return nil, err
	}
	one := s.forward(p.MaxLength) + s.pooler(p.Pooling)
	views := 2.0
	if p.HardNegatives {
		views = 3
	}
	per := views*one + 2*one + paserDecoder(s, p.DecoderLayers, p.MaxTargetLength)
	what := fmt.Sprintf("%d x %d x %d encoder (%s) and %d decoder layer(s), a triplet and a masked pair of %d tokens per example; updates counted over the triplets", s.Layers, s.Hidden, s.Intermediate, from, p.DecoderLayers, p.MaxLength)
	return p.Loop(p.LearningRate, p.BatchSize, p.Epochs, p.MaxSteps).estimate(per, func() (int, bool, error) {
		return countRows(in, "triplets", registry.FileTriplets, p.MaxTriplets)
	}, what)
}
