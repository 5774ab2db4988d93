package mlm

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/encoder/pooled"
	"repro/internal/model/safetensors"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/loss"
	"repro/internal/trainer"
)

// A synthetic vocabulary: 0 [PAD], 1 [CLS], 2 [SEP], 3 [MASK], then words;
// ids >= 40 are "##" continuation pieces.
func synthVocab() Vocab {
	v := Vocab{Size: 80, Mask: 3, Pad: 0, Special: map[int]bool{0: true, 1: true, 2: true}, Continues: make([]bool, 80)}
	for id := 40; id < 80; id++ {
		v.Continues[id] = true
	}
	return v
}

func synthSeqs(n int, seed uint64) [][]int {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][]int, n)
	for i := range out {
		l := 3 + rng.IntN(20)
		s := []int{1}
		for j := 0; j < l; j++ {
			s = append(s, 4+rng.IntN(76))
		}
		out[i] = append(s, 2)
	}
	return out
}

func TestMaskTokenLevel(t *testing.T) {
	v := synthVocab()
	seqs := synthSeqs(3000, 1)
	b0, _ := transformer.NewBatch(seqs, v.Pad)
	b, labels, err := Mask(seqs, v, BERT(), rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	var cand, chosenN, masked, random, kept int
	for p, l := range labels {
		real := p%b.T < b.Lens[p/b.T]
		orig := b0.IDs[p]
		if real && !v.Special[orig] {
			cand++
		}
		if l == loss.IgnoreIndex {
			if b.IDs[p] != orig {
				t.Fatalf("position %d changed without a label", p)
			}
			continue
		}
		if !real || v.Special[orig] {
			t.Fatalf("position %d (id %d) chosen but padding or special", p, orig)
		}
		if l != orig {
			t.Fatalf("label %d at %d, want the original %d", l, p, orig)
		}
		chosenN++
		switch b.IDs[p] {
		case v.Mask:
			masked++
		case orig:
			kept++
		default:
			random++
		}
	}
	// ~38,000 candidates: 15% +- 0.6 points is > 3 sd.
	if r := float64(chosenN) / float64(cand); math.Abs(r-0.15) > 0.006 {
		t.Errorf("chosen %.4f of the tokens, want 0.15", r)
	}
	// Random replacements that draw the original id count as kept (1/80).
	for name, got := range map[string]float64{"mask": float64(masked), "random": float64(random), "kept": float64(kept)} {
		want := map[string]float64{"mask": 0.8, "random": 0.1 * 79 / 80, "kept": 0.1 + 0.1/80}[name]
		if r := got / float64(chosenN); math.Abs(r-want) > 0.03 {
			t.Errorf("%s: %.3f of the chosen tokens, want %.3f", name, r, want)
		}
	}
	// The same generator state gives the same masks (and another one, others).
	b2, l2, _ := Mask(seqs, v, BERT(), rand.New(rand.NewPCG(9, 9)))
	if !reflect.DeepEqual(b.IDs, b2.IDs) || !reflect.DeepEqual(labels, l2) {
		t.Error("masking is not deterministic")
	}
	_, l3, _ := Mask(seqs, v, BERT(), rand.New(rand.NewPCG(10, 9)))
	if reflect.DeepEqual(labels, l3) {
		t.Error("another seed gave the same masks")
	}
}

func TestMaskWholeWord(t *testing.T) {
	v := synthVocab()
	seqs := synthSeqs(3000, 2)
	mk := BERT()
	mk.WholeWord = true
	b, labels, err := Mask(seqs, v, mk, rand.New(rand.NewPCG(4, 4)))
	if err != nil {
		t.Fatal(err)
	}
	b0, _ := transformer.NewBatch(seqs, v.Pad)
	words, chosenWords := 0, 0
	for s := 0; s < b.B; s++ {
		// Walk the words of sequence s: a word is a non-continuation piece
		// and the continuation pieces after it.
		for p := 1; p < b.Lens[s]-1; {
			q := p + 1
			for q < b.Lens[s]-1 && v.Continues[b0.IDs[s*b.T+q]] {
				q++
			}
			n := 0
			for i := p; i < q; i++ {
				if labels[s*b.T+i] != loss.IgnoreIndex {
					n++
				}
			}
			if n != 0 && n != q-p {
				t.Fatalf("sequence %d: word at %d..%d partly chosen (%d of %d pieces)", s, p, q, n, q-p)
			}
			words++
			if n > 0 {
				chosenWords++
			}
			p = q
		}
	}
	if r := float64(chosenWords) / float64(words); math.Abs(r-0.15) > 0.01 {
		t.Errorf("chosen %.4f of the words, want 0.15", r)
	}
}

func TestMaskEdges(t *testing.T) {
	v := synthVocab()
	if _, _, err := Mask([][]int{{1, 2}, {1, 2}}, v, BERT(), rand.New(rand.NewPCG(1, 1))); err == nil || !strings.Contains(err.Error(), "no token to mask") {
		t.Errorf("only special tokens: %v", err)
	}
	// One short sentence: whatever the draws, exactly one position at
	// least is chosen.
	for seed := uint64(0); seed < 50; seed++ {
		_, labels, err := Mask([][]int{{1, 7, 2}}, v, BERT(), rand.New(rand.NewPCG(seed, 0)))
		if err != nil {
			t.Fatal(err)
		}
		if labels[1] != 7 || labels[0] != loss.IgnoreIndex || labels[2] != loss.IgnoreIndex {
			t.Fatalf("seed %d: labels %v", seed, labels)
		}
	}
	for _, bad := range []Masking{{Prob: 0}, {Prob: 1}, {Prob: 0.15, MaskFrac: 0.9, RandomFrac: 0.2}, {Prob: 0.15, MaskFrac: -0.1}} {
		if bad.Check() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if err := BERT().Check(); err != nil {
		t.Error(err)
	}
}

func TestVocabOf(t *testing.T) {
	wp, err := tokenizer.NewWordPiece([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "play", "##ing", "the"}, tokenizer.WordPieceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := VocabOf(wp)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v.Continues, []bool{false, false, false, false, false, false, true, false}) || v.Mask != 4 || v.Pad != 0 || !v.Special[2] || !v.Special[3] {
		t.Errorf("wordpiece: %+v", v)
	}
	bpe, err := tokenizer.TrainBPE([]string{"the playing players play", "the the play"}, tokenizer.BPETrainOptions{VocabSize: 280})
	if err != nil {
		t.Fatal(err)
	}
	v, err = VocabOf(bpe)
	if err != nil {
		t.Fatal(err)
	}
	ids := bpe.Encode("the playing players", 0)
	for _, id := range ids[1 : len(ids)-1] {
		if tok := bpe.Token(id); v.Continues[id] == strings.HasPrefix(tok, "\u0120") {
			t.Errorf("BPE piece %q: continues = %v", tok, v.Continues[id])
		}
	}
	// The sentence's first word follows <s>: whole-word masking starts a
	// word there although the piece has no space mark.
	mk := BERT()
	mk.WholeWord, mk.Prob = true, 0.999
	_, labels, err := Mask([][]int{ids}, v, mk, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if labels[1] == loss.IgnoreIndex {
		t.Errorf("first word not chosen at probability 0.999: %v", labels)
	}
	if v.Mask != bpe.Special().MASK || !v.Special[bpe.Special().CLS] {
		t.Errorf("BPE specials %+v", v)
	}
}

func TestGroupByLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	lens := make([]int, 1003)
	for i := range lens {
		lens[i] = 1 + rng.IntN(60)
	}
	g, err := GroupByLength(lens, 16, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	var all []int
	for i, b := range g {
		if len(b) != 16 && i != len(g)-1 && len(b) != 1003%160%16 {
			t.Errorf("batch %d has %d sentences", i, len(b))
		}
		for j := 1; j < len(b); j++ {
			if lens[b[j]] > lens[b[j-1]] {
				t.Errorf("batch %d not sorted by length", i)
			}
		}
		all = append(all, b...)
	}
	sort.Ints(all)
	for i, x := range all {
		if x != i {
			t.Fatalf("the batches do not partition the sentences (index %d holds %d)", i, x)
		}
	}
	// Less padding than random batches of 16.
	pad := func(bs [][]int) int {
		n := 0
		for _, b := range bs {
			mx := 0
			for _, i := range b {
				mx = max(mx, lens[i])
			}
			for _, i := range b {
				n += mx - lens[i]
			}
		}
		return n
	}
	rnd, _ := GroupByLength(lens, 16, 1, 5)
	if pad(g) >= pad(rnd)/3 {
		t.Errorf("grouped padding %d, random %d", pad(g), pad(rnd))
	}
	g2, _ := GroupByLength(lens, 16, 10, 5)
	if !reflect.DeepEqual(g, g2) {
		t.Error("not deterministic")
	}
	if _, err := GroupByLength(nil, 16, 10, 5); err == nil {
		t.Error("no sentences accepted")
	}
}

// TestHeadGolden checks the head and the loss against PyTorch
// (testdata/gen_head.py), and score's float64 cross-entropy and accuracy.
func TestHeadGolden(t *testing.T) {
	var g struct {
		Vocab, Hidden int
		Weights       map[string][]float32
		X             []float32
		Labels        []int
		Logits        []float64
		Loss          float64
		Accuracy      float64
	}
	b, err := os.ReadFile("testdata/head.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	enc, err := transformer.NewEncoder(transformer.Config{VocabSize: g.Vocab, Hidden: g.Hidden, Layers: 1, Heads: 2, Intermediate: 16,
		MaxPosition: 16, TypeVocab: 2, LayerNormEps: 1e-12}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	head := transformer.NewMLMHead(enc, rand.New(rand.NewPCG(1, 2)))
	named := append(enc.NamedParams(), head.NamedParams()...)
	for name, w := range g.Weights {
		if err := transformer.SetParam(named, name, w); err != nil {
			t.Fatal(err)
		}
	}
	x := tensor.Zeros(len(g.Labels), g.Hidden)
	copy(tensor.Data(x), g.X)
	logits := head.Forward(x)
	for i, want := range g.Logits {
		if got := float64(tensor.Data(logits)[i]); math.Abs(got-want) > 1e-5 {
			t.Fatalf("logit %d: %.7f, want %.7f", i, got, want)
		}
	}
	l, err := loss.MLM(logits, g.Labels)
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(tensor.Data(l)[0]); math.Abs(got-g.Loss) > 1e-5 {
		t.Errorf("loss %.7f, want %.7f", got, g.Loss)
	}
	sum, right := score(tensor.Data(logits), g.Vocab, g.Labels)
	if got := sum / float64(len(g.Labels)); math.Abs(got-g.Loss) > 1e-5 {
		t.Errorf("score loss %.7f, want %.7f", got, g.Loss)
	}
	if got := float64(right) / float64(len(g.Labels)); got != g.Accuracy {
		t.Errorf("accuracy %v, want %v", got, g.Accuracy)
	}
}

var corpus = []string{
	"A man is playing a guitar on the stage.",
	"A woman is slicing an onion in the kitchen.",
	"Two dogs are running through a field of grass.",
	"The children are playing football in the park.",
	"A man is playing the piano while a woman sings.",
	"The cat is sleeping on the warm windowsill.",
	"Stock markets fell sharply on Monday morning.",
	"The president spoke to reporters about the economy.",
	"A dog is running in the park with a ball.",
	"The woman is cutting vegetables in the kitchen.",
}

func tinyMLM(t testing.TB, roberta bool, dropout float32) *Model {
	t.Helper()
	cfg := transformer.Config{Hidden: 16, Layers: 2, Heads: 2, Intermediate: 32, MaxPosition: 40, TypeVocab: 2,
		HiddenDropout: dropout, AttentionDropout: dropout, LayerNormEps: 1e-12}
	var tok tokenizer.Tokenizer
	if roberta {
		b, err := tokenizer.TrainBPE(corpus, tokenizer.BPETrainOptions{VocabSize: 330})
		if err != nil {
			t.Fatal(err)
		}
		tok = b
		cfg.PositionOffset = b.Special().PAD + 1
		cfg.MaxPosition += cfg.PositionOffset
		cfg.TypeVocab = 1
	} else {
		wp, err := pooled.TrainVocab(corpus, 150)
		if err != nil {
			t.Fatal(err)
		}
		tok = wp
	}
	cfg.VocabSize = tok.Size()
	cfg.PadID = tok.Special().PAD
	enc, err := transformer.NewEncoder(cfg, rand.New(rand.NewPCG(7, 7)))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(enc, tok, 7)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func encodeAll(m *Model, ss []string) [][]int {
	out := make([][]int, len(ss))
	for i, s := range ss {
		out[i] = m.Tokenizer.Encode(s, 0)
	}
	return out
}

// TestLossEqualsEvaluate: without dropout, the training loss of a batch
// and Evaluate over the same masks agree.
func TestLossEqualsEvaluate(t *testing.T) {
	m := tinyMLM(t, false, 0)
	seqs := encodeAll(m, corpus)
	l, err := m.Loss(seqs, BERT(), rand.New(rand.NewPCG(5, 0xe7a1)))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := m.Evaluate(context.Background(), seqs, BERT(), 5, len(seqs))
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(tensor.Data(l)[0]); math.Abs(got-ev.Loss) > 1e-5 {
		t.Errorf("loss %.6f, evaluate %.6f", got, ev.Loss)
	}
	if math.Abs(ev.Perplexity-math.Exp(ev.Loss)) > 1e-9 || ev.Tokens == 0 {
		t.Errorf("eval %+v", ev)
	}
	// An untrained head is near uniform: perplexity near the vocabulary size.
	if ev.Perplexity < float64(m.Vocab.Size)/3 || ev.Perplexity > 3*float64(m.Vocab.Size) {
		t.Errorf("untrained perplexity %.1f, vocabulary %d", ev.Perplexity, m.Vocab.Size)
	}
}

// train runs n updates of MLM on the corpus with the shared loop.
func train(t *testing.T, m *Model, n int, seed uint64) *trainer.Result {
	t.Helper()
	seqs := encodeAll(m, corpus)
	return runLoop(t, m, len(seqs), n, seed, func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		in := make([][]int, len(batch))
		for i, j := range batch {
			in[i] = seqs[j]
		}
		return m.Loss(in, BERT(), rng)
	})
}

// runLoop trains all of m's parameters for n updates of batches of 5 of
// size items with step.
func runLoop(t *testing.T, m *Model, size, n int, seed uint64, step trainer.StepFunc) *trainer.Result {
	t.Helper()
	var params []trainer.Param
	for _, p := range m.NamedParams() {
		params = append(params, trainer.Param{Name: p.Name, Param: p.Param})
	}
	tr := &trainer.Trainer{
		Params: params, N: size, Step: step,
		Config: trainer.Config{MaxSteps: n, BatchSize: 5, LR: 3e-3, Seed: seed, KeepLast: true},
	}
	res, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestTrainingLearnsAndIsReproducible: pretraining a tiny model on ten
// sentences drives the (fixed-mask) perplexity far down, and the same seed
// gives the same weights bit for bit.
func TestTrainingLearnsAndIsReproducible(t *testing.T) {
	for _, roberta := range []bool{false, true} {
		m := tinyMLM(t, roberta, 0.1)
		seqs := encodeAll(m, corpus)
		before, err := m.Evaluate(context.Background(), seqs, BERT(), 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		train(t, m, 300, 3)
		after, err := m.Evaluate(context.Background(), seqs, BERT(), 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if after.Perplexity > before.Perplexity/3 {
			t.Errorf("roberta=%v: perplexity %.1f -> %.1f", roberta, before.Perplexity, after.Perplexity)
		}
		m2 := tinyMLM(t, roberta, 0.1)
		train(t, m2, 300, 3)
		for i, p := range m.NamedParams() {
			if !reflect.DeepEqual(tensor.Data(p.Param), tensor.Data(m2.NamedParams()[i].Param)) {
				t.Fatalf("roberta=%v: %s differs between two runs with the same seed", roberta, p.Name)
			}
		}
	}
}

// TestSaveLoad: the saved directory is a sentence encoder (pooled.Load
// gives the same vectors) and a masked LM (FromEncoder gives the same
// evaluation), with Hugging Face's names.
func TestSaveLoad(t *testing.T) {
	for _, roberta := range []bool{false, true} {
		m := tinyMLM(t, roberta, 0.1)
		train(t, m, 20, 1)
		dir := t.TempDir()
		if err := m.Save(dir, transformer.PoolMean, map[string]any{"trained_by": "test"}); err != nil {
			t.Fatal(err)
		}
		p, err := pooled.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if p.Pooling != transformer.PoolMean {
			t.Errorf("pooling %q", p.Pooling)
		}
		mine := &pooled.Model{Tokenizer: m.Tokenizer, Encoder: m.Encoder, Pooling: transformer.PoolMean}
		a, err := mine.Encode(context.Background(), corpus)
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Encode(context.Background(), corpus)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("roberta=%v: the loaded encoder encodes differently", roberta)
		}
		back, hadHead, err := FromEncoder(p, dir, 99)
		if err != nil || !hadHead {
			t.Fatalf("roberta=%v: head not restored (%v)", roberta, err)
		}
		seqs := encodeAll(m, corpus)
		e1, _ := m.Evaluate(context.Background(), seqs, BERT(), 2, 0)
		e2, _ := back.Evaluate(context.Background(), seqs, BERT(), 2, 0)
		if e1 != e2 {
			t.Errorf("roberta=%v: evaluation %+v before saving, %+v after", roberta, e1, e2)
		}
		f, err := safetensors.ReadFile(filepath.Join(dir, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		headName := "cls.predictions.transform.dense.weight"
		arch := `"BertForMaskedLM"`
		if roberta {
			headName, arch = "lm_head.dense.weight", `"RobertaForMaskedLM"`
		}
		if _, ok := f.Tensors[headName]; !ok {
			t.Errorf("roberta=%v: no %s in the checkpoint", roberta, headName)
		}
		cfg, _ := os.ReadFile(filepath.Join(dir, "config.json"))
		if !strings.Contains(string(cfg), arch) {
			t.Errorf("config.json lacks %s:\n%s", arch, cfg)
		}
		// Without head tensors, a fresh head.
		if err := os.Remove(filepath.Join(dir, "model.safetensors")); err != nil {
			t.Fatal(err)
		}
		if _, had, err := FromEncoder(p, dir, 99); err != nil || had {
			t.Errorf("no weights file: had %v, %v", had, err)
		}
	}
}
