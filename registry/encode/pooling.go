package encode

import (
	"context"
	"fmt"
	"strings"

	"repro/internal/encoder/pooled"
	"repro/internal/model/transformer"
	"repro/registry"
)

// PoolingParams are encode.pooling's parameters.
type PoolingParams struct {
	Pooling string `cty:"pooling" doc:"cls | cls_before_pooler | mean | first_last_avg | top2_avg"`
}

// Validate checks the pooling name at load time.
func (p *PoolingParams) Validate() error {
	var c registry.Checks
	var names []string
	ok := false
	for _, q := range transformer.Poolings() {
		names = append(names, string(q))
		ok = ok || string(q) == p.Pooling
	}
	c.Add(ok, "pooling", "%q is not one of %s", p.Pooling, strings.Join(names, ", "))
	return c.Result()
}

// poolingType re-pools a trained transformer encoder without training it:
// the "BERT CLS" and "Avg. BERT" rows of DINO's Table 1 (Reimers and
// Gurevych's baselines) are one pretrained BERT read two ways.
func poolingType() *registry.StageType {
	return &registry.StageType{
		Name:    "encode.pooling",
		Version: 1,
		Doc: `A transformer encoder with another pooling, weights unchanged: e.g. the [CLS] vector
(cls_before_pooler) or the mean of the last layer's token vectors (mean) of a pretrained BERT.`,
		Params:  PoolingParams{Pooling: string(transformer.PoolMean)},
		Inputs:  []registry.Port{{Name: "encoder", Kind: registry.KindEncoder, Doc: "a transformer encoder (encoder.json type \"transformer\")"}},
		Outputs: encoderPort(),
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*PoolingParams)
			a, err := env.Input("encoder")
			if err != nil {
				return err
			}
			m, err := pooled.Load(a.Dir)
			if err != nil {
				return fmt.Errorf("encoder: %w", err)
			}
			m.Pooling = transformer.Pooling(p.Pooling)
			if m.Pooling == transformer.PoolCLS && m.Encoder.Pooler == nil {
				return fmt.Errorf("pooling: %q needs the pooler weights, which %s lacks (use cls_before_pooler for the raw [CLS] vector)", p.Pooling, a.Dir)
			}
			return m.Save(env.Output("encoder"), map[string]any{"repooled_from": a.Digest})
		},
	}
}
