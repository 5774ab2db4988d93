package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/registry"
)

// tinyUnsup is a small BERT-shaped train.simcse_unsup configuration: 2
// layers, hidden 8, feed-forward 32, 4 tokens, batch 2, pooling cls.
func tinyUnsup() *SimCSEUnsupParams {
	p := simcseUnsupType().Params.(SimCSEUnsupParams)
	p.Layers, p.Hidden, p.Heads, p.Intermediate = 2, 8, 2, 32
	p.MaxLength, p.BatchSize, p.MaxSteps = 4, 2, 5
	return &p
}

// TestCostHandCount checks the estimate against a count by hand. One
// sequence of 4 tokens, per layer: Q, K, V, O projections 4 x 2*4*8*8 =
// 2048, feed-forward 2 x 2*4*8*32 = 4096, attention scores and weighted
// sum 2 x 2*4*4*8 = 512: 6656, two layers 13312, the [CLS] MLP head
// 2*8*8 = 128: 13440. Two views per sentence, two sentences per batch:
// 53760 forward, x3 with the backward pass: 161280 per update; 5 updates:
// 806400.
func TestCostHandCount(t *testing.T) {
	p := tinyUnsup()
	e, err := simcseUnsupCost(p, registry.CostInputs{})
	if err != nil || e == nil {
		t.Fatalf("estimate: %v, %v", e, err)
	}
	if e.FLOPsPerUpdate != 161280 || e.Updates != 5 || e.FLOPs() != 806400 {
		t.Errorf("estimate %+v, FLOPs %v; want 161280 per update, 5 updates, 806400", e, e.FLOPs())
	}
	// Accumulation multiplies an update's micro-batches.
	p.Accumulation = 3
	if e, _ := simcseUnsupCost(p, registry.CostInputs{}); e.FLOPsPerUpdate != 3*161280 || e.Updates != 5 {
		t.Errorf("accumulation 3: %+v", e)
	}
}

func TestCostEpochs(t *testing.T) {
	p := tinyUnsup()
	p.MaxSteps, p.Epochs = 0, 3
	// Data not computed yet: the updates are unknown, not guessed.
	e, err := simcseUnsupCost(p, registry.CostInputs{Connected: map[string]bool{"data": true}})
	if err != nil || e == nil || e.Updates != 0 || e.FLOPs() != 0 || !strings.Contains(e.Note, "updates unknown") {
		t.Fatalf("uncomputed data: %+v, %v", e, err)
	}
	// Five sentences (a blank line is no row), batch 2: 3 micro-batches
	// an epoch (the short last one kept), 3 epochs: 9 updates.
	dir := t.TempDir()
	rowsText := `{"text":"a"}` + "\n" + `{"text":"b"}` + "\n\n" + `{"text":"c"}` + "\n" + `{"text":"d"}` + "\n" + `{"text":"e"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, registry.FileSentences), []byte(rowsText), 0o644); err != nil {
		t.Fatal(err)
	}
	in := registry.CostInputs{Computed: map[string]registry.Artifact{"data": {Dir: dir}}, Connected: map[string]bool{"data": true}}
	if e, err := simcseUnsupCost(p, in); err != nil || e.Updates != 9 || e.FLOPs() != 9*161280 {
		t.Errorf("5 sentences, batch 2, 3 epochs: %+v, %v; want 9 updates", e, err)
	}
	// max_sentences 4: 2 micro-batches an epoch; accumulation 2: 1 update.
	p.MaxSentences, p.Accumulation = 4, 2
	if e, err := simcseUnsupCost(p, in); err != nil || e.Updates != 3 {
		t.Errorf("4 sentences, batch 2, accumulation 2, 3 epochs: %+v, %v; want 3 updates", e, err)
	}
}

func TestCostShapeSources(t *testing.T) {
	p := tinyUnsup()
	// An init model whose stage has not run: the shape is unknown.
	if e, err := simcseUnsupCost(p, registry.CostInputs{Connected: map[string]bool{"init": true}}); e != nil || err != nil {
		t.Errorf("uncomputed init: %+v, %v; want no estimate", e, err)
	}
	// A checkpoint's config.json overrides the architecture parameters.
	dir := t.TempDir()
	cfg := `{"num_hidden_layers": 4, "hidden_size": 8, "intermediate_size": 32, "vocab_size": 100}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p.HFCheckpoint = dir
	e, err := simcseUnsupCost(p, registry.CostInputs{})
	// Four layers: 2*13312 + 128 per sequence.
	if err != nil || e.FLOPsPerUpdate != 3*2*2*(2*13312+128) || !strings.Contains(e.Note, "hf_checkpoint") {
		t.Errorf("hf_checkpoint: %+v, %v", e, err)
	}
	// The same file as the init input's.
	p.HFCheckpoint = ""
	in := registry.CostInputs{Computed: map[string]registry.Artifact{"init": {Dir: dir}}, Connected: map[string]bool{"init": true}}
	if e2, err := simcseUnsupCost(p, in); err != nil || e2.FLOPsPerUpdate != e.FLOPsPerUpdate {
		t.Errorf("init: %+v, %v", e2, err)
	}
}

// TestCostMLM: the masked-LM head runs on the mask_probability share of
// the tokens; an epoch-based run's updates are unknown before it runs.
func TestCostMLM(t *testing.T) {
	p := mlmType().Params.(MLMParams)
	p.Layers, p.Hidden, p.Intermediate, p.MaxLength, p.BatchSize, p.MaxSteps = 2, 8, 32, 4, 2, 10
	p.Vocab, p.VocabSize, p.MaskProbability = VocabTrain, 100, 0.25
	e, err := mlmCost(&p, registry.CostInputs{})
	// Per sequence: 13312 encoder + 0.25*4 tokens * (2*8*8 + 2*8*100) = 1728.
	if err != nil || e.FLOPsPerUpdate != 3*2*(13312+1728) || e.Updates != 10 {
		t.Errorf("mlm: %+v, %v", e, err)
	}
	p.MaxSteps = 0
	if e, err := mlmCost(&p, registry.CostInputs{}); err != nil || e.Updates != 0 || !strings.Contains(e.Note, "unknown") {
		t.Errorf("mlm by epochs: %+v, %v", e, err)
	}
}
