// Package pairs holds the pairs.* stage types: DINO's post-processing of a
// generated dataset (drop x1 == x2, label smoothing, augmentation, the
// seeded 90/10 split), each its own cached artifact of rows.GeneratedPair,
// and the rendering of NLI triplets in the instruction format (the mini
// profile's format fine-tuning of a small generator). The algorithms are
// in repro/internal/dino.
package pairs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"repro/internal/dino"
	"repro/internal/rows"
	"repro/registry"
)

// Register adds the pairs.* stage types to r.
func Register(r *registry.Registry) {
	r.Add(dropIdenticalType())
	r.Add(smoothType())
	r.Add(augmentType())
	r.Add(splitType())
	r.Add(renderType())
}

var (
	pairsIn  = []registry.Port{{Name: "data", Kind: registry.KindPairs, Doc: "generated pairs (rows.GeneratedPair)"}}
	pairsOut = []registry.Port{{Name: "pairs", Kind: registry.KindPairs, Doc: "pairs.jsonl (rows.GeneratedPair) and stats.json"}}
)

func readPairs(env *registry.Env) ([]rows.GeneratedPair, error) {
	a, err := env.Input("data")
	if err != nil {
		return nil, err
	}
	path := a.Path(registry.FilePairs)
	ps, err := rows.Read[rows.GeneratedPair](path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("data: %s: no pairs", path)
	}
	for i, p := range ps {
		if strings.TrimSpace(p.Sentence1) == "" || strings.TrimSpace(p.Sentence2) == "" {
			return nil, fmt.Errorf("data: %s: row %d: empty sentence", path, i+1)
		}
	}
	return ps, nil
}

// writePairs writes ps and their label counts (plus extra) to output name.
func writePairs(env *registry.Env, name string, ps []rows.GeneratedPair, extra map[string]any) error {
	dir := env.Output(name)
	if err := rows.Write(filepath.Join(dir, registry.FilePairs), ps); err != nil {
		return err
	}
	st := map[string]any{"pairs": len(ps), "labels": labelCounts(ps)}
	for k, v := range extra {
		st[k] = v
	}
	return registry.WriteJSON(filepath.Join(dir, registry.FileStats), st)
}

func labelCounts(ps []rows.GeneratedPair) map[string]int {
	out := map[string]int{}
	for l, n := range dino.CountLabels(ps) {
		out[fmt.Sprint(l)] = n
	}
	return out
}

// ---- pairs.drop_identical ---------------------------------------------------

// NoParams is the parameter set of a type without parameters.
type NoParams struct{}

func dropIdenticalType() *registry.StageType {
	return &registry.StageType{
		Name:    "pairs.drop_identical",
		Version: 1,
		Doc:     `Drops the pairs whose x2 equals x1 (after trimming spaces): they carry no training signal (DINO, Section 4).`,
		Params:  NoParams{},
		Inputs:  pairsIn,
		Outputs: pairsOut,
		Run: func(ctx context.Context, env *registry.Env) error {
			ps, err := readPairs(env)
			if err != nil {
				return err
			}
			kept, dropped := dino.DropIdentical(ps)
			if len(kept) == 0 {
				return fmt.Errorf("every one of the %d pairs has x2 = x1: nothing is left", len(ps))
			}
			env.Logger().Info("dropped x1 == x2", "dropped", dropped, "kept", len(kept))
			return writePairs(env, "pairs", kept, map[string]any{"dropped_identical": dropped})
		},
	}
}

// ---- pairs.smooth -----------------------------------------------------------

// SmoothParams are pairs.smooth's parameters.
type SmoothParams struct {
	Enabled bool    `cty:"enabled" doc:"false passes the pairs through unchanged (Table 2's ablation)"`
	Low     float64 `cty:"low" doc:"what label 0 becomes"`
	High    float64 `cty:"high" doc:"what label 1 becomes"`
}

// Validate checks the parameters at load time.
func (p *SmoothParams) Validate() error {
	var c registry.Checks
	c.Add(p.Low >= 0 && p.Low <= 1, "low", "%v must lie in [0, 1]", p.Low)
	c.Add(p.High >= 0 && p.High <= 1, "high", "%v must lie in [0, 1]", p.High)
	c.Add(p.Low < p.High, "low", "%v must be below high (%v)", p.Low, p.High)
	return c.Result()
}

