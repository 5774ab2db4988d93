package gpt2

import (
	"strconv"

	"repro/internal/model/checkpoint"
	"repro/internal/model/transformer"
)

// paramShapes lists the names and shapes New(c).NamedParams() would have,
// in order, without allocating (Param is nil); false when the list would
// exceed limit entries.
func paramShapes(c Config, limit int) (ps []transformer.NamedParam, ok bool) {
	D, I := c.NEmbd, c.Inner()
	add := func(name string, shape ...int) { ps = append(ps, transformer.NamedParam{Name: name, Shape: shape}) }
	conv := func(prefix string, in, out int) {
		add(prefix+".weight", in, out)
		add(prefix+".bias", out)
	}
	norm := func(prefix string) {
		add(prefix+".weight", D)
		add(prefix+".bias", D)
	}
	add("wte.weight", c.VocabSize, D)
	add("wpe.weight", c.NPositions, D)
	for i := 0; i < c.NLayer; i++ {
		if len(ps) > limit {
			return nil, false
		}
		p := "h." + strconv.Itoa(i)
		norm(p + ".ln_1")
		conv(p+".attn.c_attn", D, 3*D)
		conv(p+".attn.c_proj", D, D)
		norm(p + ".ln_2")
		conv(p+".mlp.c_fc", D, I)
		conv(p+".mlp.c_proj", I, D)
	}
	norm("ln_f")
	if !c.TieWordEmbeddings {
		add("lm_head.weight", c.VocabSize, D)
	}
	return ps, len(ps) <= limit
}

// dims are config.json's sizes and the tensors whose shapes must agree.
func (c Config) dims() []checkpoint.Dim {
	return []checkpoint.Dim{
		{Field: "vocab_size", Value: c.VocabSize, Tensor: "wte.weight", Axis: 0},
		{Field: "n_embd", Value: c.NEmbd, Tensor: "wte.weight", Axis: 1},
		{Field: "n_positions", Value: c.NPositions, Tensor: "wpe.weight", Axis: 0},
		{Field: "n_inner", Value: c.Inner(), Tensor: "h.0.mlp.c_fc.weight", Axis: 1},
	}
}
