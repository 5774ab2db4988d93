package train

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/encoder/pooled"
	"repro/internal/mlm"
	"repro/registry"
)

// tinyMLM is a from-scratch masked-LM run small enough for a test.
func tinyMLM(extra map[string]cty.Value) map[string]cty.Value {
	m := map[string]cty.Value{
		"layers": cty.NumberIntVal(1), "hidden": cty.NumberIntVal(32), "heads": cty.NumberIntVal(2),
		"intermediate": cty.NumberIntVal(64), "max_position": cty.NumberIntVal(64),
		"vocab": cty.StringVal("train"), "vocab_size": cty.NumberIntVal(600),
		"batch_size": cty.NumberIntVal(16), "max_length": cty.NumberIntVal(32), "max_steps": cty.NumberIntVal(30),
		"eval_every": cty.NumberIntVal(10), "warmup": cty.NumberIntVal(3), "learning_rate": cty.NumberFloatVal(3e-3),
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestMLMStage(t *testing.T) {
	d := loadReal(t, 400, 0, 0)
	wiki, _ := d.c.Wiki()
	dev := sentencesArtifact(t, wiki[400:480])
	for _, vocab := range []string{"train", "bpe"} {
		set := tinyMLM(map[string]cty.Value{"vocab": cty.StringVal(vocab)})
		out, pr, err := stageRun{name: "train.mlm", set: set, seed: 3,
			inputs: map[string]registry.Artifact{"data": d.wiki, "dev": dev}}.run(t)
		if err != nil {
			t.Fatalf("%s: %v", vocab, err)
		}
		if pr.done != 30 || !strings.Contains(pr.status, "dev ppl") {
			t.Errorf("%s: progress %d/%d %q", vocab, pr.done, pr.total, pr.status)
		}
		var h mlm.Report
		readJSON(t, filepath.Join(out, "pretraining.json"), &h)
		var devs []float64
		for _, pt := range h.Curve {
			if pt.Dev != nil {
				devs = append(devs, pt.Dev.Perplexity)
			}
		}
		if len(devs) != 3 || h.Steps != 30 || h.Sentences != 400 || h.Batches != 25 || h.Dev == nil {
			t.Fatalf("%s: pretraining.json %+v", vocab, h)
		}
		if !(devs[2] < devs[0]) || h.Dev.Perplexity > devs[0] {
			t.Errorf("%s: dev perplexity %v, kept %.1f: not learning", vocab, devs, h.Dev.Perplexity)
		}
		var m map[string]float64
		readJSON(t, filepath.Join(filepath.Dir(out), "metrics", registry.FileMetrics), &m)
		if m["dev_perplexity"] != h.Dev.Perplexity || m["dev_accuracy"] != 100*h.Dev.Accuracy || m["steps"] != 30 {
			t.Errorf("%s: metrics %v", vocab, m)
		}
		if _, err := os.Stat(filepath.Join(out, "loss.png")); err != nil {
			t.Errorf("%s: %v", vocab, err)
		}
		cfg, _ := os.ReadFile(filepath.Join(out, "config.json"))
		wantArch := map[string]string{"train": "BertForMaskedLM", "bpe": "RobertaForMaskedLM"}[vocab]
		if !strings.Contains(string(cfg), wantArch) {
			t.Errorf("%s: config.json lacks %s", vocab, wantArch)
		}
		// The artifact is an encoder a fine-tuning stage starts from.
		p, err := pooled.Load(out)
		if err != nil {
			t.Fatalf("%s: %v", vocab, err)
		}
		if p.Pooling != "mean" || (vocab == "bpe") != (p.Encoder.Config.PositionOffset == 2) {
			t.Errorf("%s: pooling %q, position offset %d", vocab, p.Pooling, p.Encoder.Config.PositionOffset)
		}
		if _, _, err := (stageRun{name: "train.simcse_unsup", set: tiny(map[string]cty.Value{"pooling": cty.StringVal("mean")}), seed: 1,
			inputs: map[string]registry.Artifact{"data": d.wiki, "init": {Kind: registry.KindEncoder, Dir: out}}}).run(t); err != nil {
			t.Errorf("%s: SimCSE from the pretrained model: %v", vocab, err)
		}
	}
}

// TestMLMDeterministicAndResumable: the same seed gives the same artifact
// bit for bit; a run killed halfway and resumed gives it too (curve
// included); continuing from the artifact restores its head.
func TestMLMDeterministicAndResumable(t *testing.T) {
	d := loadReal(t, 300, 0, 0)
	wiki, _ := d.c.Wiki()
	dev := sentencesArtifact(t, wiki[300:340])
	in := map[string]registry.Artifact{"data": d.wiki, "dev": dev}
	run := func(seed int64, work string) (string, string) {
		out, _, err := stageRun{name: "train.mlm", set: tinyMLM(nil), seed: seed, work: work, inputs: in}.run(t)
		if err != nil {
			t.Fatal(err)
		}
		return out, dirDigest(t, out)
	}
	first, a := run(5, t.TempDir())
	if _, b := run(5, ""); a != b {
		t.Fatal("same seed, different artifacts")
	}
	if _, c := run(6, ""); c == a {
		t.Fatal("different seeds, same artifact")
	}
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	r := stageRun{name: "train.mlm", set: tinyMLM(nil), seed: 5, work: work, inputs: in}
	if err := r.runCtx(t, ctx, func(done int) {
		if done == 17 {
			cancel()
		}
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	if _, got := run(5, work); got != a {
		t.Fatal("resumed run differs from the uninterrupted one")
	}
	// Continuing pretraining from the artifact: the head comes back, so the
	// first evaluation is the finished run's perplexity, not a fresh head's.
	var h mlm.Report
	readJSON(t, filepath.Join(first, "pretraining.json"), &h)
	more := tinyMLM(map[string]cty.Value{"max_steps": cty.NumberIntVal(1), "eval_every": cty.NumberIntVal(1), "learning_rate": cty.NumberFloatVal(1e-9)})
	out, _, err := stageRun{name: "train.mlm", set: more, seed: 5,
		inputs: map[string]registry.Artifact{"data": d.wiki, "dev": dev, "init": {Kind: registry.KindEncoder, Dir: first}}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	var h2 mlm.Report
	readJSON(t, filepath.Join(out, "pretraining.json"), &h2)
	if d := h2.Dev.Perplexity / h.Dev.Perplexity; d < 0.98 || d > 1.02 {
		t.Errorf("continued run starts at perplexity %.2f, the finished run ended at %.2f", h2.Dev.Perplexity, h.Dev.Perplexity)
	}
}

func TestMLMErrors(t *testing.T) {
	d := loadReal(t, 100, 0, 0)
	for _, tc := range []struct {
		set  map[string]cty.Value
		want string
	}{
		{map[string]cty.Value{"mask_probability": cty.NumberFloatVal(0)}, "mask probability 0 must lie in (0, 1)"},
		{map[string]cty.Value{"mask_token": cty.NumberFloatVal(0.95)}, "sum to at most 1"},
		{map[string]cty.Value{"max_length": cty.NumberIntVal(2)}, "max_length: 2"},
		{map[string]cty.Value{"pooling": cty.StringVal("max")}, `pooling: "max"`},
		{map[string]cty.Value{"batch_size": cty.NumberIntVal(1)}, "batch_size: 1"},
		{map[string]cty.Value{"vocab": cty.StringVal("bpe"), "vocab_size": cty.NumberIntVal(200)}, "vocab_size: 200 is too small for a byte-level BPE"},
		{map[string]cty.Value{"dev_sentences": cty.NumberIntVal(-1)}, "dev_sentences: -1"},
		{map[string]cty.Value{"glove_scale": cty.NumberIntVal(0)}, "glove_scale: 0 must be positive"},
		{map[string]cty.Value{"next_sentence": cty.True, "vocab": cty.StringVal("bpe")}, "next_sentence: needs a BERT-shaped encoder"},
		{map[string]cty.Value{"next_sentence": cty.True, "max_length": cty.NumberIntVal(4)}, "max_length: 4 leaves no room for a next-sentence pair"},
	} {
		_, _, err := stageRun{name: "train.mlm", set: tinyMLM(tc.set), inputs: map[string]registry.Artifact{"data": d.wiki}}.run(t)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.set, err, tc.want)
		}
	}
}

// TestMLMNextSentence: with next_sentence the stage trains BERT's two
// objectives on the sentences in order: the classifier's training accuracy
// is logged and reported, the checkpoint is a BertForPreTraining with a
// pooler (so a fine-tuning stage's "cls" pooling reads the trained one),
// the dev evaluation is still single-sentence masked-LM, and a stage that
// continues from it keeps the classifier.
func TestMLMNextSentence(t *testing.T) {
	d := loadReal(t, 400, 0, 0)
	wiki, _ := d.c.Wiki()
	dev := sentencesArtifact(t, wiki[400:480])
	set := tinyMLM(map[string]cty.Value{"next_sentence": cty.True})
	out, _, err := stageRun{name: "train.mlm", set: set, seed: 3,
		inputs: map[string]registry.Artifact{"data": d.wiki, "dev": dev}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]float64
	readJSON(t, filepath.Join(filepath.Dir(out), "metrics", registry.FileMetrics), &m)
	if acc, ok := m["nsp_accuracy"]; !ok || acc < 20 || acc > 100 || m["dev_perplexity"] <= 1 {
		t.Errorf("metrics %v", m)
	}
	var h mlm.Report
	readJSON(t, filepath.Join(out, "pretraining.json"), &h)
	if len(h.Curve) == 0 || h.Curve[len(h.Curve)-1].NSP == nil {
		t.Errorf("pretraining.json's curve has no next-sentence accuracy: %+v", h.Curve)
	}
	cfg, _ := os.ReadFile(filepath.Join(out, "config.json"))
	if !strings.Contains(string(cfg), "BertForPreTraining") {
		t.Errorf("config.json: %s", cfg)
	}
	p, err := pooled.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Encoder.Pooler == nil {
		t.Error("the pretrained encoder has no pooler")
	}
	// Continued with masked-LM only, the classifier and the pooler stay.
	out2, _, err := stageRun{name: "train.mlm", set: tinyMLM(map[string]cty.Value{"max_steps": cty.NumberIntVal(5)}), seed: 4,
		inputs: map[string]registry.Artifact{"data": d.wiki, "init": {Kind: registry.KindEncoder, Dir: out}}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	cfg2, _ := os.ReadFile(filepath.Join(out2, "config.json"))
	if !strings.Contains(string(cfg2), "BertForPreTraining") {
		t.Errorf("continued: config.json: %s", cfg2)
	}
}
