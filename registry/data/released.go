package data

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"repro/internal/dataset"
	"repro/internal/rows"
	"repro/registry"
)

// The synthetic datasets the papers' authors released, each read by a stage
// that writes the artifact kind of the stage that generates ours (DINO's
// pairs as generate.dino_pairs writes them, SynCSE's and GenSE's triplets
// as synth.annotate and synth.quality_check do), so that training on the
// authors' data is the same pipeline with one input swapped. The file is
// the stage's `path` (a -var in the experiments); its content is in the
// stage's key.

// RegisterReleased adds the data.released_* stage types to r.
func RegisterReleased(r *registry.Registry) {
	r.Add(releasedDINOType())
	r.Add(releasedTripletsType("data.released_syncse", dataset.ReadSynCSETriplets,
		`SynCSE's released triplets (hkust-nlp/SynCSE: SynCSE-partial-NLI, SynCSE-scratch-NLI) as published:
a CSV in SimCSE's nli_for_simcse.csv layout (header sent0,sent1,hard_neg, RFC 4180 quoting). The
triplets artifact synth.annotate writes for ours, so train.simcse_sup takes either.`,
		"the released CSV (sent0,sent1,hard_neg)"))
	r.Add(releasedTripletsType("data.released_gense", dataset.ReadGenSETriplets,
		`GenSE's released synthetic triplets (SyNLI, mattymchen/synli on the Hugging Face hub). Its storage
format is documented neither in the paper nor in the repository, so this reads the TSV a user exports
it to: header premise<TAB>entailment<TAB>contradiction (or sent0<TAB>sent1<TAB>hard_neg), one
triplet a row, no quoting. The triplets artifact synth.quality_check writes for ours, so
train.t5_contrastive takes either.`,
		"the TSV export of SyNLI (premise, entailment, contradiction)"))
}

// ReleasedParams are the parameters of the data.released_* types.
type ReleasedParams struct {
	Path  string `cty:"path" path:"file" required:"true" doc:"the released file, as downloaded"`
	Limit int    `cty:"limit" doc:"keep the first N rows; 0 = all (a seeded sample: synth.sample)"`
}

// Validate checks the limit at load time.
func (p *ReleasedParams) Validate() error {
	var c registry.Checks
	c.NonNegative("limit", p.Limit)
	return c.Result()
}

func releasedExternals(p any) ([]registry.External, error) {
	return []registry.External{{Name: "path", Path: p.(*ReleasedParams).Path}}, nil
}

// releasedLimit keeps the first n of rs (0: all).
func releasedLimit[T any](rs []T, n int) []T {
	if n > 0 && len(rs) > n {
		return rs[:n]
	}
	return rs
}

func releasedDINOType() *registry.StageType {
	return &registry.StageType{
		Name:    "data.released_dino",
		Version: 1,
		Doc: `DINO's released STS dataset (STS-🦕-x2 or STS-🦕-x1x2, timoschick/dino) as published: JSON lines
{"text_a", "text_b", "label"} as the DINO repository's DatasetEntry.save_list writes them. The pairs
artifact generate.dino_pairs writes for ours (rows.GeneratedPair, origin "released", instruction = the
label), so pairs.drop_identical, pairs.smooth, pairs.augment, pairs.split and train.cosine_mse take
either; a row that is not exactly those three keys, or whose label is not a number in [0, 1], is an
error naming its line.`,
		Params:    ReleasedParams{},
		Outputs:   []registry.Port{{Name: "pairs", Kind: registry.KindPairs, Doc: "pairs.jsonl (rows.GeneratedPair) and stats.json (counts per label)"}},
		Externals: releasedExternals,
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*ReleasedParams)
			ps, err := dataset.ReadDINOPairs(p.Path)
			if err != nil {
				return fmt.Errorf("path: %w", err)
			}
			ps = releasedLimit(ps, p.Limit)
			dir := env.Output("pairs")
			if err := rows.Write(filepath.Join(dir, registry.FilePairs), ps); err != nil {
				return err
			}
			counts := map[string]int{}
			for _, q := range ps {
				counts[strconv.FormatFloat(q.Label, 'g', -1, 64)]++
			}
			return registry.WriteJSON(filepath.Join(dir, "stats.json"), map[string]any{"pairs": len(ps), "labels": counts, "source": filepath.Base(p.Path)})
		},
	}
}

func releasedTripletsType(name string, read func(string) ([]rows.Triplet, error), doc, file string) *registry.StageType {
	return &registry.StageType{
		Name:      name,
		Version:   1,
		Doc:       doc,
		Params:    ReleasedParams{},
		Outputs:   []registry.Port{{Name: "triplets", Kind: registry.KindTriplets, Doc: "triplets.jsonl (anchor, positive, negative) read from " + file}},
		Externals: releasedExternals,
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*ReleasedParams)
			ts, err := read(p.Path)
			if err != nil {
				return fmt.Errorf("path: %w", err)
			}
			return rows.Write(filepath.Join(env.Output("triplets"), registry.FileTriplets), releasedLimit(ts, p.Limit))
		},
	}
}