func smoothType() *registry.StageType {
	return &registry.StageType{
		Name:    "pairs.smooth",
		Version: 1,
		Doc:     `DINO's label smoothing: label 0 becomes low (0.1), label 1 becomes high (0.9); other labels stay. enabled = false passes the pairs through.`,
		Params:  SmoothParams{Enabled: true, Low: 0.1, High: 0.9},
		Inputs:  pairsIn,
		Outputs: pairsOut,
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*SmoothParams)
			ps, err := readPairs(env)
			if err != nil {
				return err
			}
			if p.Enabled {
				ps = dino.Smooth(ps, p.Low, p.High)
			}
			return writePairs(env, "pairs", ps, nil)
		},
	}
}

// ---- pairs.augment ----------------------------------------------------------

// AugmentParams are pairs.augment's parameters.
type AugmentParams struct {
	PerX1 int     `cty:"per_x1" doc:"pairs added per distinct x1, x2 drawn from entries with another x1 (0: none, Table 2's ablation)"`
	Label float64 `cty:"label" doc:"the label of the added pairs"`
}

// Validate checks the parameters at load time.
func (p *AugmentParams) Validate() error {
	var c registry.Checks
	c.NonNegative("per_x1", p.PerX1)
	c.Add(p.Label >= 0 && p.Label <= 1, "label", "%v must lie in [0, 1]", p.Label)
	return c.Result()
}

func augmentType() *registry.StageType {
	return &registry.StageType{
		Name:    "pairs.augment",
		Version: 1,
		Doc: `DINO's augmentation: for every distinct x1, per_x1 pairs (x1, x2, label) whose x2 is drawn
(seeded) from the entries with another x1, labelled 0 (Section 4); the input rows come first.`,
		Params:  AugmentParams{PerX1: 2, Label: 0},
		Inputs:  pairsIn,
		Outputs: pairsOut,
		Seeded:  true,
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*AugmentParams)
			ps, err := readPairs(env)
			if err != nil {
				return err
			}
			out, err := dino.Augment(ps, p.PerX1, p.Label, rand.New(rand.NewPCG(uint64(env.Seed), 0xa06)))
			if err != nil {
				return err
			}
			return writePairs(env, "pairs", out, map[string]any{"augmented": len(out) - len(ps)})
		},
	}
}

// ---- pairs.split ------------------------------------------------------------

// SplitParams are pairs.split's parameters.
type SplitParams struct {
	Validation float64 `cty:"validation" doc:"fraction of the pairs drawn into the validation split"`
	Show       int     `cty:"show" doc:"pairs per label shown in samples.md (a seeded draw from train)"`
}

// Validate checks the parameters at load time.
func (p *SplitParams) Validate() error {
	var c registry.Checks
	c.Add(p.Validation > 0 && p.Validation < 1, "validation", "%v must lie in (0, 1)", p.Validation)
	c.NonNegative("show", p.Show)
	return c.Result()
}

// ValidationTask is the task name of the validation pairs (KindSTS rows).
const ValidationTask = "sts-l"

func splitType() *registry.StageType {
	return &registry.StageType{
		Name:    "pairs.split",
		Version: 1,
		Doc: `A seeded train/validation split (DINO: 90/10). The validation pairs are written as STS pairs
(task "sts-l", score = label) so that a training stage selects its model by Spearman on them;
samples.md shows the label counts and a seeded sample of training pairs per label.`,
		Params: SplitParams{Validation: 0.1, Show: 5},
		Inputs: pairsIn,
		Outputs: []registry.Port{
			{Name: "train", Kind: registry.KindPairs, Doc: "training pairs (rows.GeneratedPair), stats.json, samples.md"},
			{Name: "validation", Kind: registry.KindSTS, Doc: "validation pairs as STS pairs (task sts-l)"},
		},
		Seeded: true,
		Run:    runSplit,
	}
}

