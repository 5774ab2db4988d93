package annotate

import (
	"context"

	"repro/internal/infocse"
	"repro/internal/rows"
	"repro/registry"
)

// ConponoParams are annotate.conpono's parameters.
type ConponoParams struct {
	Window int `cty:"window" doc:"sentences at most this far apart are positives"`
}

func conponoType() *registry.StageType {
	return &registry.StageType{
		Name:    "annotate.conpono",
		Version: 1,
		Doc: `CONPONO-style positives, InfoCSE's default initialisation (section 3.2): every pair of
sentences of a document at most window apart (s_k with s_{k+1} .. s_{k+window}), each unordered
pair once, anchor = the earlier sentence. CONPONO itself (Iter et al. 2020) predicts the
surrounding sentences against random negatives; as InfoCSE uses it, neighbours are positives.`,
		Params:  ConponoParams{Window: 2},
		Inputs:  []registry.Port{documentsPort, extraPort},
		Outputs: outputs,
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*ConponoParams)
			return perDocument(env, "annotate.conpono", func(d rows.Document) []rows.DocPair {
				ps, _ := infocse.ConponoPairs(len(d.Sentences), p.Window)
				return pairRows(d, ps)
			})
		},
	}
}

// Validate checks annotate.conpono's parameters.
func (p *ConponoParams) Validate() error {
	var c registry.Checks
	c.Positive("window", p.Window)
	return c.Result()
}

// Validate checks annotate.ict's parameters.
func (p *ICTParams) Validate() error {
	var c registry.Checks
	c.Add(p.Window >= 0, "window", "%d is negative (0 means the whole rest of the document)", p.Window)
	return c.Result()
}

// ICTParams are annotate.ict's parameters.
type ICTParams struct {
	Window int `cty:"window" doc:"context = the sentences up to this far before and after, the sentence itself removed; 0 = the whole rest of the document"`
}

func ictType() *registry.StageType {
	return &registry.StageType{
		Name:    "annotate.ict",
		Version: 1,
		Doc: `Inverse Cloze Task positives (Lee et al. 2019; Chang et al. 2020): for every sentence
of a document, the pair (sentence, its context with the sentence removed). The context is the
window sentences before and after it (0: the rest of the whole document, as InfoCSE words it); the
trainer truncates it to positive_max_length tokens. Anchor = the sentence, positive = the context:
train with swap = false to keep that direction.`,
		Params:  ICTParams{Window: 3},
		Inputs:  []registry.Port{documentsPort, extraPort},
		Outputs: outputs,
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*ICTParams)
			return perDocument(env, "annotate.ict", func(d rows.Document) []rows.DocPair {
				out := make([]rows.DocPair, len(d.Sentences))
				for i, s := range d.Sentences {
					out[i] = rows.DocPair{Doc: d.ID, Anchor: s, Positive: infocse.ICTContext(d.Sentences, i, p.Window)}
				}
				return out
			})
		},
	}
}
