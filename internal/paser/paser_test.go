package paser

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/datadir/datadirtest"
	"repro/internal/dataset"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/loss"
	"repro/internal/text/mask"
	"repro/internal/text/rake"
	"repro/internal/trainer"
)

// stsSentences returns the first n distinct sentences of STS-B dev.
func stsSentences(t testing.TB, n int) []string {
	t.Helper()
	c := &dataset.Catalogue{Dirs: []string{datadirtest.Dir(t)}}
	ps, err := c.STS("stsb", "dev")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		for _, s := range []string{p.Sentence1, p.Sentence2} {
			if !seen[s] && len(out) < n {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// maskedPairs masks the top-3 RAKE phrases of each sentence.
func maskedPairs(t testing.TB, sents []string) []mask.MaskedPair {
	t.Helper()
	out := make([]mask.MaskedPair, len(sents))
	for i, s := range sents {
		p, err := rake.MaskTopK(s, 3)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = p
	}
	return out
}

// tinyModel builds a small encoder with a WordPiece vocabulary trained on
// sents, and PaSeR on top of it.
func tinyModel(t testing.TB, sents []string, cfg Config, seed uint64) *Model {
	t.Helper()
	opts := tokenizer.WordPieceOptions{BasicOptions: tokenizer.BasicOptions{Lowercase: true}}
	vocab, err := tokenizer.TrainWordPiece(sents, tokenizer.TrainOptions{VocabSize: 400, Basic: opts.BasicOptions})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.NewWordPiece(vocab, opts)
	if err != nil {
		t.Fatal(err)
	}
	ec := transformer.Config{VocabSize: tok.Size(), Hidden: 32, Layers: 2, Heads: 2, Intermediate: 64, MaxPosition: 40,
		TypeVocab: 2, HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12, PadID: tok.Special().PAD, Pooler: true}
	enc, err := transformer.NewEncoder(ec, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(enc, tok, cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func smallConfig() Config {
	c := DefaultConfig()
	c.DecoderLayers = 2
	return c
}

func TestPrepare(t *testing.T) {
	sents := stsSentences(t, 200)
	m := tinyModel(t, sents, smallConfig(), 1)
	pairs := maskedPairs(t, sents[:20])
	exs, err := m.Prepare(pairs)
	if err != nil {
		t.Fatal(err)
	}
	sp := m.Tokenizer.Special()
	for i, ex := range exs {
		p := pairs[i]
		masks := strings.Count(p.Masked, mask.MaskToken)
		got := 0
		for _, id := range ex.Masked {
			if id == sp.MASK {
				got++
			}
		}
		if got != masks && len(ex.Masked) < m.Config.MaxLength {
			t.Errorf("pair %d: %d [MASK] words became %d mask ids: %q", i, masks, got, p.Masked)
		}
		// BOS p0 SEP p1 SEP ...: one SEP per target, pieces in between.
		if ex.Target[0] != sp.CLS || ex.Target[len(ex.Target)-1] != sp.SEP {
			t.Fatalf("pair %d: target %v does not run from CLS to SEP", i, ex.Target)
		}
		var phrases []string
		start := 1
		for j := 1; j < len(ex.Target); j++ {
			if ex.Target[j] == sp.SEP {
				phrases = append(phrases, m.Tokenizer.Decode(ex.Target[start:j]))
				start = j + 1
			}
		}
		want := make([]string, len(p.Targets))
		for j, s := range p.Targets {
			want[j] = m.Tokenizer.Decode(m.Tokenizer.Encode(s, 0))
		}
		if len(p.Targets) > 0 && !reflect.DeepEqual(phrases, want) {
			t.Errorf("pair %d: target decodes to %q, want %q", i, phrases, want)
		}
	}
	// Truncation keeps the final SEP.
	long := mask.MaskedPair{Sentence: "a b", Masked: "a [MASK]", Targets: []string{strings.Repeat("word ", 40)}}
	ex, err := m.Prepare([]mask.MaskedPair{long})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ex[0].Target); n != m.Config.MaxTargetLength || ex[0].Target[n-1] != sp.SEP {
		t.Errorf("truncated target has %d ids ending in %d, want %d ending in SEP", n, ex[0].Target[n-1], m.Config.MaxTargetLength)
	}
	// No phrase: BOS SEP.
	ex, err = m.Prepare([]mask.MaskedPair{{Sentence: "it is", Masked: "it is"}})
	if err != nil || !reflect.DeepEqual(ex[0].Target, []int{sp.CLS, sp.SEP}) {
		t.Errorf("empty targets: %v, %v", ex, err)
	}
	// A phrase the tokenizer keeps nothing of (mis-decoded STS text has
	// U+FFFD characters) is left out of the targets and counted.
	ex, err = m.Prepare([]mask.MaskedPair{{Sentence: "supr\ufffdme it is", Masked: "supr[MASK]me [MASK] is", Targets: []string{"\ufffd", "it"}}})
	if err != nil || ex[0].Dropped != 1 || !reflect.DeepEqual(ex[0].Target, append(append([]int{sp.CLS}, m.pieces("it")...), sp.SEP)) {
		t.Errorf("target without tokens: %+v, %v", ex, err)
	}
	ex, err = m.Prepare([]mask.MaskedPair{{Sentence: "\ufffd", Masked: "[MASK]", Targets: []string{"\ufffd"}}})
	if err != nil || !reflect.DeepEqual(ex[0].Target, []int{sp.CLS, sp.SEP}) {
		t.Errorf("only target without tokens: %+v, %v", ex, err)
	}
	for _, bad := range []mask.MaskedPair{{Sentence: "", Masked: "x"}, {Sentence: "x", Masked: "x", Targets: []string{"  "}}} {
		if _, err := m.Prepare([]mask.MaskedPair{{Sentence: "ok", Masked: "ok"}, bad}); err == nil || !strings.Contains(err.Error(), "row 2") {
			t.Errorf("bad pair %+v: error %v, want one naming row 2", bad, err)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	sents := stsSentences(t, 100)
	m := tinyModel(t, sents, smallConfig(), 1)
	for name, mut := range map[string]func(*Config){
		"decoder_layers": func(c *Config) { c.DecoderLayers = 0 },
		"m":              func(c *Config) { c.M = -1 },
		"mlm":            func(c *Config) { c.MLMProb = 1 },
		"max_length":     func(c *Config) { c.MaxLength = 1000 },
		"pooling":        func(c *Config) { c.Pooling = "max" },
		"memory":         func(c *Config) { c.Memory = "both" },
	} {
		c := smallConfig()
		mut(&c)
		if _, err := New(m.Encoder, m.Tokenizer, c, 1); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSignal checks eq. 2's layout in both memory modes.
func TestSignal(t *testing.T) {
	sents := stsSentences(t, 100)
	m := tinyModel(t, sents, smallConfig(), 1)
	m.Config.M, m.Config.N = 10, 0.5
	d := m.Encoder.Config.Hidden
	rng := rand.New(rand.NewPCG(3, 3))
	mk := func() *tensor.Matrix {
		x := tensor.Zeros(3, d)
		for i, v := 0, tensor.Data(x); i < len(v); i++ {
			v[i] = float32(rng.NormFloat64())
		}
		return x
	}
	es, ems := mk(), mk()
	mem := m.Signal(es, ems)
	if mem.Len != 4 {
		t.Fatalf("slots memory has %d rows per example", mem.Len)
	}
	got := tensor.Data(mem.States)
	a, b := tensor.Data(es), tensor.Data(ems)
	for i := 0; i < 3; i++ {
		for j := 0; j < d; j++ {
			x, y := a[i*d+j], b[i*d+j]
			want := []float32{x, y, 10 * float32(math.Abs(float64(x-y))), 0.5 * float32(math.Abs(float64(x*y)))}
			for k, w := range want {
				if g := got[(4*i+k)*d+j]; math.Abs(float64(g-w)) > 1e-5 {
					t.Fatalf("example %d slot %d dim %d: %v, want %v", i, k, j, g, w)
				}
			}
		}
	}
	c := smallConfig()
	c.Memory = MemoryProject
	mp, err := New(m.Encoder, m.Tokenizer, c, 1)
	if err != nil {
		t.Fatal(err)
	}
	pm := mp.Signal(es, ems)
	if r, w := tensor.Dims(pm.States); pm.Len != 1 || r != 3 || w != d {
		t.Fatalf("project memory %dx%d with %d rows per example", r, w, pm.Len)
	}
}

// TestGradCheck compares the gradients of the generative loss with
// central finite differences, in evaluation mode (no dropout), on the
// parameters whose gradient is largest in a few tensors: the shared word
// embeddings (both the encoder's and decoder's use), the pooler (which
// the signal goes through) and a decoder cross-attention weight.
func TestGradCheck(t *testing.T) {
	sents := stsSentences(t, 120)
	for _, mem := range []Memory{MemorySlots, MemoryProject} {
		c := smallConfig()
		c.Memory = mem
		c.M, c.N = 2, 2 // moderate scales keep float32 differences well conditioned
		m := tinyModel(t, sents, c, 7)
		exs, err := m.Prepare(maskedPairs(t, sents[:4]))
		if err != nil {
			t.Fatal(err)
		}
		lossAt := func() float64 {
			l, err := m.GenerativeLoss(exs, nil)
			if err != nil {
				t.Fatal(err)
			}
			return float64(tensor.Data(l)[0])
		}
		for _, p := range m.NamedParams() {
			p.Param.ZeroGrad()
		}
		l, err := m.GenerativeLoss(exs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.Backward(l); err != nil {
			t.Fatal(err)
		}
		byName := transformer.ByName(m.NamedParams())
		names := []string{"embeddings.word_embeddings.weight", "pooler.dense.weight", "decoder.encoder.layer.0.crossattention.self.value.weight", "encoder.layer.1.output.dense.weight"}
		if mem == MemoryProject {
			names = append(names, "decoder.signal_proj.weight")
		}
		for _, name := range names {
			np, ok := byName[name]
			if !ok {
				t.Fatalf("no parameter %s", name)
			}
			g := append([]float32(nil), tensor.GradData(np.Param)...)
			if g == nil {
				t.Fatalf("%s: no gradient", name)
			}
			// The 3 largest-gradient entries: there the difference is far
			// above float32 rounding.
			idx := make([]int, len(g))
			for i := range idx {
				idx[i] = i
			}
			for k := 0; k < 3; k++ {
				for j := k + 1; j < len(idx); j++ {
					if math.Abs(float64(g[idx[j]])) > math.Abs(float64(g[idx[k]])) {
						idx[k], idx[j] = idx[j], idx[k]
					}
				}
			}
			d := tensor.Data(np.Param)
			for _, i := range idx[:3] {
				const eps = 1e-2
				orig := d[i]
				d[i] = orig + eps
				fp := lossAt()
				d[i] = orig - eps
				fm := lossAt()
				d[i] = orig
				num := (fp - fm) / (2 * eps)
				if a := float64(g[i]); math.Abs(a-num) > 2e-3+5e-2*math.Abs(num) {
					t.Errorf("%s memory, %s[%d]: analytic %.6g, numeric %.6g", mem, name, i, a, num)
				}
			}
		}
	}
}

func TestMLMMasking(t *testing.T) {
	sents := stsSentences(t, 300)
	m := tinyModel(t, sents, smallConfig(), 1)
	sp := m.Tokenizer.Special()
	seqs := make([][]int, len(sents))
	for i, s := range sents {
		seqs[i] = m.Tokenizer.Encode(s, 32)
	}
	b0, _ := transformer.NewBatch(seqs, sp.PAD)
	b, labels, err := m.maskForMLM(seqs, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	var cand, drawn, masked, kept int
	for p, l := range labels {
		real := p%b.T < b.Lens[p/b.T]
		orig := b0.IDs[p]
		isSpecial := orig == sp.CLS || orig == sp.SEP || orig == sp.PAD
		if real && !isSpecial {
			cand++
		}
		if l == loss.IgnoreIndex {
			if b.IDs[p] != orig {
				t.Fatalf("position %d changed without a label", p)
			}
			continue
		}
		if !real || isSpecial {
			t.Fatalf("position %d (id %d) was drawn but is padding or special", p, orig)
		}
		if l != orig {
			t.Fatalf("label %d at %d, want the original %d", l, p, orig)
		}
		drawn++
		switch b.IDs[p] {
		case sp.MASK:
			masked++
		case orig:
			kept++
		}
	}
	rate := float64(drawn) / float64(cand)
	if math.Abs(rate-0.15) > 0.02 {
		t.Errorf("drew %.3f of %d candidate tokens, want about 0.15", rate, cand)
	}
	if f := float64(masked) / float64(drawn); math.Abs(f-0.8) > 0.05 {
		t.Errorf("%.3f of drawn tokens became the mask token, want about 0.8", f)
	}
	// Kept: 10% plus the random draws that hit the original id.
	if f := float64(kept) / float64(drawn); math.Abs(f-0.1) > 0.04 {
		t.Errorf("%.3f of drawn tokens kept, want about 0.1", f)
	}
}

// newTrainer wires the model into internal/trainer for the tests.
func newTrainer(m *Model, exs []Example, steps int, lr float64, seed uint64, fn func(*Model, []Example, *rand.Rand) (mat.Tensor, error)) *trainer.Trainer {
	return &trainer.Trainer{
		Params: trainer.FromNamed(m.NamedParams()),
		N:      len(exs),
		Config: trainer.Config{MaxSteps: steps, BatchSize: len(exs), LR: lr, ConstantLR: true, Seed: seed, MaxGradNorm: 1},
		Step: func(_ context.Context, idx []int, rng *rand.Rand) (mat.Tensor, error) {
			b := make([]Example, len(idx))
			for i, j := range idx {
				b[i] = exs[j]
			}
			return fn(m, b, rng)
		},
	}
}

func generative(m *Model, b []Example, rng *rand.Rand) (mat.Tensor, error) {
	return m.GenerativeLoss(b, rng)
}

// TestOverfit: on a small fixed batch the generative loss falls far over
// a few dozen updates, and the decoder then reconstructs a masked phrase
// from the two sentence vectors alone.
func TestOverfit(t *testing.T) {
	sents := stsSentences(t, 300)
	c := smallConfig()
	m := tinyModel(t, sents, c, 11)
	m.Encoder.Config.HiddenDropout, m.Encoder.Config.AttentionDropout = 0, 0
	m.Decoder.Config.HiddenDropout, m.Decoder.Config.AttentionDropout = 0, 0
	pairs := maskedPairs(t, sents[:8])
	exs, err := m.Prepare(pairs)
	if err != nil {
		t.Fatal(err)
	}
	before, err := m.GenerativeLoss(exs, nil)
	if err != nil {
		t.Fatal(err)
	}
	l0 := tensor.Data(before)[0]
	if _, err := newTrainer(m, exs, 150, 3e-3, 1, generative).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	after, err := m.GenerativeLoss(exs, nil)
	if err != nil {
		t.Fatal(err)
	}
	l1 := tensor.Data(after)[0]
	t.Logf("generative loss %.4f -> %.4f", l0, l1)
	if !(l1 < 0.25*l0) {
		t.Fatalf("generative loss %.4f -> %.4f: did not fall below a quarter", l0, l1)
	}
	hits := 0
	for _, p := range pairs {
		if len(p.Targets) == 0 {
			continue
		}
		got, err := m.Reconstruct(p.Sentence, p.Masked, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := m.Tokenizer.Decode(m.Tokenizer.Encode(p.Targets[0], 0))
		if len(got) == 1 && got[0] == want {
			hits++
		}
	}
	if hits < len(pairs)/2 {
		t.Errorf("reconstructed %d of %d first phrases of the training batch", hits, len(pairs))
	}
}

// TestUnsupLossDeterministic: eq. 4 with MLM trains reproducibly: the same
// seed gives bit-identical weights, another seed different ones, and the
// total is the sum of its parts.
func TestUnsupLossDeterministic(t *testing.T) {
	sents := stsSentences(t, 200)
	pairs := maskedPairs(t, sents[:16])
	run := func(seed uint64) [][]float32 {
		m := tinyModel(t, sents, smallConfig(), 3)
		exs, err := m.Prepare(pairs)
		if err != nil {
			t.Fatal(err)
		}
		tr := newTrainer(m, exs, 4, 1e-3, seed, func(m *Model, b []Example, rng *rand.Rand) (mat.Tensor, error) {
			l, err := m.UnsupLoss(b, rng)
			if err != nil {
				return nil, err
			}
			tot, g, mlm := tensor.Data(l.Total)[0], tensor.Data(l.Generative)[0], tensor.Data(l.MLM)[0]
			if math.Abs(float64(tot-(g+mlm))) > 1e-5 {
				t.Errorf("total %v != generative %v + MLM %v", tot, g, mlm)
			}
			return l.Total, nil
		})
		tr.Config.BatchSize = 8
		if _, err := tr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		var w [][]float32
		for _, p := range m.NamedParams() {
			w = append(w, append([]float32(nil), tensor.Data(p.Param)...))
		}
		return w
	}
	a, b, c := run(1), run(1), run(2)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different weights")
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds, same weights")
	}
}

// TestSupLoss: eq. 5's total is contrastive + alpha * generative, and a
// triplet batch without negatives falls back to in-batch negatives.
func TestSupLoss(t *testing.T) {
	sents := stsSentences(t, 200)
	c := smallConfig()
	c.MLM = false
	m := tinyModel(t, sents, c, 5)
	exs, err := m.Prepare(maskedPairs(t, sents[:6]))
	if err != nil {
		t.Fatal(err)
	}
	trip, err := m.PrepareTriplets(sents[:6], sents[6:12], sents[12:18])
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.SupLoss(trip, exs, 0.5, 0.05, nil)
	if err != nil {
		t.Fatal(err)
	}
	tot, con, gen := tensor.Data(l.Total)[0], tensor.Data(l.Contrastive)[0], tensor.Data(l.Generative)[0]
	if math.Abs(float64(tot-(con+0.5*gen))) > 1e-4 {
		t.Errorf("total %v != %v + 0.5 * %v", tot, con, gen)
	}
	// With n hard negatives the chance level is log(2n).
	if con <= 0 || gen <= 0 {
		t.Errorf("non-positive losses %v %v", con, gen)
	}
	l0, err := m.SupLoss(trip, exs, 0, 0.05, nil)
	if err != nil || l0.Generative != nil || tensor.Data(l0.Total)[0] != con {
		t.Errorf("alpha 0: %+v, %v", l0, err)
	}
	if _, err := m.PrepareTriplets(sents[:2], sents[2:4], []string{"x", ""}); err == nil || !strings.Contains(err.Error(), "row 2") {
		t.Errorf("mixed negatives: %v", err)
	}
	noNeg, err := m.PrepareTriplets(sents[:6], sents[6:12], make([]string, 6))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ContrastiveLoss(noNeg, 0.05, nil); err != nil {
		t.Errorf("in-batch negatives: %v", err)
	}
}

// BenchmarkUnsupStep times one training update of the mini-profile shape
// (4 x 128 encoder, batch 64, max length 32, vocabulary 4000) for the
// decoder depths of the paper's Figure 4, with and without MLM: the cost
// of one cell of the decoder-depth ablation is about steps x this.
func BenchmarkUnsupStep(b *testing.B) {
	sents := stsSentences(b, 3000)
	pairs := maskedPairs(b, sents)
	opts := tokenizer.WordPieceOptions{BasicOptions: tokenizer.BasicOptions{Lowercase: true}}
	vocab, err := tokenizer.TrainWordPiece(sents, tokenizer.TrainOptions{VocabSize: 4000, Basic: opts.BasicOptions})
	if err != nil {
		b.Fatal(err)
	}
	tok, err := tokenizer.NewWordPiece(vocab, opts)
	if err != nil {
		b.Fatal(err)
	}
	for _, mlm := range []bool{true, false} {
		for _, layers := range []int{1, 2, 6, 8} {
			name := "decoder=" + string(rune('0'+layers))
			if !mlm {
				name += "/no_mlm"
			}
			b.Run(name, func(b *testing.B) {
				ec := transformer.Config{VocabSize: tok.Size(), Hidden: 128, Layers: 4, Heads: 4, Intermediate: 512, MaxPosition: 64,
					TypeVocab: 2, HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12, PadID: tok.Special().PAD, Pooler: true}
				enc, err := transformer.NewEncoder(ec, rand.New(rand.NewPCG(1, 1)))
				if err != nil {
					b.Fatal(err)
				}
				c := DefaultConfig()
				c.DecoderLayers, c.MLM = layers, mlm
				m, err := New(enc, tok, c, 1)
				if err != nil {
					b.Fatal(err)
				}
				exs, err := m.Prepare(pairs)
				if err != nil {
					b.Fatal(err)
				}
				tr := newTrainer(m, exs, b.N, 1e-4, 1, func(m *Model, bt []Example, rng *rand.Rand) (mat.Tensor, error) {
					l, err := m.UnsupLoss(bt, rng)
					return l.Total, err
				})
				tr.Config.BatchSize = 64
				b.ResetTimer()
				if _, err := tr.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// Reconstruct greedily decodes the first k masked phrases of one pair in
// evaluation mode (the paper's Table 7), at most MaxTargetLength-1 ids.
// The caller says how many phrases it masked: training never shows the
// decoder what follows the final SEP, so the count is what stops it.
func (m *Model) Reconstruct(sentence, masked string, k int) ([]string, error) {
	if k < 1 {
		return nil, fmt.Errorf("paser: reconstruct %d phrases: want at least 1", k)
	}
	s := m.Tokenizer.Encode(sentence, m.Config.MaxLength)
	sm := m.Tokenizer.Encode(masked, m.Config.MaxLength)
	pooled, err := m.embedPooled([][]int{s, sm}, nil)
	if err != nil {
		return nil, err
	}
	mem := m.Signal(tensor.SliceRows(pooled, 0, 1), tensor.SliceRows(pooled, 1, 2))
	seq := []int{m.special.CLS}
	var phrases []string
	var cur []int
	v := m.Encoder.Config.VocabSize
	for len(seq) < m.Config.MaxTargetLength && len(phrases) < k {
		tb, err := transformer.NewBatch([][]int{seq}, m.Encoder.Config.PadID)
		if err != nil {
			return nil, err
		}
		logits, _, err := m.Decoder.Forward(tb, mem, nil)
		if err != nil {
			return nil, err
		}
		last := tensor.Data(logits)[(len(seq)-1)*v : len(seq)*v]
		best := 0
		for j, x := range last {
			if x > last[best] {
				best = j
			}
		}
		seq = append(seq, best)
		if best == m.special.SEP {
			phrases = append(phrases, m.Tokenizer.Decode(cur))
			cur = cur[:0]
			continue
		}
		cur = append(cur, best)
	}
	if len(cur) > 0 && len(phrases) < k {
		phrases = append(phrases, m.Tokenizer.Decode(cur))
	}
	return phrases, nil
}
