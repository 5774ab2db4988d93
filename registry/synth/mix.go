package synth

import (
	"context"
	"fmt"
	"path/filepath"

	"repro/internal/rows"
	"repro/internal/syncse"
	"repro/registry"
)

// MixParams are synth.mix's parameters.
type MixParams struct {
	MaxA int `cty:"max_a" doc:"triplets of a to keep, chosen as sample says (0: all)"`
	MaxB int `cty:"max_b" doc:"triplets of b to add (0: all)"`
	// A fraction rather than a count keeps an amount ablation meaningful
	// across profiles whose b differs in size.
	BFraction float64 `cty:"b_fraction" doc:"share of b (after max_b) to add, rounded down: 0 adds none, 1 all (Table 14's amounts)"`
	// Sampling b (rather than taking its first rows) follows the paper's
	// data-amount table, whose added data "is randomly sampled".
	SampleB bool `cty:"sample_b" doc:"add a seeded random sample of b instead of its first rows; the samples are nested (a smaller max_b takes a prefix of the same order)"`
	// Added after the first recorded results: "first" (the default) keeps
	// every earlier key.
	Sample string `cty:"sample" key:"added" doc:"which rows of a max_a and count_of keep: \"first\" its first rows; \"random\" a seeded random sample; \"stratified\" a seeded sample spread evenly over genre x topic (the strata input says each row's; the rule is in the type's doc). The kept rows are written in the sample's order, so a smaller cut keeps a prefix of a larger one's; an a that needs no cut is written as it is"`
}

func mixType() *registry.StageType {
	return &registry.StageType{
		Name:    "synth.mix",
		Version: 1,
		Doc: `Triplet sets combined: max_a triplets of a (with count_of, at most as many as that set holds), then
max_b of b (its first rows, or a seeded sample), of which the share b_fraction. SynCSE-scratch +
SimCSE_NLI merges the two sets; Table 14 adds growing amounts of synthetic data to NLI; Tables 2, 4
and 8 compare synthetic sets of the same size.

sample says which rows of a a cut keeps: its first rows, a seeded random sample, or a stratified one.
SynCSE-scratch's sentences come out genre by genre, so its first rows would hold a genre or two of 21;
a stratified cut keeps the whole set's spread. Each triplet's genre and the topics its call named
come from the strata input (synth.sentences' sentences and their provenance.jsonl), found by the
triplet's anchor; a row without topics has its genre's one stratum. The rule, from a seeded
permutation of a's rows (the one sample_b draws from), which breaks every tie: genres are visited in
the order of their first row in the permutation, and each genre's topics likewise; each genre's rows
are lined up by rotating over its topics, each topic's turn taking the earliest row (in the
permutation) that names it and is not yet taken, skipping a topic with none left; the sample
rotates over the genres, taking each genre's next row, skipping a genre with none left, and keeps
its first N. So every genre gets N/G rows to within one (the extra rows go to the genres first in
the order; a genre with fewer gives all it has and the others share the rest evenly), and within a
genre every topic as many turns to within one.`,
		Params: MixParams{BFraction: 1, Sample: SampleFirst},
		Inputs: []registry.Port{
			{Name: "a", Kind: registry.KindTriplets, Doc: "triplets kept first"},
			{Name: "b", Kind: registry.KindTriplets, Optional: true, Doc: "triplets added after them"},
			{Name: "count_of", Kind: registry.KindTriplets, Optional: true, Doc: "a set whose size caps a as max_a does (Table 4: another synthetic set of the same size); an a smaller than it is kept whole and the shortfall logged"},
			{Name: "strata", Kind: registry.KindSentences, Optional: true, Doc: "with sample = \"stratified\": the sentences a's anchors were written as (synth.sentences' output), whose provenance.jsonl gives each one's genre and topics"},
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
			if err := p.Validate(); err != nil {
				return err
			}
			_, stratified := env.Inputs["strata"]
			if stratified && p.Sample != SampleStratified {
				env.Logger().Warn("the strata input is connected but unused: sample is not \"stratified\"", "sample", p.Sample)
			}
			if p.Sample == SampleStratified && !stratified {
				return fmt.Errorf("sample = %q needs the strata input: the sentences a's triplets were labelled from (synth.sentences' output), such as strata = stage.NAME.sentences", p.Sample)
			}
			a, err := registry.ReadTriplets(env, "a", registry.TripletNeeds{AllowNone: true})
			if err != nil {
				return err
			}
			n := len(a)
			if p.MaxA > 0 {
				n = min(n, p.MaxA)
			}
			if _, ok := env.Inputs["count_of"]; ok {
				like, err := registry.ReadTriplets(env, "count_of", registry.TripletNeeds{AllowNone: true})
				if err != nil {
					return err
				}
				if n < len(like) {
					env.Logger().Warn("a holds fewer triplets than count_of", "a", n, "count_of", len(like))
				}
				n = min(n, len(like))
			}
			if a, err = p.cut(env, a, n); err != nil {
				return err
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

// The values of synth.mix's sample.
const (
	SampleFirst      = "first"
	SampleRandom     = "random"
	SampleStratified = "stratified"
)

// cut keeps n rows of a as p.Sample says, in the sample's order; an a of
// at most n rows is returned as it is.
func (p *MixParams) cut(env *registry.Env, a []rows.Triplet, n int) ([]rows.Triplet, error) {
	if n >= len(a) {
		return a, nil
	}
	var order []int
	switch p.Sample {
	case SampleFirst:
		return a[:n], nil
	case SampleRandom:
		order = permutation(len(a), env.Seed)
	case SampleStratified:
		strata, err := readStrata(env, a)
		if err != nil {
			return nil, err
		}
		order = syncse.StratifiedOrder(strata, permutation(len(a), env.Seed))
	}
	out := make([]rows.Triplet, n)
	for i, j := range order[:n] {
		out[i] = a[j]
	}
	return out, nil
}

// readStrata gives each triplet of a its genre and topics: its anchor is
// found among the strata input's sentences, whose provenance.jsonl (row
// for row) says where each came from.
func readStrata(env *registry.Env, a []rows.Triplet) ([]syncse.Stratum, error) {
	texts, err := registry.ReadSentences(env, "strata", 0)
	if err != nil {
		return nil, err
	}
	in, err := env.Input("strata")
	if err != nil {
		return nil, err
	}
	path := in.Path(FileProvenance)
	prov, err := rows.Read[sentenceProvenance](path)
	if err != nil {
		return nil, fmt.Errorf("strata: %w (sample = %q reads the genres and topics synth.sentences writes there)", err, SampleStratified)
	}
	if len(prov) != len(texts) {
		return nil, fmt.Errorf("strata: %s holds %d rows for %d sentences", path, len(prov), len(texts))
	}
	row := make(map[string]int, len(texts))
	for i, t := range texts {
		if _, dup := row[t]; !dup {
			row[t] = i
		}
	}
	out := make([]syncse.Stratum, len(a))
	for i, t := range a {
		j, ok := row[t.Anchor]
		if !ok {
			return nil, fmt.Errorf("a: row %d: anchor %q is not among the strata sentences (%s): sample = %q needs the sentences a was labelled from", i+1, clip(t.Anchor, 60), in.Path(registry.FileSentences), SampleStratified)
		}
		out[i] = syncse.Stratum{Genre: prov[j].Genre, Topics: prov[j].Topics}
	}
	return out, nil
}

// clip shortens s to at most n runes for a message.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
