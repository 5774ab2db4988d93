package t5

import (
	"math"
	"strconv"

	"repro/internal/model/checkpoint"
	"repro/internal/model/transformer"
)

// paramShapes lists the names and shapes New(c).NamedParams() would have,
// in order, without allocating (Param is nil); false when the list would
// exceed limit entries.
func paramShapes(c Config, limit int) (ps []transformer.NamedParam, ok bool) {
	_, gated, _ := c.FeedForward()
	D, I, F := c.DModel, c.Inner(), c.DFF
	add := func(name string, shape ...int) { ps = append(ps, transformer.NamedParam{Name: name, Shape: shape}) }
	attn := func(prefix string, rel bool) {
		add(prefix+".q.weight", I, D)
		add(prefix+".k.weight", I, D)
		add(prefix+".v.weight", I, D)
		add(prefix+".o.weight", D, I)
		if rel {
			add(prefix+".relative_attention_bias.weight", c.RelBuckets, c.NumHeads)
		}
	}
	ff := func(prefix string) {
		if gated {
			add(prefix+".wi_0.weight", F, D)
			add(prefix+".wi_1.weight", F, D)
		} else {
			add(prefix+".wi.weight", F, D)
		}
		add(prefix+".wo.weight", D, F)
	}
	add("shared.weight", c.VocabSize, D)
	for i := 0; i < c.NumLayers; i++ {
		if len(ps) > limit {
			return nil, false
		}
		p := "encoder.block." + strconv.Itoa(i)
		attn(p+".layer.0.SelfAttention", i == 0)
		add(p+".layer.0.layer_norm.weight", D)
		ff(p + ".layer.1.DenseReluDense")
		add(p+".layer.1.layer_norm.weight", D)
	}
	add("encoder.final_layer_norm.weight", D)
	for i := 0; i < c.DecoderLayers(); i++ {
		if len(ps) > limit {
			return nil, false
		}
		p := "decoder.block." + strconv.Itoa(i)
		attn(p+".layer.0.SelfAttention", i == 0)
		add(p+".layer.0.layer_norm.weight", D)
		attn(p+".layer.1.EncDecAttention", false)
		add(p+".layer.1.layer_norm.weight", D)
		ff(p + ".layer.2.DenseReluDense")
		add(p+".layer.2.layer_norm.weight", D)
	}
	add("decoder.final_layer_norm.weight", D)
	if !c.TieWordEmbeddings {
		add("lm_head.weight", c.VocabSize, D)
	}
	return ps, len(ps) <= limit
}

// dims are config.json's sizes and the tensors whose shapes must agree.
func (c Config) dims() []checkpoint.Dim {
	// num_heads * d_kv may overflow: -1 matches no tensor's size.
	inner := -1
	if c.NumHeads > 0 && c.DKV > 0 && c.DKV <= math.MaxInt32 && c.NumHeads <= math.MaxInt32/c.DKV {
		inner = c.Inner()
	}
	const sa = "encoder.block.0.layer.0.SelfAttention."
	return []checkpoint.Dim{
		{Field: "vocab_size", Value: c.VocabSize, Tensor: "shared.weight", Axis: 0},
		{Field: "d_model", Value: c.DModel, Tensor: "shared.weight", Axis: 1},
		{Field: "num_heads * d_kv", Value: inner, Tensor: sa + "q.weight", Axis: 0},
		{Field: "relative_attention_num_buckets", Value: c.RelBuckets, Tensor: sa + "relative_attention_bias.weight", Axis: 0},
		{Field: "num_heads", Value: c.NumHeads, Tensor: sa + "relative_attention_bias.weight", Axis: 1},
		{Field: "d_ff", Value: c.DFF, Tensor: "encoder.block.0.layer.1.DenseReluDense.wo.weight", Axis: 1},
	}
}
