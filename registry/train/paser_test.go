package train

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/encoder"
	"repro/internal/rows"
	"repro/internal/text/mask"
	"repro/internal/text/rake"
	"repro/registry"
)

// paserRun is stageRun for the PaSeR types, which RegisterPaSeR (not
// Register) adds.
type paserRun struct {
	name   string
	set    map[string]cty.Value
	inputs map[string]registry.Artifact
	work   string
	seed   int64
}

func (s paserRun) run(t testing.TB) (string, *progress, error) {
	t.Helper()
	r := registry.New()
	RegisterPaSeR(r)
	st, ok := r.Lookup(s.name)
	if !ok {
		t.Fatalf("%s not registered", s.name)
	}
	ps, err := st.ParamSchema()
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]cty.Value{}
	set := copySet(s.set)
	for _, p := range ps {
		attrs[p.Name] = p.Default
		if v, ok := set[p.Name]; ok {
			attrs[p.Name] = v
			delete(set, p.Name)
		}
	}
	for n := range set {
		t.Fatalf("%s has no parameter %q", s.name, n)
	}
	params, err := st.DecodeParams(cty.ObjectVal(attrs))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	pr := &progress{}
	env := &registry.Env{Params: params, Inputs: s.inputs, Outputs: map[string]string{"model": out},
		Work: s.work, Seed: s.seed, Progress: pr, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return out, pr, st.Call(context.Background(), env)
}

// tinyPaSeR is a from-scratch configuration that trains in about a second.
func tinyPaSeR() map[string]cty.Value {
	return map[string]cty.Value{
		"layers": cty.NumberIntVal(2), "hidden": cty.NumberIntVal(32), "heads": cty.NumberIntVal(2),
		"intermediate": cty.NumberIntVal(64), "max_position": cty.NumberIntVal(40),
		"vocab": cty.StringVal(VocabTrain), "vocab_size": cty.NumberIntVal(500),
		"decoder_layers": cty.NumberIntVal(2), "batch_size": cty.NumberIntVal(16), "max_steps": cty.NumberIntVal(8),
		"eval_every": cty.NumberIntVal(4), "learning_rate": cty.NumberFloatVal(1e-3),
	}
}

// paserData masks the top-3 RAKE phrases of the first n distinct STS-B
// train sentences and returns the masked-pairs artifact, the STS-B dev
// artifact (first 200 pairs) and the pairs.
func paserData(t *testing.T, n int) (registry.Artifact, registry.Artifact, []mask.MaskedPair) {
	t.Helper()
	c := useData(t)
	train, err := c.STS("stsb", "train")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var pairs []mask.MaskedPair
	for _, p := range train {
		for _, s := range []string{p.Sentence1, p.Sentence2} {
			if seen[s] || len(pairs) >= n {
				continue
			}
			seen[s] = true
			mp, err := rake.MaskTopK(s, 3)
			if err != nil {
				t.Fatal(err)
			}
			pairs = append(pairs, mp)
		}
	}
	dev, err := c.STS("stsb", "dev")
	if err != nil {
		t.Fatal(err)
	}
	return artifact(t, registry.KindMaskedPairs, registry.FilePairs, pairs),
		artifact(t, registry.KindSTS, registry.FilePairs, dev[:200]), pairs
}

