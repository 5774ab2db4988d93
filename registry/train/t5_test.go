package train

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/generate"
	"repro/internal/model/checkpoint"
	"repro/internal/model/t5"
	"repro/internal/rows"
	"repro/registry"
)

// tinyT5 is a from-scratch T5 that trains in seconds.
func tinyT5(extra map[string]cty.Value) map[string]cty.Value {
	s := map[string]cty.Value{
		"from_scratch": cty.True, "layers": cty.NumberIntVal(1), "hidden": cty.NumberIntVal(32), "heads": cty.NumberIntVal(2),
		"ff": cty.NumberIntVal(64), "vocab_size": cty.NumberIntVal(400), "sentinels": cty.NumberIntVal(10),
		"max_source_length": cty.NumberIntVal(24), "max_target_length": cty.NumberIntVal(16),
		"batch_size": cty.NumberIntVal(16), "learning_rate": cty.NumberFloatVal(3e-3),
		"max_steps": cty.NumberIntVal(30), "eval_every": cty.NumberIntVal(15), "dropout": cty.NumberFloatVal(0),
	}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// headTask is a real-text seq2seq task: write a Wikipedia sentence's first
// three words.
func headTask(t *testing.T) (train, dev registry.Artifact) {
	t.Helper()
	c := useData(t)
	ls, err := c.Wiki()
	if err != nil {
		t.Fatal(err)
	}
	inst := func(ss []string) registry.Artifact {
		var rs []rows.Seq2Seq
		for _, s := range ss {
			w := strings.Fields(s)
			if len(w) < 3 {
				continue
			}
			rs = append(rs, rows.Seq2Seq{Source: s, Target: strings.Join(w[:3], " ")})
		}
		return artifact(t, registry.KindSeq2Seq, registry.FileInstances, rs)
	}
	return inst(ls[:600]), inst(ls[600:700])
}

func readT5History[T any](t *testing.T, dir string) T {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileHistory))
	if err != nil {
		t.Fatal(err)
	}
	var h T
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSeq2Seq trains a tiny T5 from scratch on real sentences: the dev
// perplexity falls, long sources are truncated and counted, the artifact is
// a Hugging Face T5 directory, and training continues from it as init with
// token-accuracy selection.
func TestSeq2Seq(t *testing.T) {
	train, dev := headTask(t)
	out, _, err := stageRun{name: "train.seq2seq", set: tinyT5(nil), seed: 3,
		inputs: map[string]registry.Artifact{"data": train, "dev": dev}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	h := readT5History[Seq2SeqHistory](t, out)
	if len(h.Evaluation) != 2 || h.Best == nil || -h.Evaluation[1].Metric >= -h.Evaluation[0].Metric || h.Select != "perplexity" {
		t.Fatalf("history %+v", h)
	}
	if h.Source != "from_scratch" || h.Steps != 30 || h.Overflowed.Sources == 0 || h.Overflowed.Targets > 20 {
		t.Errorf("history %+v", h)
	}
	t.Logf("dev perplexity %.2f -> %.2f, %d of %d sources truncated", -h.Evaluation[0].Metric, *h.Best, h.Overflowed.Sources, h.Instances)
	m, tok, err := t5.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if tok == nil || m.Config.NumLayers != 1 || m.Config.DropoutRate != 0.1 || m.Config.VocabSize != tok.Size() {
		t.Errorf("saved model %+v", m.Config)
	}
	init := registry.Artifact{Kind: registry.KindLanguageModel, Dir: out, Digest: "x"}
	out2, _, err := stageRun{name: "train.seq2seq", set: tinyT5(map[string]cty.Value{"layers": cty.NumberIntVal(4),
		"max_steps": cty.NumberIntVal(10), "eval_every": cty.NumberIntVal(5), "select": cty.StringVal("token_accuracy")}), seed: 3,
		inputs: map[string]registry.Artifact{"data": train, "dev": dev, "init": init}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	h2 := readT5History[Seq2SeqHistory](t, out2)
	if h2.Source != "init" || h2.Select != "token_accuracy" || h2.Best == nil || *h2.Best <= 0 || *h2.Best > 100 {
		t.Errorf("continued: %+v", h2)
	}
}

// TestSeq2SeqDeterministic: the same seed gives byte-identical artifacts,
// and a run interrupted and resumed from its work directory ends identical.
func TestSeq2SeqDeterministic(t *testing.T) {
	train, dev := headTask(t)
	in := map[string]registry.Artifact{"data": train, "dev": dev}
	set := tinyT5(map[string]cty.Value{"max_steps": cty.NumberIntVal(6), "eval_every": cty.NumberIntVal(3), "dropout": cty.NumberFloatVal(0.1)})
	run := func(work string) string {
		out, _, err := stageRun{name: "train.seq2seq", set: set, seed: 5, work: work, inputs: in}.run(t)
		if err != nil {
			t.Fatal(err)
		}
		return dirDigest(t, out)
	}
	a := run("")
	if b := run(""); a != b {
		t.Fatal("same seed, different artifacts")
	}
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	if err := (stageRun{name: "train.seq2seq", set: set, seed: 5, work: work, inputs: in}).runCtx(t, ctx, func(done int) {
		if done == 4 {
			cancel()
		}
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	if got := run(work); got != a {
		t.Fatal("resumed run differs from the uninterrupted one")
	}
}

func TestSeq2SeqErrors(t *testing.T) {
	train, _ := headTask(t)
	emptyTarget := artifact(t, registry.KindSeq2Seq, registry.FileInstances, []rows.Seq2Seq{{Source: "a b", Target: "c"}, {Source: "d", Target: " "}})
	for _, tc := range []struct {
		name   string
		set    map[string]cty.Value
		inputs map[string]registry.Artifact
		want   string
	}{
		{"overflow fail", tinyT5(map[string]cty.Value{"overflow": cty.StringVal("fail")}), map[string]registry.Artifact{"data": train},
			"more than max_source_length 24 (overflow = \"fail\""},
		{"empty target", tinyT5(nil), map[string]registry.Artifact{"data": emptyTarget}, "row 2: empty target"},
		{"no checkpoint", tinyT5(map[string]cty.Value{"from_scratch": cty.False}), map[string]registry.Artifact{"data": train}, "no pretrained model: set hf_checkpoint"},
		{"missing checkpoint", tinyT5(map[string]cty.Value{"hf_checkpoint": cty.StringVal("/nonexistent/t5")}), map[string]registry.Artifact{"data": train}, "hf_checkpoint: /nonexistent/t5 is not a directory"},
		{"ff", tinyT5(map[string]cty.Value{"feed_forward_proj": cty.StringVal("gated-silu")}), map[string]registry.Artifact{"data": train}, `feed_forward_proj: feed_forward_proj "gated-silu"`},
		{"select", tinyT5(map[string]cty.Value{"select": cty.StringVal("bleu")}), map[string]registry.Artifact{"data": train}, `select: "bleu" is not one of`},
		{"overflow", tinyT5(map[string]cty.Value{"overflow": cty.StringVal("drop")}), map[string]registry.Artifact{"data": train}, `overflow: "drop" is not one of`},
	} {
		if _, _, err := (stageRun{name: "train.seq2seq", set: tc.set, inputs: tc.inputs}).run(t); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	// A tokenizer-less init directory.
	bad := t.TempDir()
	m, _ := t5.New(tinyConfigT5(), rand.New(rand.NewPCG(1, 1)))
	if err := t5.Save(bad, m, nil, nil); err != nil {
		t.Fatal(err)
	}
	_, _, err := stageRun{name: "train.seq2seq", set: tinyT5(nil),
		inputs: map[string]registry.Artifact{"data": train, "init": {Kind: registry.KindLanguageModel, Dir: bad}}}.run(t)
	if err == nil || !strings.Contains(err.Error(), "has no tokenizer files") {
		t.Errorf("init without tokenizer: %v", err)
	}
}

func tinyConfigT5() t5.Config {
	c := t5.DefaultConfig()
	c.VocabSize, c.DModel, c.DKV, c.DFF, c.NumLayers, c.NumHeads = 50, 8, 4, 16, 1, 2
	return c
}

// TestSeq2SeqTokenizerInput: a from-scratch T5 takes a connected tokenizer
// artifact instead of training its own vocabulary.
func TestSeq2SeqTokenizerInput(t *testing.T) {
	train, _ := headTask(t)
	tok, err := t5.TrainVocab([]string{"the cat sat", "the dog ran", "the cat ran"}, 40, 3)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := checkpoint.SaveTokenizer(dir, tok, 0); err != nil {
		t.Fatal(err)
	}
	out, _, err := stageRun{name: "train.seq2seq", set: tinyT5(map[string]cty.Value{"max_steps": cty.NumberIntVal(2)}), seed: 1,
		inputs: map[string]registry.Artifact{"data": train, "tokenizer": {Kind: registry.KindTokenizer, Dir: dir}}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	m, back, err := t5.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.VocabSize != tok.Size() || back.Size() != tok.Size() {
		t.Errorf("vocabulary %d (tokenizer %d), want the connected one's %d", m.Config.VocabSize, back.Size(), tok.Size())
	}
}

// genDiscTask mixes a generation task (a Wikipedia sentence -> its first
// three words) with a discrimination task (a sentence -> "true" when it
// has more than 20 words, else "false"), as GenSE mixes T_e/T_c with T_d.
func genDiscTask(t *testing.T) (train, dev registry.Artifact, devRows []rows.Seq2Seq) {
	t.Helper()
	c := useData(t)
	ls, err := c.Wiki()
	if err != nil {
		t.Fatal(err)
	}
	build := func(ss []string) []rows.Seq2Seq {
		var rs []rows.Seq2Seq
		for _, s := range ss {
			w := strings.Fields(s)
			if len(w) < 3 {
				continue
			}
			label := "false"
			if len(w) > 20 {
				label = "true"
			}
			rs = append(rs, rows.Seq2Seq{Source: "first words: " + s, Target: strings.Join(w[:3], " ")},
				rows.Seq2Seq{Source: "long? " + s, Target: label})
		}
		return rs
	}
	devRows = build(ls[600:660])
	return artifact(t, registry.KindSeq2Seq, registry.FileInstances, build(ls[:600])),
		artifact(t, registry.KindSeq2Seq, registry.FileInstances, devRows), devRows
}

// TestSeq2SeqAccMinusPPL: GenSE's model selection. The metrics of the
// kept weights are recomputed here by other means -- the generation
// instances' perplexity from per-token log-probabilities
// (ScoreTokens), the discrimination accuracy by greedy decoding -- and
// must match the stage's, as must score = accuracy - ppl_weight x ppl.
func TestSeq2SeqAccMinusPPL(t *testing.T) {
	train, dev, devRows := genDiscTask(t)
	const weight = 2.5
	out, _, err := stageRun{name: "train.seq2seq", set: tinyT5(map[string]cty.Value{
		"select": cty.StringVal("acc_minus_ppl"), "ppl_weight": cty.NumberFloatVal(weight),
		"max_steps": cty.NumberIntVal(60), "eval_every": cty.NumberIntVal(20)}), seed: 5,
		inputs: map[string]registry.Artifact{"data": train, "dev": dev}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	h := readT5History[Seq2SeqHistory](t, out)
	if h.Select != "acc_minus_ppl" || len(h.Parts) != 3 || len(h.Evaluation) != 3 || h.Best == nil {
		t.Fatalf("history %+v", h)
	}
	for i, p := range h.Parts {
		if p.Step != h.Evaluation[i].Step || p.Score != h.Evaluation[i].Metric || p.Score != p.DiscriminationAccuracy-weight*p.GenerationPerplexity {
			t.Fatalf("evaluation %d: parts %+v, trainer's %+v", i, p, h.Evaluation[i])
		}
	}
	var metrics map[string]any
	readJSON(t, filepath.Join(filepath.Dir(out), "metrics", registry.FileMetrics), &metrics)
	num := func(k string) float64 { f, _ := metrics[k].(float64); return f }

	m, tok, err := t5.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	text := t5.NewText(tok, m.Config)
	var genSrc, genTgt, discSrc, discTgt [][]int
	for _, r := range devRows {
		src, _ := text.Encode(r.Source, 24) // tinyT5's max_source_length
		tgt, _ := text.Encode(r.Target, 16)
		if r.Target == "true" || r.Target == "false" {
			discSrc, discTgt = append(discSrc, src), append(discTgt, tgt)
		} else {
			genSrc, genTgt = append(genSrc, src), append(genTgt, tgt)
		}
	}
	lp, err := m.ScoreTokens(genSrc, genTgt)
	if err != nil {
		t.Fatal(err)
	}
	var nll float64
	n := 0
	for _, l := range lp {
		for _, v := range l {
			nll -= v
			n++
		}
	}
	ppl := math.Exp(nll / float64(n))
	outs, err := generate.Generate(context.Background(), m, discSrc, generate.Options{Sampling: generate.Sampling{TopP: 1}, MaxNewTokens: 8, EOS: m.Config.EOSTokenID})
	if err != nil {
		t.Fatal(err)
	}
	right := 0
	for i, o := range outs {
		if o.Stop == generate.StopEOS && slices.Equal(append(o.Tokens, m.Config.EOSTokenID), discTgt[i]) {
			right++
		}
	}
	acc := 100 * float64(right) / float64(len(outs))
	score := acc - weight*ppl
	t.Logf("kept step %d: generation ppl %.3f, discrimination accuracy %.1f%% (%d/%d), score %.3f", h.BestStep, ppl, acc, right, len(outs), score)
	if math.Abs(num("dev_generation_perplexity")-ppl) > 1e-3*ppl || num("dev_discrimination_accuracy") != acc ||
		math.Abs(num("dev_score")-score) > 1e-2 || num("best_dev") != num("dev_score") || metrics["select"] != "acc_minus_ppl" ||
		int(num("dev_generation_instances")) != len(genSrc) || int(num("dev_discrimination_instances")) != len(discSrc) {
		t.Fatalf("metrics.json %v; recomputed ppl %v, accuracy %v, score %v", metrics, ppl, acc, score)
	}
	if acc == 0 || acc == 100 {
		t.Errorf("accuracy %v: the check is weak at either end", acc)
	}

	// A dev set with no discrimination instance cannot be scored so.
	_, _, err = stageRun{name: "train.seq2seq", set: tinyT5(map[string]cty.Value{"select": cty.StringVal("acc_minus_ppl"),
		"discrimination_targets": cty.ListVal([]cty.Value{cty.StringVal("maybe")})}), seed: 5,
		inputs: map[string]registry.Artifact{"data": train, "dev": dev}}.run(t)
	if err == nil || !strings.Contains(err.Error(), "needs both kinds of instance") {
		t.Errorf("dev without discrimination instances: %v", err)
	}
}
