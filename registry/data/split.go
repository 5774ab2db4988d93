package data

import (
	"context"
	"fmt"
	"path/filepath"

	"repro/internal/infocse"
	"repro/internal/rows"
	"repro/registry"
)

// SplitParams are data.fewshot_split's parameters.
type SplitParams struct {
	Validation int `cty:"validation" doc:"documents held out for model selection and InfoCSE's stopping rule (never in a test set)"`
	Test       int `cty:"test" doc:"documents of the few-shot test set"`
	Labels     int `cty:"labels" doc:"labelled training documents (output labeled), a prefix of the seeded pool; 0 = the whole pool"`
}

// fewShotSplitType splits a labelled corpus for InfoCSE's experiments
// (the algorithm is internal/infocse.FewShotSplit).
func fewShotSplitType() *registry.StageType {
	docs := func(doc string) registry.Port {
		return registry.Port{Kind: registry.KindDocuments, Doc: doc}
	}
	ports := []registry.Port{
		docs("validation documents: model selection and stopping, held out of every test set"),
		docs("few-shot test documents"),
		docs("the first `labels` documents of the training pool: the few-shot training set"),
		docs("every document of the training pool (labels = all)"),
		docs("every document but the validation ones: the zero-shot test set"),
	}
	for i, n := range []string{"validation", "test", "labeled", "labeled_all", "zero_shot"} {
		ports[i].Name = n
	}
	return &registry.StageType{
		Name:    "data.fewshot_split",
		Version: 1,
		Doc: `A seeded split of a labelled corpus (documents with headlines) for InfoCSE's few-shot
experiments: a permutation drawn from the seed gives the validation documents first, the test
documents next, and the training pool last; labeled is a prefix of the pool in that order, so a
smaller label budget is a subset of a larger one and every budget is tested on the same documents.
Each output keeps corpus order. A document without a headline is an error (the split is for
labelled data: BBC News, not the Brown Corpus).`,
		Params:  SplitParams{Validation: 200, Test: 500, Labels: 1000},
		Inputs:  []registry.Port{{Name: "documents", Kind: registry.KindDocuments, Doc: "the labelled corpus: documents with headlines"}},
		Outputs: ports,
		Seeded:  true,
		Run:     runFewShotSplit,
	}
}

// Validate checks data.fewshot_split's parameters (the sizes against the
// corpus are checked when it is read).
func (p *SplitParams) Validate() error {
	var c registry.Checks
	c.Positive("validation", p.Validation)
	c.Positive("test", p.Test)
	c.Add(p.Labels >= 0, "labels", "%d is negative (0 means the whole pool)", p.Labels)
	return c.Result()
}

func runFewShotSplit(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*SplitParams)
	in, err := env.Input("documents")
	if err != nil {
		return err
	}
	path := in.Path(registry.FileDocuments)
	docs, err := rows.Read[rows.Document](path)
	if err != nil {
		return err
	}
	for i, d := range docs {
		if d.Headline == "" {
			return fmt.Errorf("%s row %d (id %q): no headline: the few-shot split needs a labelled corpus of (document, headline) pairs such as BBC News (data.documents source = \"bbc\")", path, i+1, d.ID)
		}
		if len(d.Sentences) == 0 {
			return fmt.Errorf("%s row %d (id %q): no sentences", path, i+1, d.ID)
		}
	}
	s, err := infocse.FewShotSplit(len(docs), p.Validation, p.Test, uint64(env.Seed))
	if err != nil {
		return fmt.Errorf("%s: %d documents: %v", path, len(docs), err)
	}
	labeled, err := s.Labeled(p.Labels)
	if err != nil {
		return fmt.Errorf("labels: %v (validation %d and test %d of %d documents)", err, p.Validation, p.Test, len(docs))
	}
	all, _ := s.Labeled(0)
	for name, idx := range map[string][]int{"validation": s.Validation, "test": s.Test, "labeled": labeled, "labeled_all": all, "zero_shot": s.HeldIn()} {
		out := make([]rows.Document, len(idx))
		for k, i := range idx {
			out[k] = docs[i]
		}
		if err := rows.Write(filepath.Join(env.Output(name), registry.FileDocuments), out); err != nil {
			return err
		}
	}
	if env.Log != nil {
		env.Log.Info("split", "documents", len(docs), "validation", len(s.Validation), "test", len(s.Test),
			"labeled", len(labeled), "pool", len(all), "zero_shot", len(docs)-len(s.Validation))
	}
	return nil
}