func copySet(m map[string]cty.Value) map[string]cty.Value {
	out := map[string]cty.Value{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestPaSeRStage trains train.paser end to end on 300 real STS sentences
// masked with RAKE; the output opens with encoder.Open and encodes; the same
// seed writes the same bytes, another seed others; a finished run's state
// in the work directory makes a re-run return the same model.
func TestPaSeRStage(t *testing.T) {
	data, dev, _ := paserData(t, 300)
	inputs := map[string]registry.Artifact{"data": data, "dev": dev}
	work := t.TempDir()
	out, pr, err := paserRun{name: "train.paser", set: tinyPaSeR(), inputs: inputs, seed: 7, work: work}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if pr.done != 8 || pr.total != 8 || !strings.Contains(pr.status, "dev") {
		t.Errorf("progress %d/%d %q", pr.done, pr.total, pr.status)
	}
	enc, err := encoder.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := enc.Encode(context.Background(), []string{"A man is playing a guitar.", "A woman slices an onion."})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || len(vs[0]) != 32 || enc.Dim() != 32 {
		t.Fatalf("encoded %d vectors of %d dims (Dim %d)", len(vs), len(vs[0]), enc.Dim())
	}
	var h History
	b, err := os.ReadFile(filepath.Join(out, FileHistory))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	if h.Stage != "train.paser" || h.Steps != 8 || len(h.Evaluation) != 2 || h.BestDev == nil || h.Examples != 300 {
		t.Errorf("history %s", b)
	}
	// The saved encoder is the encoder only: no decoder or MLM head weights.
	meta, err := os.ReadFile(filepath.Join(out, "encoder.json"))
	if err != nil || !strings.Contains(string(meta), `"cls"`) {
		t.Errorf("encoder.json %s (%v): want the training pooling cls", meta, err)
	}
	weights, _ := os.ReadFile(filepath.Join(out, "model.safetensors"))
	if strings.Contains(string(weights), "decoder.") || strings.Contains(string(weights), "cls.predictions") {
		t.Error("model.safetensors holds decoder or MLM head weights")
	}

	digest := dirDigest(t, out)
	again, _, err := paserRun{name: "train.paser", set: tinyPaSeR(), inputs: inputs, seed: 7}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if dirDigest(t, again) != digest {
		t.Error("same seed, different output")
	}
	other, _, err := paserRun{name: "train.paser", set: tinyPaSeR(), inputs: inputs, seed: 8}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if dirDigest(t, other) == digest {
		t.Error("different seeds, same output")
	}
	resumed, _, err := paserRun{name: "train.paser", set: tinyPaSeR(), inputs: inputs, seed: 7, work: work}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if dirDigest(t, resumed) != digest {
		t.Error("re-run on the finished work directory gave a different output")
	}
}

// TestPaSeRVariants runs the ablation settings the paper's tables vary:
// the poolings of Table 9, no MLM, the projected memory, m = n = 0.1.
func TestPaSeRVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("trains four small models")
	}
	data, _, _ := paserData(t, 120)
	for name, set := range map[string]map[string]cty.Value{
		"top2_avg":       {"pooling": cty.StringVal("top2_avg")},
		"first_last_avg": {"pooling": cty.StringVal("first_last_avg"), "mlm": cty.False},
		"project":        {"memory": cty.StringVal("project"), "eval_pooling": cty.StringVal("cls_before_pooler")},
		"small m n":      {"m": cty.NumberFloatVal(0.1), "n": cty.NumberFloatVal(0.1), "pooling": cty.StringVal("mean")},
	} {
		s := tinyPaSeR()
		s["max_steps"] = cty.NumberIntVal(3)
		for k, v := range set {
			s[k] = v
		}
		out, _, err := paserRun{name: "train.paser", set: s, inputs: map[string]registry.Artifact{"data": data}, seed: 1}.run(t)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := encoder.Open(out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

func TestPaSeRBadInput(t *testing.T) {
	data, _, _ := paserData(t, 40)
	for name, c := range map[string]struct {
		set  map[string]cty.Value
		want string
	}{
		"decoder_layers": {map[string]cty.Value{"decoder_layers": cty.NumberIntVal(0)}, "decoder_layers"},
		"m":              {map[string]cty.Value{"m": cty.NumberFloatVal(-1)}, "m:"},
		"memory":         {map[string]cty.Value{"memory": cty.StringVal("concat")}, "memory"},
		"pooling":        {map[string]cty.Value{"pooling": cty.StringVal("max")}, "pooling"},
		"eval_pooling":   {map[string]cty.Value{"eval_pooling": cty.StringVal("max")}, "eval_pooling"},
		"mlm":            {map[string]cty.Value{"mlm_probability": cty.NumberFloatVal(0)}, "mlm_probability"},
		"target":         {map[string]cty.Value{"max_target_length": cty.NumberIntVal(100)}, "max_target_length"},
		"batch":          {map[string]cty.Value{"batch_size": cty.NumberIntVal(100)}, "batch_size"},
	} {
		s := tinyPaSeR()
		for k, v := range c.set {
			s[k] = v
		}
		_, _, err := paserRun{name: "train.paser", set: s, inputs: map[string]registry.Artifact{"data": data}, seed: 1}.run(t)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", name, err, c.want)
		}
	}
	// A malformed row is reported with its file and line.
	dir := t.TempDir()
	path := filepath.Join(dir, registry.FilePairs)
	if err := os.WriteFile(path, []byte(`{"sentence": "a b", "masked": "a [MASK]", "targets": ["b"]}`+"\n"+`{"sentence": 3}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := registry.Artifact{Kind: registry.KindMaskedPairs, Dir: dir}
	_, _, err := paserRun{name: "train.paser", set: tinyPaSeR(), inputs: map[string]registry.Artifact{"data": bad}, seed: 1}.run(t)
	if err == nil || !strings.Contains(err.Error(), path+":2") {
		t.Errorf("malformed row: %v", err)
	}
	// An empty masked sentence names its row.
	if err := rows.Write(path, []mask.MaskedPair{{Sentence: "a b", Masked: "a [MASK]", Targets: []string{"b"}}, {Sentence: "c", Masked: ""}}); err != nil {
		t.Fatal(err)
	}
	s := tinyPaSeR()
	s["batch_size"] = cty.NumberIntVal(2)
	_, _, err = paserRun{name: "train.paser", set: s, inputs: map[string]registry.Artifact{"data": bad}, seed: 1}.run(t)
	if err == nil || !strings.Contains(err.Error(), "row 2") {
		t.Errorf("empty masked sentence: %v", err)
	}
}

// TestPaSeRSupStage continues a tiny unsupervised PaSeR encoder with the
// supervised objective on real NLI triplets and masked anchors.
func TestPaSeRSupStage(t *testing.T) {
	data, dev, _ := paserData(t, 200)
	unsup, _, err := paserRun{name: "train.paser", set: tinyPaSeR(), inputs: map[string]registry.Artifact{"data": data}, seed: 3}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	c := useData(t)
	ts, err := c.NLI("snli_dev")
	if err != nil {
		t.Fatal(err)
	}
	ts = ts[:96]
	var masked []mask.MaskedPair
	for _, tr := range ts {
		mp, err := rake.MaskTopK(tr.Anchor, 3)
		if err != nil {
			t.Fatal(err)
		}
		masked = append(masked, mp)
	}
	inputs := map[string]registry.Artifact{
		"triplets": artifact(t, registry.KindTriplets, registry.FileTriplets, ts),
		"masked":   artifact(t, registry.KindMaskedPairs, registry.FilePairs, masked[:50]),
		"init":     {Kind: registry.KindEncoder, Dir: unsup},
		"dev":      dev,
	}
	set := map[string]cty.Value{"decoder_layers": cty.NumberIntVal(1), "batch_size": cty.NumberIntVal(16),
		"max_steps": cty.NumberIntVal(4), "eval_every": cty.NumberIntVal(2), "alpha": cty.NumberFloatVal(0.5)}
	out, pr, err := paserRun{name: "train.paser_sup", set: copySet(set), inputs: inputs, seed: 3}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if pr.done != 4 {
		t.Errorf("progress %d/%d", pr.done, pr.total)
	}
	enc, err := encoder.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if enc.Dim() != 32 {
		t.Errorf("dim %d", enc.Dim())
	}
	if dirDigest(t, out) == dirDigest(t, unsup) {
		t.Error("supervised training left the encoder unchanged")
	}
	bad := copySet(set)
	bad["alpha"] = cty.NumberFloatVal(-1)
	if _, _, err := (paserRun{name: "train.paser_sup", set: bad, inputs: inputs, seed: 3}).run(t); err == nil || !strings.Contains(err.Error(), "alpha") {
		t.Errorf("negative alpha: %v", err)
	}
	noInit := map[string]registry.Artifact{"triplets": inputs["triplets"], "masked": inputs["masked"]}
	if _, _, err := (paserRun{name: "train.paser_sup", set: copySet(set), inputs: noInit, seed: 3}).run(t); err == nil || !strings.Contains(err.Error(), "init") {
		t.Errorf("no init: %v", err)
	}
}
