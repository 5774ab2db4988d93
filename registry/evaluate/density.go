package evaluate

import (
	"context"
	"fmt"
	"path/filepath"

	"repro/internal/metrics"
	"repro/internal/plot"
	"repro/registry"
)

// FileDensityPlot is the cosine-density figure (PaSeR Figure 5) that
// evaluate.cosine_density writes beside metrics.json.
const FileDensityPlot = "cosine_density.png"

// DensityParams are evaluate.cosine_density's parameters.
type DensityParams struct {
	Task      string `cty:"task" doc:"which task's pairs to use (PaSeR: stsb)"`
	BatchSize int    `cty:"batch_size" doc:"sentences per Encode call"`
}

func densityType() *registry.StageType {
	return &registry.StageType{
		Name:    "evaluate.cosine_density",
		Version: 2,
		Doc: `PaSeR Appendix C (Table 10, Figure 5): the cosine similarities of the pairs of one task (stsb)
split into five levels by gold score, [0,1), [1,2), [2,3), [3,4), [4,5] (5 itself in the top
level; the paper labels them 0-1 .. 4-5 without stating edges); per level the mean, population
variance (ddof 0) and count: levels."0-1".mean, .var, .n. A level with no pair has only n = 0.
Also writes cosine_density.png: a Gaussian kernel density of the cosines per level (Figure 5).`,
		Params:  DensityParams{Task: "stsb", BatchSize: defaultBatch},
		Inputs:  []registry.Port{encoderPort, {Name: "data", Kind: registry.KindSTS, Doc: "STS pairs holding the task"}},
		Outputs: []registry.Port{metricsPort},
		Tensor:  true,
		Light:   true,
		Run:     runDensity,
	}
}

func runDensity(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*DensityParams)
	d, err := encodedPairs(ctx, env, p.BatchSize)
	if err != nil {
		return err
	}
	var sys, gold []float64
	splits := map[string]bool{}
	for i, r := range d.pairs {
		if r.Task != p.Task {
			continue
		}
		sys = append(sys, d.cosine(i))
		gold = append(gold, r.Score)
		splits[r.Subset] = true
	}
	if len(sys) == 0 {
		return fmt.Errorf("evaluate.cosine_density: the data has no pairs of task %q", p.Task)
	}
	if len(splits) > 1 && (p.Task == "stsb" || p.Task == "sickr") {
		return fmt.Errorf("evaluate.cosine_density: task %s has pairs from %d splits; give one split", p.Task, len(splits))
	}
	lv, err := metrics.CosineDensity(sys, gold)
	if err != nil {
		return fmt.Errorf("evaluate.cosine_density: task %s: %v", p.Task, err)
	}
	levels := map[string]any{}
	for _, l := range lv {
		m := map[string]any{"n": l.N}
		if l.N > 0 {
			m["mean"], m["var"] = l.Mean, l.Var
		}
		levels[l.Name()] = m
	}
	groups, err := plot.SimilarityLevels(gold, sys)
	if err != nil {
		return fmt.Errorf("evaluate.cosine_density: %v", err)
	}
	png := filepath.Join(env.Output("metrics"), FileDensityPlot)
	if err := plot.Density(png, fmt.Sprintf("Cosine similarity per %s similarity level", p.Task), "cosine similarity", groups); err != nil {
		return fmt.Errorf("evaluate.cosine_density: figure: %v", err)
	}
	return registry.WriteMetrics(env, "metrics", map[string]any{"levels": levels, "n": len(sys)})
}
