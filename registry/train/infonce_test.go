package train

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/encoder"
	"repro/internal/infocse"
	"repro/internal/rows"
	"repro/registry"
)

// bbc returns the first n BBC articles (duplicates dropped) and n more
// for validation.
func bbc(t *testing.T, n int) (train, val []rows.Document) {
	t.Helper()
	c := useData(t)
	docs, err := c.BBC()
	if err != nil {
		t.Fatal(err)
	}
	var out []rows.Document
	for _, d := range docs {
		if d.DupOf == "" {
			out = append(out, rows.Document{ID: d.ID, Category: d.Category, Headline: d.Headline, Sentences: d.Sentences})
		}
	}
	// Every 10th article from the whole corpus, so both sets span the
	// five categories.
	var a, b []rows.Document
	for i := 0; i < len(out) && (len(a) < n || len(b) < n); i += 10 {
		if len(a) < n {
			a = append(a, out[i])
		} else {
			b = append(b, out[i])
		}
	}
	return a, b
}

// neighbourPairs are CONPONO pairs (window 1) of docs.
func neighbourPairs(docs []rows.Document) []rows.DocPair {
	var out []rows.DocPair
	for _, d := range docs {
		for i := 0; i+1 < len(d.Sentences); i++ {
			out = append(out, rows.DocPair{Doc: d.ID, Anchor: d.Sentences[i], Positive: d.Sentences[i+1]})
		}
	}
	return out
}

func contrastTiny(extra map[string]cty.Value) map[string]cty.Value {
	m := tiny(map[string]cty.Value{"pooling": cty.StringVal("mean"), "similarity": cty.StringVal("cosine"),
		"temperature": cty.NumberFloatVal(0.05), "patience": cty.NumberIntVal(0)})
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func TestInfoNCETiny(t *testing.T) {
	train, val := bbc(t, 40)
	pairs := artifact(t, registry.KindDocPairs, registry.FilePairs, neighbourPairs(train))
	valA := artifact(t, registry.KindDocuments, registry.FileDocuments, val)
	in := map[string]registry.Artifact{"data": pairs, "validation": valA}
	out, pr, err := stageRun{name: "train.infonce", set: contrastTiny(nil), seed: 3, inputs: in}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if pr.done != 6 || !strings.Contains(pr.status, "dev") {
		t.Errorf("progress %d/%d %q", pr.done, pr.total, pr.status)
	}
	h := readHistory(t, out)
	if h.Steps != 6 || len(h.Evaluation) != 3 || h.BestDev == nil || h.Stage != "train.infonce" {
		t.Fatalf("history %+v", h)
	}
	// The saved model is the selected one: its validation R@5 is the best.
	enc, err := encoder.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := infocse.NewHeadlines(val, "validation")
	if err != nil {
		t.Fatal(err)
	}
	got, err := hs.Recall(context.Background(), enc, 5)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-*h.BestDev) > 1e-9 {
		t.Errorf("saved model R@5 %v, best evaluation %v", got, *h.BestDev)
	}
	// Same seed, same bytes; the unmasked and the dot variants train
	// differently.
	again, _, err := stageRun{name: "train.infonce", set: contrastTiny(nil), seed: 3, inputs: in}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if dirDigest(t, out) != dirDigest(t, again) {
		t.Error("same configuration and seed, different model")
	}
	for _, v := range []map[string]cty.Value{{"mask_same_document": cty.False}, {"similarity": cty.StringVal("dot"), "temperature": cty.NumberIntVal(1)}, {"swap": cty.False}} {
		other, _, err := stageRun{name: "train.infonce", set: contrastTiny(v), seed: 3, inputs: in}.run(t)
		if err != nil {
			t.Fatal(err)
		}
		if dirDigest(t, out) == dirDigest(t, other) {
			t.Errorf("%v made no difference", v)
		}
	}
	// Continuing through init, as an IDC round does.
	cont, _, err := stageRun{name: "train.infonce", set: contrastTiny(nil), seed: 4,
		inputs: map[string]registry.Artifact{"data": pairs, "init": {Kind: registry.KindEncoder, Dir: out}}}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if h := readHistory(t, cont); h.BestStep != -1 || h.BestDev != nil {
		t.Errorf("without validation the last weights are kept: %+v", h)
	}
}

func TestHeadlineTiny(t *testing.T) {
	train, val := bbc(t, 40)
	in := map[string]registry.Artifact{
		"data":       artifact(t, registry.KindDocuments, registry.FileDocuments, train),
		"validation": artifact(t, registry.KindDocuments, registry.FileDocuments, val),
	}
	set := contrastTiny(map[string]cty.Value{"batch_size": cty.NumberIntVal(8), "max_sentences": cty.NumberIntVal(3), "eval_every": cty.NumberIntVal(0),
		"max_steps": cty.NumberIntVal(0), "epochs": cty.NumberIntVal(2)})
	out, _, err := stageRun{name: "train.headline", set: set, seed: 1, inputs: in}.run(t)
	if err != nil {
		t.Fatal(err)
	}
	h := readHistory(t, out)
	// 40 documents in batches of 8: 5 updates an epoch, evaluated at the
	// end of each.
	if h.Steps != 10 || len(h.Evaluation) != 2 || h.Evaluation[0].Step != 5 || h.Examples != 40 {
		t.Fatalf("history %+v", h)
	}
	again, _, _ := stageRun{name: "train.headline", set: set, seed: 1, inputs: in}.run(t)
	if dirDigest(t, out) != dirDigest(t, again) {
		t.Error("same configuration and seed, different model")
	}
}

func TestInfoCSETrainErrors(t *testing.T) {
	train, _ := bbc(t, 10)
	noHead := append([]rows.Document(nil), train...)
	noHead[2].Headline = ""
	pairs := artifact(t, registry.KindDocPairs, registry.FilePairs, neighbourPairs(train))
	for _, c := range []struct {
		name string
		set  map[string]cty.Value
		in   map[string]registry.Artifact
		want string
	}{
		{"train.headline", nil, map[string]registry.Artifact{"data": artifact(t, registry.KindDocuments, registry.FileDocuments, noHead)},
			`row 3 (id "business/021"): no headline: few-shot fine-tuning trains on (document, headline) pairs`},
		{"train.headline", nil, map[string]registry.Artifact{"data": artifact(t, registry.KindDocuments, registry.FileDocuments, []rows.Document{})}, "documents.jsonl: no rows"},
		{"train.infonce", map[string]cty.Value{"similarity": cty.StringVal("l1")}, map[string]registry.Artifact{"data": pairs}, "similarity"},
		{"train.infonce", map[string]cty.Value{"validation_k": cty.NumberIntVal(0)}, map[string]registry.Artifact{"data": pairs}, "validation_k: 0"},
		{"train.infonce", map[string]cty.Value{"batch_size": cty.NumberIntVal(5000)}, map[string]registry.Artifact{"data": pairs}, "larger than the"},
		{"train.infonce", nil, map[string]registry.Artifact{"data": pairs,
			"validation": artifact(t, registry.KindDocuments, registry.FileDocuments, noHead)}, "has no headline"},
		{"train.infonce", nil, map[string]registry.Artifact{"data": artifact(t, registry.KindDocPairs, registry.FilePairs, []rows.DocPair{})}, "no rows"},
		{"train.infonce", map[string]cty.Value{"from_scratch": cty.False}, map[string]registry.Artifact{"data": pairs}, "no pretrained model"},
	} {
		_, _, err := stageRun{name: c.name, set: contrastTiny(c.set), seed: 1, inputs: c.in}.run(t)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: err = %v, want %q", c.name, c.set, err, c.want)
		}
	}
}
