package train

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/dataset"
	"repro/internal/encoder"
	"repro/internal/metrics"
	"repro/internal/rows"
	"repro/registry"
)

// miniUnsup and miniSup are the mini-profile settings measured for the
// report (see TestMiniExperiment): a 2-layer, 128-wide BERT from scratch
// with bert-base-uncased's vocabulary, GloVe in the leading 100 columns of
// the word embeddings, and mean pooling (a from-scratch [CLS] has to learn
// to summarise and collapses first: STS-B dev 16 after unsup's epoch; the
// mean starts out as an average of GloVe vectors). Paper values kept:
// unsup batch 64 and 1 epoch, sup 3 epochs, max length 32, temperature.
var miniUnsup = map[string]cty.Value{
	"layers": cty.NumberIntVal(2), "hidden": cty.NumberIntVal(128), "heads": cty.NumberIntVal(4),
	"intermediate": cty.NumberIntVal(256), "max_position": cty.NumberIntVal(128),
	"glove_init": cty.True, "pooling": cty.StringVal("mean"), "learning_rate": cty.NumberFloatVal(2e-4),
	"batch_size": cty.NumberIntVal(64), "epochs": cty.NumberIntVal(1), "eval_every": cty.NumberIntVal(60),
}

var miniSup = map[string]cty.Value{
	"layers": cty.NumberIntVal(2), "hidden": cty.NumberIntVal(128), "heads": cty.NumberIntVal(4),
	"intermediate": cty.NumberIntVal(256), "max_position": cty.NumberIntVal(128),
	"glove_init": cty.True, "pooling": cty.StringVal("mean"), "learning_rate": cty.NumberFloatVal(1e-3),
	"batch_size": cty.NumberIntVal(64), "eval_every": cty.NumberIntVal(69),
}

// override applies REPRO_MINI_<STAGE>="name=value,..." to settings, so the
// measurement can be repeated with other values without editing the test.
func override(t *testing.T, env string, base map[string]cty.Value) map[string]cty.Value {
	out := map[string]cty.Value{}
	for k, v := range base {
		out[k] = v
	}
	spec := os.Getenv(env)
	if spec == "" {
		return out
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("%s: %q is not name=value", env, kv)
		}
		switch {
		case v == "true" || v == "false":
			out[k] = cty.BoolVal(v == "true")
		default:
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				out[k] = cty.NumberFloatVal(f)
			} else {
				out[k] = cty.StringVal(v)
			}
		}
	}
	return out
}

// stsEval runs the seven-task STS protocol (test splits) on an encoder.
func stsEval(t *testing.T, c *dataset.Catalogue, dir string) metrics.STSResult {
	t.Helper()
	enc, err := encoder.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var scored []metrics.ScoredPair
	for _, task := range dataset.STSTasks {
		ps, err := c.STS(task, "test")
		if err != nil {
			t.Fatal(err)
		}
		var s1, s2 []string
		for _, p := range ps {
			s1 = append(s1, strings.Join(strings.Fields(p.Sentence1), " "))
			s2 = append(s2, strings.Join(strings.Fields(p.Sentence2), " "))
		}
		v1, err := enc.Encode(context.Background(), s1)
		if err != nil {
			t.Fatal(err)
		}
		v2, err := enc.Encode(context.Background(), s2)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range ps {
			scored = append(scored, metrics.ScoredPair{Task: p.Task, Subset: p.Subset, Sys: metrics.Cosine(v1[i], v2[i]), Gold: p.Score})
		}
	}
	res, err := metrics.STS(scored)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestMiniExperiment measures the mini SimCSE experiment: unsupervised
// SimCSE on the 11,914 wiki sentences, supervised SimCSE on the 8,816 NLI
// triplets, both from scratch with STS-B dev model selection, then the
// seven STS test sets. It takes minutes, so it runs only with
// REPRO_MINI=1; it logs the numbers quoted in the report.
func TestMiniExperiment(t *testing.T) {
	if os.Getenv("REPRO_MINI") != "1" {
		t.Skip("set REPRO_MINI=1 to run the mini SimCSE experiment (minutes)")
	}
	c := useData(t)
	wiki, err := c.Wiki()
	if err != nil {
		t.Fatal(err)
	}
	var trips []rows.Triplet
	for _, k := range []string{"snli_dev", "mnli_dev_matched", "snli_test_ptbtok"} {
		ts, err := c.NLI(k)
		if err != nil {
			t.Fatal(err)
		}
		trips = append(trips, ts...)
	}
	dev, err := c.STS("stsb", "dev")
	if err != nil {
		t.Fatal(err)
	}
	devA := artifact(t, registry.KindSTS, registry.FilePairs, dev)
	which := os.Getenv("REPRO_MINI_ONLY") // "unsup", "sup" or "" for both
	for _, st := range []struct {
		name, env string
		settings  map[string]cty.Value
		data      registry.Artifact
	}{
		{"train.simcse_unsup", "REPRO_MINI_UNSUP", miniUnsup, sentencesArtifact(t, wiki)},
		{"train.simcse_sup", "REPRO_MINI_SUP", miniSup, artifact(t, registry.KindTriplets, registry.FileTriplets, trips)},
	} {
		if which != "" && !strings.HasSuffix(st.name, "_"+which) {
			continue
		}
		set := override(t, st.env, st.settings)
		t0 := time.Now()
		out, pr, err := stageRun{name: st.name, set: set, seed: 42,
			inputs: map[string]registry.Artifact{"data": st.data, "dev": devA}}.run(t)
		if err != nil {
			t.Fatal(err)
		}
		train := time.Since(t0)
		if os.Getenv("REPRO_MINI_NOEVAL") == "1" {
			t.Logf("%s: trained in %s (%d updates; last status %q)", st.name, train.Round(time.Second), pr.done, pr.status)
			continue
		}
		t1 := time.Now()
		res := stsEval(t, c, out)
		hist, _ := os.ReadFile(out + "/" + FileHistory)
		t.Logf("%s: trained in %s (%d updates; last status %q), STS eval in %s", st.name, train.Round(time.Second), pr.done, pr.status, time.Since(t1).Round(time.Second))
		t.Logf("%s: STS test Spearman: sts12 %.2f sts13 %.2f sts14 %.2f sts15 %.2f sts16 %.2f stsb %.2f sickr %.2f avg %.2f",
			st.name, res.Tasks["sts12"].Spearman, res.Tasks["sts13"].Spearman, res.Tasks["sts14"].Spearman, res.Tasks["sts15"].Spearman,
			res.Tasks["sts16"].Spearman, res.Tasks["stsb"].Spearman, res.Tasks["sickr"].Spearman, res.Avg)
		t.Logf("%s: history %s", st.name, hist)
	}
}
