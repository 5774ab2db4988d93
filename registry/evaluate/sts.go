package evaluate

import (
	"context"
	"fmt"

	"repro/internal/metrics"
	"repro/internal/rows"
	"repro/registry"
)

// STSParams are evaluate.sts's parameters.
type STSParams struct {
	BatchSize    int  `cty:"batch_size" doc:"sentences per Encode call"`
	AlignUniform bool `cty:"align_uniform" doc:"also compute alignment and uniformity on the stsb pairs present"`
}

func stsType() *registry.StageType {
	return &registry.StageType{
		Name:    "evaluate.sts",
		Version: 1,
		Doc: `Semantic textual similarity as SimCSE evaluates it ("all" setting): cosine between
the two sentence vectors; per task, Spearman x100 over the concatenation of all its subsets;
avg = mean of the seven (sts12..sts16, stsb, sickr) each rounded to two decimals, written only
when all seven are present; sts12_16 likewise over the five years. Also per subset
(subsets.TASK.SUBSET), Pearson (pearson.TASK), pair counts (n.TASK). With stsb pairs present:
alignment (alpha 2, pairs with gold > 4) and uniformity (t 2, over the distinct stsb sentences).`,
		Params:  STSParams{BatchSize: defaultBatch, AlignUniform: true},
		Inputs:  []registry.Port{encoderPort, {Name: "data", Kind: registry.KindSTS, Doc: "STS pairs of any tasks (one split per task)"}},
		Outputs: []registry.Port{metricsPort},
		Tensor:  true,
		Run:     runSTS,
	}
}

// encodedPairs reads an STS artifact and encodes its distinct sentences.
// left[i] and right[i] are the vectors of row i.
func encodedPairs(ctx context.Context, env *registry.Env, batch int) ([]rows.STSPair, [][]float32, [][]float32, error) {
	enc, data, err := openInputs(env, "data")
	if err != nil {
		return nil, nil, nil, err
	}
	path := data.Path(registry.FilePairs)
	ps, err := rows.Read[rows.STSPair](path)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(ps) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: no STS pairs", path)
	}
	set := newSentenceSet()
	li, ri := make([]int, len(ps)), make([]int, len(ps))
	for i, p := range ps {
		where := fmt.Sprintf("%s row %d", path, i+1)
		if p.Task == "" {
			return nil, nil, nil, fmt.Errorf("%s: task is empty", where)
		}
		s1, s2 := normalizeSpace(p.Sentence1), normalizeSpace(p.Sentence2)
		if s1 == "" || s2 == "" {
			return nil, nil, nil, fmt.Errorf("%s: empty sentence", where)
		}
		li[i] = set.add(s1, where+", sentence1")
		ri[i] = set.add(s2, where+", sentence2")
	}
	vs, err := set.encode(ctx, env, enc, batch)
	if err != nil {
		return nil, nil, nil, err
	}
	left, right := make([][]float32, len(ps)), make([][]float32, len(ps))
	for i := range ps {
		left[i], right[i] = vs[li[i]], vs[ri[i]]
	}
	logger(env).Info("encoded", "pairs", len(ps), "distinct sentences", len(vs))
	return ps, left, right, nil
}

func runSTS(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*STSParams)
	ps, left, right, err := encodedPairs(ctx, env, p.BatchSize)
	if err != nil {
		return err
	}
	scored := make([]metrics.ScoredPair, len(ps))
	for i, r := range ps {
		scored[i] = metrics.ScoredPair{Task: r.Task, Subset: r.Subset, Sys: metrics.Cosine(left[i], right[i]), Gold: r.Score}
	}
	res, err := metrics.STS(scored)
	if err != nil {
		return fmt.Errorf("evaluate.sts: %v", err)
	}
	out := map[string]any{}
	subsets, pearson, n := map[string]any{}, map[string]any{}, map[string]any{}
	for name, t := range res.Tasks {
		out[name] = t.Spearman
		pearson[name] = t.Pearson
		n[name] = t.N
		ss := map[string]any{}
		for sn, c := range t.Subsets {
			ss[sn] = c.Spearman
		}
		subsets[name] = ss
	}
	out["subsets"], out["pearson"], out["n"] = subsets, pearson, n
	if res.HasAvg {
		out["avg"] = res.Avg
	}
	if res.HasSTS12to16 {
		out["sts12_16"] = res.STS12to16
	}
	if p.AlignUniform {
		if err := alignUniform(env, ps, left, right, out); err != nil {
			return fmt.Errorf("evaluate.sts: %v", err)
		}
	}
	return writeMetrics(env, out)
}

// alignUniform adds SimCSE's alignment and uniformity over the stsb pairs:
// positives are pairs with gold > 4; uniformity is over the DISTINCT stsb
// sentences (a sentence repeated across pairs would add zero distances that
// measure the dataset, not the encoder).
func alignUniform(env *registry.Env, ps []rows.STSPair, left, right [][]float32, out map[string]any) error {
	var a, b, all [][]float32
	seen := map[string]bool{}
	for i, p := range ps {
		if p.Task != "stsb" {
			continue
		}
		if p.Score > 4 {
			a, b = append(a, left[i]), append(b, right[i])
		}
		for k, s := range [2]string{normalizeSpace(p.Sentence1), normalizeSpace(p.Sentence2)} {
			if !seen[s] {
				seen[s] = true
				all = append(all, [2][]float32{left[i], right[i]}[k])
			}
		}
	}
	if len(all) == 0 {
		return nil
	}
	if len(a) > 0 {
		al, err := metrics.Alignment(a, b)
		if err != nil {
			return err
		}
		out["alignment"] = al
	} else {
		logger(env).Warn("no stsb pair has gold score > 4: alignment not computed")
	}
	if len(all) >= 2 {
		progress(env, 0, 0, "uniformity")
		u, err := metrics.Uniformity(all)
		if err != nil {
			return err
		}
		out["uniformity"] = u
	}
	return nil
}
