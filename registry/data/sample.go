package data

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"

	"repro/internal/rows"
	"repro/registry"
)

// SampleParams are data.sample's parameters.
type SampleParams struct {
	Size int `cty:"size" doc:"documents to keep, drawn at random from the stage's seed; 0 = all of them (the input unchanged)"`
}

// sampleType draws a seeded subset of a documents artifact. It lets a
// small profile shrink one use of a corpus (InfoCSE's unlabeled articles,
// its zero-shot test set) without touching the others, and with size 0
// it writes its input back byte for byte, so a profile that keeps
// everything gets the same artifact digest and the same downstream cache
// keys as one that reads the corpus directly.
func sampleType() *registry.StageType {
	return &registry.StageType{
		Name:    "data.sample",
		Version: 1,
		Doc: `A seeded random subset of size documents (0: all), kept in input order: a smaller
profile's unlabeled corpus or test set, drawn across the whole corpus (BBC News is stored by
category, so data.documents' limit, the first N, is not a sample of it).`,
		Params:  SampleParams{},
		Inputs:  []registry.Port{{Name: "documents", Kind: registry.KindDocuments, Doc: "the documents to sample"}},
		Outputs: []registry.Port{{Name: "documents", Kind: registry.KindDocuments, Doc: "documents.jsonl: the sample, in input order"}},
		Seeded:  true,
		Run:     runSample,
	}
}

// Validate checks data.sample's parameters (the size against the input is
// checked when it is read).
func (p *SampleParams) Validate() error {
	var c registry.Checks
	c.NonNegative("size", p.Size)
	return c.Result()
}

func runSample(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*SampleParams)
	in, err := env.Input("documents")
	if err != nil {
		return err
	}
	path := in.Path(registry.FileDocuments)
	docs, err := rows.Read[rows.Document](path)
	if err != nil {
		return err
	}
	keep, err := sample(len(docs), p.Size, uint64(env.Seed))
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	out := make([]rows.Document, len(keep))
	for k, i := range keep {
		out[k] = docs[i]
	}
	if env.Log != nil {
		env.Log.Info("sample", "documents", len(docs), "kept", len(out))
	}
	return rows.Write(filepath.Join(env.Output("documents"), registry.FileDocuments), out)
}

// sample returns size of the indices 0..n-1 drawn by a permutation from
// seed, ascending; all of them for size 0.
func sample(n, size int, seed uint64) ([]int, error) {
	switch {
	case size < 0:
		return nil, fmt.Errorf("size %d is negative (0 keeps every document)", size)
	case size > n:
		return nil, fmt.Errorf("size %d asks for more documents than the %d there are", size, n)
	case size == 0:
		size = n
	}
	keep := rand.New(rand.NewPCG(seed, 0x73616d706c65)).Perm(n)[:size] // "sample"
	sort.Ints(keep)
	return keep, nil
}
