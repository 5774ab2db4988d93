package evaluate

import (
	"repro/internal/dataset"
	"repro/registry"
)

// The evaluate.* parameter checks (registry.Validator), run when the file is
// loaded.

// Validate checks the batch size.
func (p *STSParams) Validate() error {
	var c registry.Checks
	c.Positive("batch_size", p.BatchSize)
	return c.Result()
}

// Validate checks the batch size and k of MRR@k.
func (p *RerankParams) Validate() error {
	var c registry.Checks
	c.Positive("batch_size", p.BatchSize)
	c.Positive("mrr_at", p.MRRAt)
	return c.Result()
}

// Validate checks the query side, the ks and the batch size.
func (p *RetrievalParams) Validate() error {
	var c registry.Checks
	c.OneOf("query", p.Query, "document", "headline")
	c.Add(len(p.K) > 0, "k", "empty list: give at least one k for recall@k")
	for _, k := range p.K {
		c.Positive("k", k)
	}
	c.Positive("batch_size", p.BatchSize)
	if p.Similarity != "" { // "" (a Go caller's zero value) ranks by cosine
		c.OneOf("similarity", p.Similarity, "cosine", "dot")
	}
	return c.Result()
}

// Validate checks the task and the batch size.
func (p *DensityParams) Validate() error {
	var c registry.Checks
	c.OneOf("task", p.Task, dataset.STSTasks...)
	c.Positive("batch_size", p.BatchSize)
	return c.Result()
}
