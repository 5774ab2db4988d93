package dsl

import (
	"context"
	"errors"

	"repro/registry"
)

// The test registry: small stage types shaped like the real families, so
// the dsl is tested without depending on them.

type sentencesParams struct {
	Path  string `cty:"path" required:"true"`
	Limit int    `cty:"limit"`
}

type documentsParams struct {
	Split string `cty:"split"`
}

type maskParams struct {
	TopK  int     `cty:"top_k"`
	Mode  string  `cty:"mode"`
	Ratio float64 `cty:"ratio"`
}

type edaParams struct {
	SynonymReplacement float64 `cty:"synonym_replacement"`
	RandomDeletion     float64 `cty:"random_deletion"`
	RandomSwap         float64 `cty:"random_swap"`
}

type trainParams struct {
	LearningRate float64  `cty:"learning_rate"`
	BatchSize    int      `cty:"batch_size"`
	Layers       int      `cty:"layers"`
	Hidden       int      `cty:"hidden"`
	MaxSteps     int      `cty:"max_steps"`
	Pooling      string   `cty:"pooling"`
	Temperature  float64  `cty:"temperature"`
	Tasks        []string `cty:"tasks"`
}

type initParams struct {
	Dim uint `cty:"dim"`
}

type annotateParams struct {
	TopK int `cty:"top_k"`
}

type evalParams struct {
	Tasks []string `cty:"tasks"`
}

func noRun(context.Context, *registry.Env) error { return errors.New("test stage types do not run") }

func testRegistry() *registry.Registry {
	r := registry.New()
	r.Add(&registry.StageType{
		Name: "data.sentences", Version: 1, Params: sentencesParams{Limit: 1000},
		Outputs: []registry.Port{{Name: "sentences", Kind: registry.KindSentences}}, Run: noRun,
	})
	r.Add(&registry.StageType{
		Name: "data.documents", Version: 1, Params: documentsParams{Split: "train"},
		Outputs: []registry.Port{{Name: "documents", Kind: registry.KindDocuments}}, Run: noRun,
		// split "bbc" reads the data directory's BBC News, a stand-in.
		StandIns: func(p any) []string {
			if p.(*documentsParams).Split == "bbc" {
				return []string{"bbc"}
			}
			return nil
		},
	})
	r.Add(&registry.StageType{
		Name: "text.mask", Version: 1, Params: maskParams{TopK: 3, Mode: "rake", Ratio: 0.5},
		Inputs:  []registry.Port{{Name: "input", Kind: registry.KindSentences}},
		Outputs: []registry.Port{{Name: "pairs", Kind: registry.KindPairs}}, Run: noRun,
	})
	r.Add(&registry.StageType{
		Name: "text.eda", Version: 1, Params: edaParams{},
		Inputs:  []registry.Port{{Name: "input", Kind: registry.KindSentences}},
		Outputs: []registry.Port{{Name: "pairs", Kind: registry.KindPairs}}, Run: noRun,
	})
	r.Add(&registry.StageType{
		Name: "train.encoder", Version: 1, Seeded: true, Tensor: true,
		Params: trainParams{LearningRate: 3e-5, BatchSize: 64, Layers: 12, Hidden: 768, Pooling: "cls", Temperature: 0.05, Tasks: []string{"stsb"}},
		Inputs: []registry.Port{
			{Name: "data", Kind: registry.KindPairs},
			{Name: "init", Kind: registry.KindEncoder, Optional: true},
		},
		Outputs: []registry.Port{{Name: "model", Kind: registry.KindEncoder}}, Run: noRun,
	})
	r.Add(&registry.StageType{
		Name: "init.random", Version: 1, Seeded: true, Params: initParams{Dim: 128},
		Outputs: []registry.Port{{Name: "model", Kind: registry.KindEncoder}}, Run: noRun,
	})
	r.Add(&registry.StageType{
		Name: "annotate.idc", Version: 1, Params: annotateParams{TopK: 1},
		Inputs: []registry.Port{
			{Name: "model", Kind: registry.KindEncoder},
			{Name: "documents", Kind: registry.KindDocuments},
		},
		Outputs: []registry.Port{{Name: "pairs", Kind: registry.KindPairs}}, Run: noRun,
	})
	r.Add(&registry.StageType{
		Name: "evaluate.sts", Version: 1, Params: evalParams{Tasks: []string{"stsb", "sickr"}},
		Inputs:  []registry.Port{{Name: "model", Kind: registry.KindEncoder}},
		Outputs: []registry.Port{{Name: "metrics", Kind: registry.KindMetrics}}, Run: noRun,
	})
	return r
}
