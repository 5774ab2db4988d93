package evaluate

import (
	"context"
	"fmt"

	"repro/internal/metrics"
	"repro/internal/rows"
	"repro/registry"
)

// RerankParams are evaluate.rerank's parameters.
type RerankParams struct {
	BatchSize int `cty:"batch_size" doc:"sentences per Encode call"`
	MRRAt     int `cty:"mrr_at" doc:"k of MRR@k (MTEB: 10)"`
}

func rerankType() *registry.StageType {
	return &registry.StageType{
		Name: "evaluate.rerank",
		// 2: SentencePiece ties broken as sentencepiece 0.1.97 does (a
		// dev candidate tokenizes differently under the ci and mini T5
		// vocabularies, so a T5 encoder's scores move).
		Version: 2,
		Doc: `Reranking as MTEB v1's RerankingEvaluator: queries without a positive or without a
negative are dropped; candidates are ranked by cosine with the query; map = mean average
precision x100 (sklearn's average_precision_score, tied scores together; the main score),
mrrK = mean reciprocal rank at k x100 (exact ties keep input order, positives first),
queries = kept, dropped = dropped.`,
		Params:  RerankParams{BatchSize: defaultBatch, MRRAt: 10},
		Inputs:  []registry.Port{encoderPort, {Name: "data", Kind: registry.KindRerank, Doc: "reranking queries"}},
		Outputs: []registry.Port{metricsPort},
		Tensor:  true,
		Light:   true,
		Run:     runRerank,
	}
}

func runRerank(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*RerankParams)
	enc, data, err := openInputs(env, "data")
	if err != nil {
		return err
	}
	path := data.Path(registry.FileQueries)
	qs, err := rows.Read[rows.RerankQuery](path)
	if err != nil {
		return err
	}
	if len(qs) == 0 {
		return fmt.Errorf("%s: no queries", path)
	}
	set := newSentenceSet()
	type idx struct {
		q        int
		pos, neg []int
	}
	ids := make([]idx, len(qs))
	for i, q := range qs {
		where := fmt.Sprintf("%s row %d (id %q)", path, i+1, q.ID)
		if q.Query == "" {
			return fmt.Errorf("%s: empty query", where)
		}
		ids[i].q = set.add(q.Query, where+", query")
		for k, c := range q.Positive {
			if c == "" {
				return fmt.Errorf("%s: positive %d is empty", where, k+1)
			}
			ids[i].pos = append(ids[i].pos, set.add(c, fmt.Sprintf("%s, positive %d", where, k+1)))
		}
		for k, c := range q.Negative {
			if c == "" {
				return fmt.Errorf("%s: negative %d is empty", where, k+1)
			}
			ids[i].neg = append(ids[i].neg, set.add(c, fmt.Sprintf("%s, negative %d", where, k+1)))
		}
	}
	vs, err := set.encode(ctx, env, enc, p.BatchSize)
	if err != nil {
		return err
	}
	// Expand each distinct sentence once, however many queries share it.
	dense := make([][]float32, vs.len())
	vec := func(j int) []float32 {
		if dense[j] == nil {
			dense[j] = vs.at(j, nil)
		}
		return dense[j]
	}
	mq := make([]metrics.RerankQuery, len(qs))
	for i, id := range ids {
		mq[i].Query = vec(id.q)
		for _, j := range id.pos {
			mq[i].Positive = append(mq[i].Positive, vec(j))
		}
		for _, j := range id.neg {
			mq[i].Negative = append(mq[i].Negative, vec(j))
		}
	}
	res, err := metrics.Rerank(mq, p.MRRAt)
	if err != nil {
		return fmt.Errorf("evaluate.rerank: %s: %v", path, err)
	}
	return registry.WriteMetrics(env, "metrics", map[string]any{
		"map":                         res.MAP,
		fmt.Sprintf("mrr%d", p.MRRAt): res.MRR,
		"queries":                     res.Queries,
		"dropped":                     res.Dropped,
	})
}
