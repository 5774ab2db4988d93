package encode

import (
	"context"
	"errors"
	"fmt"

	"repro/internal/encoder/pooled"
	"repro/internal/model/transformer"
	"repro/registry"
)

// PoolingParams are encode.pooling's parameters.
type PoolingParams struct {
	Pooling      string `cty:"pooling" doc:"cls | cls_before_pooler | mean | first_last_avg | top2_avg"`
	HFCheckpoint string `cty:"hf_checkpoint" path:"checkpoint" doc:"local Hugging Face BERT/RoBERTa directory, read when no encoder input is connected (the paper profiles' BERT-base)"`
}

var errNoEncoder = errors.New("no encoder: connect one or set hf_checkpoint to a local Hugging Face BERT directory (experiments/dino.hcl takes it as -var bert=DIR)")

// CheckStart refuses, before a run starts, a stage with neither an encoder
// input nor hf_checkpoint (registry.StartChecker).
func (p PoolingParams) CheckStart(connected func(string) bool) error {
	if connected("encoder") || p.HFCheckpoint != "" {
		return nil
	}
	return errNoEncoder
}

// Validate checks the pooling name at load time.
func (p *PoolingParams) Validate() error {
	var c registry.Checks
	c.OneOf("pooling", p.Pooling, transformer.PoolingNames()...)
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
		Inputs:  []registry.Port{{Name: "encoder", Kind: registry.KindEncoder, Optional: true, Doc: "a transformer encoder (encoder.json type \"transformer\"); else hf_checkpoint"}},
		Outputs: encoderPort(),
		Externals: func(params any) ([]registry.External, error) {
			if p := params.(*PoolingParams); p.HFCheckpoint != "" {
				return []registry.External{{Name: "hf_checkpoint", Path: p.HFCheckpoint}}, nil
			}
			return nil, nil
		},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*PoolingParams)
			pool := transformer.Pooling(p.Pooling)
			var m *pooled.Model
			var err error
			from := "hf_checkpoint"
			if a, ok := env.Inputs["encoder"]; ok {
				from = a.Digest
				m, err = pooled.Load(a.Dir)
			} else if p.HFCheckpoint != "" {
				m, err = pooled.FromHF(p.HFCheckpoint, pool)
			} else {
				return errNoEncoder
			}
			if err != nil {
				return fmt.Errorf("encoder: %w", err)
			}
			m.Pooling = pool
			if m.Pooling == transformer.PoolCLS && m.Encoder.Pooler == nil {
				return fmt.Errorf("pooling: %q needs the pooler weights, which the encoder lacks (use cls_before_pooler for the raw [CLS] vector)", p.Pooling)
			}
			return m.Save(env.Output("encoder"), map[string]any{"repooled_from": from})
		},
	}
}
