package synth

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"repro/internal/rows"
	"repro/registry"
)

// permutation is the seeded order every sampling stage of this package
// draws from (synth.mix's sample_b, synth.sample, the quality check's
// excerpt): the same seed gives the same order.
func permutation(n int, seed int64) []int {
	s := uint64(seed)
	return rand.New(rand.NewPCG(s, s^0x5851f42d4c957f2d)).Perm(n)
}

// SampleParams are synth.sample's parameters.
type SampleParams struct {
	Fraction float64 `cty:"fraction" doc:"share of the triplets to keep, in [0, 1], rounded down (GenSE Table 6: 0.2, 0.4, 0.6, 1; Table 7: 0.5 of NLI)"`
	Max      int     `cty:"max" doc:"write at most this many (the first of the share or rest; 0: no limit)"`
	Shuffle  bool    `cty:"shuffle" doc:"keep a seeded random sample (nested: a smaller fraction keeps a prefix of the same order) in that order; false keeps the first rows"`
	// The complement gives a held-out split from the same seed: a stage
	// with rest = false and one with rest = true never share a row.
	Rest bool `cty:"rest" doc:"keep the rows the share leaves out instead (a held-out split: the same seed and fraction with rest = false gives the other part)"`
}

// Validate checks the parameters at load time.
func (p *SampleParams) Validate() error {
	var c registry.Checks
	c.Add(p.Fraction >= 0 && p.Fraction <= 1, "fraction", "%v is outside [0, 1]", p.Fraction)
	c.NonNegative("max", p.Max)
	return c.Result()
}

func sampleType() *registry.StageType {
	return &registry.StageType{
		Name:    "synth.sample",
		Version: 1,
		Doc: `A seeded share of one triplet set: fraction of its rows (rounded down), at most max, drawn by a
permutation from the seed (nested across fractions) or its first rows. GenSE's amounts of synthetic
data (Table 6), half of the NLI triplets (Table 7), and with rest a held-out split. Writes an empty set with why_empty.txt when the
share is empty, so a training stage downstream says why it has no data.`,
		Params:  SampleParams{Fraction: 1, Shuffle: true},
		Inputs:  []registry.Port{{Name: "data", Kind: registry.KindTriplets, Doc: "the triplets to sample"}},
		Outputs: []registry.Port{{Name: "triplets", Kind: registry.KindTriplets, Doc: "triplets.jsonl"}},
		Seeded:  true,
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*SampleParams)
			if err := p.Validate(); err != nil {
				return err
			}
			ts, err := registry.ReadTriplets(env, "data", registry.TripletNeeds{AllowNone: true})
			if err != nil {
				return err
			}
			if p.Shuffle {
				sh := make([]rows.Triplet, len(ts))
				for i, j := range permutation(len(ts), env.Seed) {
					sh[i] = ts[j]
				}
				ts = sh
			}
			n := int(p.Fraction*float64(len(ts)) + 1e-9)
			keep := ts[:n]
			if p.Rest {
				keep = ts[n:]
			}
			if p.Max > 0 && len(keep) > p.Max {
				keep = keep[:p.Max]
			}
			env.Logger().Info("sample", "of", len(ts), "kept", len(keep), "fraction", p.Fraction, "rest", p.Rest)
			dir := env.Output("triplets")
			if len(keep) == 0 {
				why := fmt.Sprintf("synth.sample kept none: fraction %g of %d triplets (rest = %v) leaves no row", p.Fraction, len(ts), p.Rest)
				if len(ts) == 0 {
					// Pass the producer's reason on: the set was empty before sampling.
					a, _ := env.Input("data")
					if b, err := os.ReadFile(a.Path(registry.FileWhyEmpty)); err == nil {
						why = strings.TrimSpace(string(b))
					}
				}
				if err := writeText(filepath.Join(dir, registry.FileWhyEmpty), why+"\n"); err != nil {
					return err
				}
			}
			return rows.Write(filepath.Join(dir, registry.FileTriplets), keep)
		},
	}
}

func writeText(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }
