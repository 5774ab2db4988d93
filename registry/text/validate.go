package text

import "repro/registry"

// Validate checks the method, for RAKE top_k, and that draw_seed comes
// with one_chunk (without it nothing is drawn, and a seed that changes
// nothing would only split the cache).
func (p *MaskParams) Validate() error {
	var c registry.Checks
	c.OneOf("method", p.Method, "rake", "np", "vp", "np+vp")
	if p.Method == "rake" {
		c.Positive("top_k", p.TopK)
	}
	c.Add(p.OneChunk || p.DrawSeed == 0, "draw_seed", "%d without one_chunk = true: only one_chunk draws", p.DrawSeed)
	return c.Result()
}

// Validate checks that each strength is a fraction.
func (p *EDAParams) Validate() error {
	var c registry.Checks
	for _, f := range []struct {
		name string
		v    float64
	}{{"synonym_replacement", p.SynonymReplacement}, {"random_deletion", p.RandomDeletion}, {"random_swap", p.RandomSwap}} {
		c.Add(f.v >= 0 && f.v <= 1, f.name, "%g; must be in [0, 1]", f.v)
	}
	return c.Result()
}
