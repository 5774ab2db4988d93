package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/registry"
)

// TestEveryTrainingTypeHasCost: repro plan's estimate covers every
// training type, so a new one has to say what it costs.
func TestEveryTrainingTypeHasCost(t *testing.T) {
	r := registry.New()
	Register(r)
	RegisterLM(r)
	RegisterCosine(r)
	RegisterMLM(r)
	RegisterPaSeR(r)
	RegisterT5(r)
	n := 0
	for _, name := range r.Names() {
		if !strings.HasPrefix(name, "train.") {
			continue
		}
		n++
		typ, _ := r.Lookup(name)
		if typ.Cost == nil {
			t.Errorf("%s has no Cost estimate", name)
		}
	}
	if n < 12 {
		t.Errorf("only %d train.* types registered; the test no longer sees them all", n)
	}
}

// costT5 is a one-block T5: d_model 4, two heads of width 2 (attention
// width 4), feed-forward 8 (relu), vocabulary 10 + 2 sentinels.
func costT5() T5Architecture {
	return T5Architecture{FromScratch: true, Layers: 1, Hidden: 4, Heads: 2, FF: 8, FeedForward: "relu", VocabSize: 10, Sentinels: 2}
}

// TestSeq2SeqCostHandCount: a source of 3 and a target of 2 tokens.
// Encoder: attention 4*3*4*4 (Q, O) + 4*3*4*4 (K, V) + 4*3*3*4 (scores,
// sum) = 528, feed-forward 2*2*3*4*8 = 384: 912. Decoder: self-attention
// 128 + 128 + 4*2*2*4 = 320, cross-attention 4*2*16 + 4*3*16 + 4*2*3*4 =
// 416, feed-forward 2*2*2*4*8 = 256, LM head 2*2*4*12 = 192: 1184. A
// batch of one: (912 + 1184) x 3 = 6288 an update.
func TestSeq2SeqCostHandCount(t *testing.T) {
	p := defaultSeq2SeqParams()
	p.T5Architecture = costT5()
	p.MaxSourceLength, p.MaxTargetLength, p.BatchSize, p.MaxSteps = 3, 2, 1, 4
	e, err := seq2seqCost(&p, registry.CostInputs{})
	if err != nil || e == nil {
		t.Fatalf("estimate: %+v, %v", e, err)
	}
	if e.FLOPsPerUpdate != 6288 || e.Updates != 4 {
		t.Errorf("estimate %+v; want 6288 per update, 4 updates", e)
	}
	// A gated feed-forward has a third projection: +1/2 of each FFN.
	p.FeedForward = "gated-gelu"
	if e, _ := seq2seqCost(&p, registry.CostInputs{}); e.FLOPsPerUpdate != 3*(912+192+1184+128) {
		t.Errorf("gated: %v per update; want %v", e.FLOPsPerUpdate, 3*(912+192+1184+128))
	}
}

// TestT5ContrastiveCostFromCheckpoint reads the shape from init's
// config.json (a one-block T5 with 2 decoder blocks): in encdec mode each
// of the three inputs costs the encoder (912 for 3 tokens) and one
// decoder step per block without the head: self-attention 4*16 + 4*16 +
// 4*4 = 144, cross-attention 64 + 4*3*16 + 4*3*4 = 304, feed-forward 128:
// 576 a block, 1152 for two. (912 + 1152) x 3 inputs x 3 = 18576.
func TestT5ContrastiveCostFromCheckpoint(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"d_model": 4, "d_kv": 2, "num_heads": 2, "d_ff": 8, "num_layers": 1, "num_decoder_layers": 2, "vocab_size": 12, "feed_forward_proj": "relu"}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p := t5ContrastiveType().Params.(T5ContrastiveParams)
	p.MaxLength, p.BatchSize, p.MaxSteps, p.Mode, p.HardNegatives = 3, 1, 2, "encdec", true
	in := registry.CostInputs{Computed: map[string]registry.Artifact{"init": {Dir: dir}}, Connected: map[string]bool{"init": true}}
	e, err := t5ContrastiveCost(&p, in)
	if err != nil || e == nil || e.FLOPsPerUpdate != 18576 || e.Updates != 2 {
		t.Fatalf("estimate %+v, %v; want 18576 per update, 2 updates", e, err)
	}
	// Mean mode: the encoder alone.
	p.Mode = "mean"
	if e, _ := t5ContrastiveCost(&p, in); e.FLOPsPerUpdate != 912*3*3 {
		t.Errorf("mean mode: %v; want %v", e.FLOPsPerUpdate, 912*3*3)
	}
	// init connected but not computed: no estimate yet.
	if e, err := t5ContrastiveCost(&p, registry.CostInputs{Connected: map[string]bool{"init": true}}); e != nil || err != nil {
		t.Errorf("uncomputed init: %+v, %v", e, err)
	}
}

// TestCausalLMCostHandCount: one block of width 4 (feed-forward 16),
// windows of 3 tokens, a trained vocabulary of 10: 8*3*16 + 4*3*4*16 +
// 4*9*4 = 1296, the head 2*3*4*10 = 240; x3 = 4608 an update of one
// window. Windows depend on the texts, so only max_steps gives updates.
func TestCausalLMCostHandCount(t *testing.T) {
	p := causalLMType().Params.(CausalLMParams)
	p.LMArchitecture = LMArchitecture{FromScratch: true, Layers: 1, Hidden: 4, Heads: 2, Context: 8, Vocab: LMVocabTrain, VocabSize: 10}
	p.MaxLength, p.BatchSize, p.MaxSteps = 3, 1, 7
	e, err := causalLMCost(&p, registry.CostInputs{})
	if err != nil || e == nil || e.FLOPsPerUpdate != 4608 || e.Updates != 7 {
		t.Fatalf("estimate %+v, %v; want 4608 per update, 7 updates", e, err)
	}
	p.MaxSteps = 0
	if e, _ := causalLMCost(&p, registry.CostInputs{}); e.Updates != 0 || !strings.Contains(e.Note, "unknown") {
		t.Errorf("epochs: %+v; want unknown updates", e)
	}
}

// TestPaSeRCostCountsDecoderAndMLM: the decoder and the MLM pass add to
// the two encoder passes, and turning MLM off removes exactly its part.
func TestPaSeRCostCountsDecoderAndMLM(t *testing.T) {
	p := paserType().Params.(PaSeRParams)
	p.Architecture.Layers, p.Architecture.Hidden, p.Architecture.Heads, p.Architecture.Intermediate = 1, 8, 2, 32
	p.MaxLength, p.MaxTargetLength, p.BatchSize, p.MaxSteps, p.DecoderLayers = 4, 3, 1, 1, 1
	with, err := paserCost(&p, registry.CostInputs{})
	if err != nil || with == nil {
		t.Fatalf("estimate: %+v, %v", with, err)
	}
	p.MLM = false
	without, _ := paserCost(&p, registry.CostInputs{})
	s, _, _ := p.Architecture.shape(registry.CostInputs{})
	h, v := float64(s.Hidden), float64(s.Vocab)
	mlm := s.forward(4) + p.MLMProbability*4*(2*h*h+2*h*v)
	if got := (with.FLOPsPerUpdate - without.FLOPsPerUpdate) / 3; got != mlm {
		t.Errorf("MLM part %v; want %v", got, mlm)
	}
	enc := 2 * (s.forward(4) + s.pooler(p.Pooling))
	if without.FLOPsPerUpdate/3 <= enc {
		t.Errorf("per example %v: the decoder adds nothing to the encoder's %v", without.FLOPsPerUpdate/3, enc)
	}
}
