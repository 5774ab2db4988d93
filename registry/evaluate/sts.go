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
		Version: 3, // 3: the mean setting sums subsets in name order (was map order: last bits varied)
		Doc: `Semantic textual similarity as SimCSE evaluates it ("all" setting): cosine between
the two sentence vectors; per task, Spearman x100 over the concatenation of all its subsets;
avg = mean of the seven (sts12..sts16, stsb, sickr) each rounded to two decimals, written only
when all seven are present; sts12_16 likewise over the five years. Also per subset
(subsets.TASK.SUBSET), the "mean" setting of DINO's Table 5 (mean.TASK: the mean of the task's
subsets' Spearman; mean.avg: the mean of the five years' values rounded to two decimals), Pearson (pearson.TASK), pair counts (n.TASK). With stsb pairs present:
alignment (alpha 2, pairs with gold > 4) and uniformity (t 2, over the distinct stsb sentences).`,
		Params:  STSParams{BatchSize: defaultBatch, AlignUniform: true},
		Inputs:  []registry.Port{encoderPort, {Name: "data", Kind: registry.KindSTS, Doc: "STS pairs of any tasks (one split per task)"}},
		Outputs: []registry.Port{metricsPort},
		Tensor:  true,
		Light:   true,
		Run:     runSTS,
	}
}

// stsData is an STS artifact with its distinct sentences encoded: pair i's
// sentences are vectors left[i] and right[i] of vecs.
type stsData struct {
	pairs       []rows.STSPair
	vecs        *vectors
	left, right []int
	bufL, bufR  []float32 // scratch for cosine
}

// cosine is pair i's cosine (metrics.Cosine of its two vectors).
func (d *stsData) cosine(i int) float64 {
	if d.bufL == nil {
		d.bufL, d.bufR = make([]float32, d.vecs.dim), make([]float32, d.vecs.dim)
	}
	return metrics.Cosine(d.vecs.at(d.left[i], d.bufL), d.vecs.at(d.right[i], d.bufR))
}

// encodedPairs reads an STS artifact and encodes its distinct sentences.
func encodedPairs(ctx context.Context, env *registry.Env, batch int) (*stsData, error) {
	enc, data, err := openInputs(env, "data")
	if err != nil {
		return nil, err
	}
	path := data.Path(registry.FilePairs)
	ps, err := rows.Read[rows.STSPair](path)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s: no STS pairs", path)
	}
	set := newSentenceSet()
	d := &stsData{pairs: ps, left: make([]int, len(ps)), right: make([]int, len(ps))}
	for i, p := range ps {
		where := fmt.Sprintf("%s row %d", path, i+1)
		if p.Task == "" {
			return nil, fmt.Errorf("%s: task is empty", where)
		}
		s1, s2 := normalizeSpace(p.Sentence1), normalizeSpace(p.Sentence2)
		if s1 == "" || s2 == "" {
			return nil, fmt.Errorf("%s: empty sentence", where)
		}
		d.left[i] = set.add(s1, where+", sentence1")
		d.right[i] = set.add(s2, where+", sentence2")
	}
	if d.vecs, err = set.encode(ctx, env, enc, batch); err != nil {
		return nil, err
	}
	env.Logger().Info("encoded", "pairs", len(ps), "distinct sentences", d.vecs.len())
	return d, nil
}

func runSTS(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*STSParams)
	d, err := encodedPairs(ctx, env, p.BatchSize)
	if err != nil {
		return err
	}
	scored := make([]metrics.ScoredPair, len(d.pairs))
	for i, r := range d.pairs {
		scored[i] = metrics.ScoredPair{Task: r.Task, Subset: r.Subset, Sys: d.cosine(i), Gold: r.Score}
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
	mean, meanAvg, ok := res.MeanSetting()
	mm := map[string]any{}
	for k, v := range mean {
		mm[k] = v
	}
	if ok {
		mm["avg"] = meanAvg
	}
	out["mean"] = mm
	if p.AlignUniform {
		if err := alignUniform(env, d, out); err != nil {
			return fmt.Errorf("evaluate.sts: %v", err)
		}
	}
	return registry.WriteMetrics(env, "metrics", out)
}

// alignUniform adds SimCSE's alignment and uniformity over the stsb pairs:
// positives are pairs with gold > 4; uniformity is over the DISTINCT stsb
// sentences (a sentence repeated across pairs would add zero distances that
// measure the dataset, not the encoder). Sentences are already distinct
// vectors (deduplicated after whitespace normalisation), so distinct
// sentences are distinct vector indices, in first-seen order.
func alignUniform(env *registry.Env, d *stsData, out map[string]any) error {
	var a, b, all [][]float32
	seen := map[int]bool{}
	for i, p := range d.pairs {
		if p.Task != "stsb" {
			continue
		}
		if p.Score > 4 {
			a, b = append(a, d.vecs.at(d.left[i], nil)), append(b, d.vecs.at(d.right[i], nil))
		}
		for _, v := range [2]int{d.left[i], d.right[i]} {
			if !seen[v] {
				seen[v] = true
				all = append(all, d.vecs.at(v, nil))
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
		env.Logger().Warn("no stsb pair has gold score > 4: alignment not computed")
	}
	if len(all) >= 2 {
		env.Report(0, 0, "uniformity")
		u, err := metrics.Uniformity(all)
		if err != nil {
			return err
		}
		out["uniformity"] = u
	}
	return nil
}
