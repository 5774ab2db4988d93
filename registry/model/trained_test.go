package model_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/encoder/pooled"
	"repro/internal/rows"
	"repro/registry"
	"repro/registry/evaluate"
	"repro/registry/model"
	"repro/registry/model/modeltest"
	"repro/registry/train"
)

// stages holds every type these tests drive.
func stages() *registry.Registry {
	r := registry.New()
	model.Register(r)
	train.Register(r)
	train.RegisterLM(r)
	evaluate.Register(r)
	return r
}

// call runs stage type name with set over its defaults, the given inputs
// and seed 7, and returns the directory of output out.
func call(t *testing.T, name string, set map[string]cty.Value, inputs map[string]registry.Artifact, out string) registry.Artifact {
	t.Helper()
	st, ok := stages().Lookup(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	obj, err := st.ParamObject(set)
	if err != nil {
		t.Fatal(err)
	}
	params, err := st.DecodeParams(obj)
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	outs := map[string]string{}
	for _, p := range st.Outputs {
		outs[p.Name] = filepath.Join(parent, p.Name)
		if err := os.Mkdir(outs[p.Name], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := &registry.Env{Params: params, Inputs: inputs, Outputs: outs, Work: t.TempDir(), Seed: 7}
	if err := st.Call(context.Background(), env); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	port, _ := st.Output(out)
	return registry.Artifact{Kind: port.Kind, Dir: outs[out]}
}

func rowsArtifact[T any](t *testing.T, kind registry.Kind, file string, rs []T) registry.Artifact {
	t.Helper()
	dir := t.TempDir()
	if err := rows.Write(filepath.Join(dir, file), rs); err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Kind: kind, Dir: dir}
}

func sentencesArtifact(t *testing.T) registry.Artifact {
	var ss []rows.Sentence
	for _, s := range append(modeltest.Texts, "A boy is riding a bicycle down the hill.", "The market was busy on Saturday morning.",
		"He poured a cup of coffee and sat down.", "The committee approved the new budget yesterday.",
		"A girl is painting a picture of a horse.", "The river flooded the village after the storm.") {
		ss = append(ss, rows.Sentence{Text: s})
	}
	return rowsArtifact(t, registry.KindSentences, registry.FileSentences, ss)
}

func stsArtifact(t *testing.T) registry.Artifact {
	ps := []rows.STSPair{
		{Task: "stsb", Subset: "test", Sentence1: "A man is playing a guitar.", Sentence2: "A man plays the guitar.", Score: 4.8},
		{Task: "stsb", Subset: "test", Sentence1: "A woman is slicing an onion.", Sentence2: "A woman is cutting an onion.", Score: 4.2},
		{Task: "stsb", Subset: "test", Sentence1: "Two dogs are running.", Sentence2: "A cat is sleeping.", Score: 0.6},
		{Task: "stsb", Subset: "test", Sentence1: "The train arrived late.", Sentence2: "The train was two hours late.", Score: 3.5},
		{Task: "stsb", Subset: "test", Sentence1: "A chef is cooking pasta.", Sentence2: "Children play football in the park.", Score: 0.2},
		{Task: "stsb", Subset: "test", Sentence1: "She is reading a book.", Sentence2: "A woman reads a novel under a tree.", Score: 3.1},
	}
	return rowsArtifact(t, registry.KindSTS, registry.FilePairs, ps)
}

func metrics(t *testing.T, a registry.Artifact) []byte {
	t.Helper()
	b, err := os.ReadFile(a.Path(registry.FileMetrics))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadedEncoderScoresAsTrained: the directory a training stage saves
// is itself a Hugging Face checkpoint; loaded by model.hf_encoder with the
// pooling and length the training stage chose, evaluate.sts scores it to
// the same bytes of metrics.json as the trained artifact -- what a reviewer
// relies on when the checkpoint is an author's.
func TestLoadedEncoderScoresAsTrained(t *testing.T) {
	sts := stsArtifact(t)
	for _, pool := range []string{"mean", "cls"} {
		trained := call(t, "train.simcse_unsup", map[string]cty.Value{
			"from_scratch": cty.True, "layers": cty.NumberIntVal(1), "hidden": cty.NumberIntVal(16), "heads": cty.NumberIntVal(2),
			"intermediate": cty.NumberIntVal(32), "max_position": cty.NumberIntVal(40), "vocab": cty.StringVal("train"),
			"vocab_size": cty.NumberIntVal(200), "batch_size": cty.NumberIntVal(4), "max_steps": cty.NumberIntVal(3),
			"pooling": cty.StringVal(pool), "mlp_only_train": cty.False, "learning_rate": cty.NumberFloatVal(1e-3),
		}, map[string]registry.Artifact{"data": sentencesArtifact(t)}, "model")
		m, err := pooled.Load(trained.Dir)
		if err != nil {
			t.Fatal(err)
		}
		loaded := call(t, "model.hf_encoder", map[string]cty.Value{
			"checkpoint": cty.StringVal(trained.Dir), "pooling": cty.StringVal(string(m.Pooling)), "max_length": cty.NumberIntVal(int64(m.MaxLength)),
		}, nil, "model")
		want := metrics(t, call(t, "evaluate.sts", nil, map[string]registry.Artifact{"encoder": trained, "data": sts}, "metrics"))
		got := metrics(t, call(t, "evaluate.sts", nil, map[string]registry.Artifact{"encoder": loaded, "data": sts}, "metrics"))
		if !bytes.Equal(got, want) {
			t.Errorf("pooling %s: metrics of the loaded model\n%s\ndiffer from the trained model's\n%s", pool, got, want)
		}
		// The comparison can fail: the same weights read another way
		// score differently.
		other := call(t, "model.hf_encoder", map[string]cty.Value{"checkpoint": cty.StringVal(trained.Dir), "pooling": cty.StringVal("cls_before_pooler")}, nil, "model")
		if bytes.Equal(metrics(t, call(t, "evaluate.sts", nil, map[string]registry.Artifact{"encoder": other, "data": sts}, "metrics")), want) {
			t.Errorf("pooling %s: cls_before_pooler scores the same bytes", pool)
		}
	}
}

// TestLoadedLMScoresAsTrained: the same for a language model: a GPT-2 that
// train.causal_lm saved, loaded by model.hf_lm, has the same perplexity to
// the byte (its <|endoftext|> framing kept).
func TestLoadedLMScoresAsTrained(t *testing.T) {
	texts := sentencesArtifact(t)
	trained := call(t, "train.causal_lm", map[string]cty.Value{
		"from_scratch": cty.True, "layers": cty.NumberIntVal(1), "hidden": cty.NumberIntVal(16), "heads": cty.NumberIntVal(2),
		"context": cty.NumberIntVal(64), "vocab": cty.StringVal("train"), "vocab_size": cty.NumberIntVal(300),
		"max_length": cty.NumberIntVal(16), "batch_size": cty.NumberIntVal(4), "max_steps": cty.NumberIntVal(2),
		"learning_rate": cty.NumberFloatVal(1e-3),
	}, map[string]registry.Artifact{"data": texts}, "model")
	loaded := call(t, "model.hf_lm", map[string]cty.Value{"checkpoint": cty.StringVal(trained.Dir)}, nil, "model")
	want := metrics(t, call(t, "evaluate.perplexity", nil, map[string]registry.Artifact{"model": trained, "data": texts}, "metrics"))
	got := metrics(t, call(t, "evaluate.perplexity", nil, map[string]registry.Artifact{"model": loaded, "data": texts}, "metrics"))
	if !bytes.Equal(got, want) {
		t.Errorf("perplexity of the loaded model\n%s\ndiffers from the trained model's\n%s", got, want)
	}
}
