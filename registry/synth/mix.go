package synth

import (
	"context"
	"fmt"
	"path/filepath"

	"repro/internal/rows"
	"repro/registry"
)

// MixParams are synth.mix's parameters.
type MixParams struct {
	MaxA int `cty:"max_a" doc:"triplets of a to keep, its first rows (0: all)"`
	MaxB int `cty:"max_b" doc:"triplets of b to add (0: all)"`
	// A fraction rather than a count keeps an amount ablation meaningful
	// across profiles whose b differs in size.
	BFraction float64 `cty:"b_fraction" doc:"share of b (after max_b) to add, rounded down: 0 adds none, 1 all (Table 14's amounts)"`
	// Sampling b (rather than taking its first rows) follows the paper's
	// data-amount table, whose added data "is randomly sampled".
	SampleB bool `cty:"sample_b" doc:"add a seeded random sample of b instead of its first rows; the samples are nested (a smaller max_b takes a prefix of the same order)"`
}

func mixType() *registry.StageType {
	return &registry.StageType{
		Name:    "synth.mix",
		Version: 1,
		Doc: `Triplet sets combined: the first max_a triplets of a, then max_b of b (its first rows, or a seeded
sample), of which the share b_fraction; with count_of, a is cut to that set's size first. SynCSE-scratch + SimCSE_NLI merges the two sets; Table 14 adds growing amounts of synthetic
data to NLI; Table 4 compares synthetic sets of the same size.`,
		Params: MixParams{BFraction: 1},
		Inputs: []registry.Port{
			{Name: "a", Kind: registry.KindTriplets, Doc: "triplets kept first"},
			{Name: "b", Kind: registry.KindTriplets, Optional: true, Doc: "triplets added after them"},
			{Name: "count_of", Kind: registry.KindTriplets, Optional: true, Doc: "a set whose size caps a as max_a does (Table 4: another synthetic set of the same size); an a smaller than it is kept whole and the shortfall logged"},
		},
		Outputs: []registry.Port{{Name: "triplets", Kind: registry.KindTriplets, Doc: "triplets.jsonl"}},
		Seeded:  true,
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*MixParams)
			if p.MaxA < 0 || p.MaxB < 0 {
				return fmt.Errorf("max_a and max_b must not be negative (0: all)")
			}
			if p.BFraction < 0 || p.BFraction > 1 {
				return fmt.Errorf("b_fraction: %v is outside [0, 1]", p.BFraction)
			}
			a, err := registry.ReadTriplets(env, "a", registry.TripletNeeds{AllowNone: true})
			if err != nil {
				return err
			}
			if p.MaxA > 0 && len(a) > p.MaxA {
				a = a[:p.MaxA]
			}
			if _, ok := env.Inputs["count_of"]; ok {
				like, err := registry.ReadTriplets(env, "count_of", registry.TripletNeeds{AllowNone: true})
				if err != nil {
					return err
				}
				if len(a) > len(like) {
					a = a[:len(like)]
				} else if len(a) < len(like) {
					env.Logger().Warn("a holds fewer triplets than count_of", "a", len(a), "count_of", len(like))
				}
			}
			out := append([]rows.Triplet(nil), a...)
			if _, ok := env.Inputs["b"]; ok {
				b, err := registry.ReadTriplets(env, "b", registry.TripletNeeds{AllowNone: true})
				if err != nil {
					return err
				}
				if p.SampleB {
					sb := make([]rows.Triplet, len(b))
					for i, j := range permutation(len(b), env.Seed) {
						sb[i] = b[j]
					}
					b = sb
				}
				if p.MaxB > 0 {
					if len(b) < p.MaxB {
						return fmt.Errorf("max_b: %d, but b holds only %d triplets", p.MaxB, len(b))
					}
					b = b[:p.MaxB]
				}
				b = b[:int(p.BFraction*float64(len(b))+1e-9)]
				out = append(out, b...)
			} else if p.MaxB > 0 {
				return fmt.Errorf("max_b: %d, but input b is not connected", p.MaxB)
			}
			if len(out) == 0 {
				return fmt.Errorf("no triplets to write")
			}
			env.Logger().Info("mix", "a", len(a), "total", len(out))
			return rows.Write(filepath.Join(env.Output("triplets"), registry.FileTriplets), out)
		},
	}
}