func runSplit(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*SplitParams)
	ps, err := readPairs(env)
	if err != nil {
		return err
	}
	train, val, err := dino.Split(ps, p.Validation, rand.New(rand.NewPCG(uint64(env.Seed), 0x5b1)))
	if err != nil {
		return err
	}
	if err := writePairs(env, "train", train, map[string]any{"validation": len(val), "validation_labels": labelCounts(val)}); err != nil {
		return err
	}
	vs := make([]rows.STSPair, len(val))
	for i, v := range val {
		vs[i] = rows.STSPair{Task: ValidationTask, Subset: "validation", Sentence1: v.Sentence1, Sentence2: v.Sentence2, Score: v.Label}
	}
	if err := rows.Write(filepath.Join(env.Output("validation"), registry.FilePairs), vs); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "STS-L after post-processing: %d training pairs, %d validation pairs (seed %d).\n\n| label | train | validation |\n|---|---|---|\n", len(train), len(val), env.Seed)
	tc, vc := dino.CountLabels(train), dino.CountLabels(val)
	all := dino.CountLabels(ps)
	for _, l := range dino.SortedLabels(all) {
		fmt.Fprintf(&b, "| %g | %d | %d |\n", l, tc[l], vc[l])
	}
	b.WriteString("\n")
	registry.WritePairSample(&b, train, p.Show, uint64(env.Seed))
	return os.WriteFile(filepath.Join(env.Output("train"), registry.FileSamples), []byte(b.String()), 0o644)
}

// ---- pairs.render_instructions ------------------------------------------------

// RenderParams are pairs.render_instructions's parameters.
type RenderParams struct {
	Template     string    `cty:"template" doc:"instruction template ([I], [X]) as in generate.dino_pairs"`
	Labels       []float64 `cty:"labels" doc:"labels, one per instruction (must hold 1, 0.5 and 0)"`
	Instructions []string  `cty:"instructions" doc:"i_y per label"`
	Quote        string    `cty:"quote" doc:"closing quotation mark appended after x2"`
	MaxTriplets  int       `cty:"max_triplets" doc:"render the first N triplets; 0 = all"`
}

// Validate checks the parameters at load time.
func (p *RenderParams) Validate() error {
	var c registry.Checks
	if err := dino.CheckTemplate(p.Template); err != nil {
		c.Err(registry.Paramf("template", "%v", err))
	}
	c.Add(len(p.Labels) == len(p.Instructions), "instructions", "%d instructions for %d labels", len(p.Instructions), len(p.Labels))
	c.Add(p.Quote != "", "quote", "empty")
	c.NonNegative("max_triplets", p.MaxTriplets)
	return c.Result()
}

func renderType() *registry.StageType {
	d := dino.Labels
	p := RenderParams{Template: dino.Template, Quote: `"`}
	for _, l := range d {
		p.Labels = append(p.Labels, l.Value)
		p.Instructions = append(p.Instructions, l.Instruction)
	}
	return &registry.StageType{
		Name:    "pairs.render_instructions",
		Version: 1,
		Doc: `NLI triplets written as texts in DINO's instruction format, to fine-tune a generator too small
to follow the instructions unprompted (a departure from the paper): per triplet, I_1(anchor) +
entailment, I_0.5(anchor) + contradiction, I_0(anchor) + the entailment of another triplet (seeded
draw), each closed by the quote. One text per sentence row.`,
		Params:  p,
		Inputs:  []registry.Port{{Name: "data", Kind: registry.KindTriplets, Doc: "NLI triplets (anchor, entailment, contradiction)"}},
		Outputs: []registry.Port{{Name: "sentences", Kind: registry.KindSentences, Doc: "the rendered texts, one per row"}},
		Seeded:  true,
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*RenderParams)
			a, err := env.Input("data")
			if err != nil {
				return err
			}
			ts, err := rows.Read[rows.Triplet](a.Path(registry.FileTriplets))
			if err != nil {
				return fmt.Errorf("data: %w", err)
			}
			if p.MaxTriplets > 0 && len(ts) > p.MaxTriplets {
				ts = ts[:p.MaxTriplets]
			}
			ls := make([]dino.Label, len(p.Labels))
			for i := range ls {
				ls[i] = dino.Label{Value: p.Labels[i], Instruction: p.Instructions[i]}
			}
			texts, err := dino.Render(ts, p.Template, ls, p.Quote, rand.New(rand.NewPCG(uint64(env.Seed), 0x4e11)))
			if err != nil {
				return err
			}
			rs := make([]rows.Sentence, len(texts))
			for i, t := range texts {
				rs[i] = rows.Sentence{Text: t}
			}
			return rows.Write(filepath.Join(env.Output("sentences"), registry.FileSentences), rs)
		},
	}
}
