package transformer

import "strconv"

// ParamShapes lists the names and shapes NewEncoder(c).NamedParams() would
// have, in the same order, without allocating the parameters (Param is
// nil), so that a checkpoint's header can be checked against a config
// before the config's sizes decide any allocation. ok is false when the
// list would exceed limit entries (a layer count no file could back).
func ParamShapes(c Config, limit int) (ps []NamedParam, ok bool) {
	H, I := c.Hidden, c.Intermediate
	add := func(name string, shape ...int) { ps = append(ps, NamedParam{Name: name, Shape: shape}) }
	linear := func(prefix string, in, out int) {
		add(prefix+".weight", out, in)
		add(prefix+".bias", out)
	}
	norm := func(prefix string) {
		add(prefix+".weight", H)
		add(prefix+".bias", H)
	}
	add("embeddings.word_embeddings.weight", c.VocabSize, H)
	add("embeddings.position_embeddings.weight", c.MaxPosition, H)
	if c.TypeVocab > 0 {
		add("embeddings.token_type_embeddings.weight", c.TypeVocab, H)
	}
	norm("embeddings.LayerNorm")
	for i := 0; i < c.Layers; i++ {
		if len(ps) > limit {
			return nil, false
		}
		p := "encoder.layer." + strconv.Itoa(i)
		for _, n := range []string{".attention.self.query", ".attention.self.key", ".attention.self.value", ".attention.output.dense"} {
			linear(p+n, H, H)
		}
		norm(p + ".attention.output.LayerNorm")
		linear(p+".intermediate.dense", H, I)
		linear(p+".output.dense", I, H)
		norm(p + ".output.LayerNorm")
	}
	if c.Pooler {
		linear("pooler.dense", H, H)
	}
	return ps, len(ps) <= limit
}
