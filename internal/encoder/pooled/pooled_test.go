package pooled

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"repro/internal/datadir/datadirtest"
	"repro/internal/dataset"
	"repro/internal/encoder"
	"repro/internal/metrics"
	"repro/internal/model/safetensors"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/rows"
	"repro/internal/tensor"
)

// corpus is a small fixed text for vocabulary training.
var corpus = []string{
	"A man is playing a guitar on the stage.",
	"A woman is slicing an onion in the kitchen.",
	"Two dogs are running through a field of grass.",
	"The children are playing football in the park.",
	"A man is playing the piano while a woman sings.",
	"The cat is sleeping on the warm windowsill.",
	"Stock markets fell sharply on Monday morning.",
	"The president spoke to reporters about the economy.",
}

func tinyConfig() transformer.Config {
	return transformer.Config{Hidden: 16, Layers: 3, Heads: 2, Intermediate: 32, MaxPosition: 64,
		TypeVocab: 2, HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12}
}

func tinyModel(t *testing.T, p transformer.Pooling, seed uint64) *Model {
	t.Helper()
	tok, err := TrainVocab(corpus, 120)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(tinyConfig(), tok, p, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func encodeAll(t *testing.T, e encoder.Encoder, ss []string) [][]float32 {
	t.Helper()
	v, err := e.Encode(context.Background(), ss)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != len(ss) {
		t.Fatalf("%d vectors for %d sentences", len(v), len(ss))
	}
	return v
}

func maxAbsDiff(a, b [][]float32) float64 {
	d := 0.0
	for i := range a {
		for j := range a[i] {
			d = math.Max(d, math.Abs(float64(a[i][j]-b[i][j])))
		}
	}
	return d
}

func TestNewAndEncode(t *testing.T) {
	m := tinyModel(t, transformer.PoolCLS, 1)
	if m.Encoder.Pooler == nil {
		t.Fatal("cls pooling without a pooler")
	}
	if m.Encoder.Config.VocabSize != m.Tokenizer.Size() || m.Encoder.Config.PadID != m.Tokenizer.Special().PAD {
		t.Fatalf("config %+v does not follow the tokenizer", m.Encoder.Config)
	}
	if m.Dim() != 16 {
		t.Fatalf("Dim %d", m.Dim())
	}
	m.BatchSize = 3 // several batches, sentences of different lengths
	all := encodeAll(t, m, corpus)
	// Each sentence alone must give its vector from the batched call: the
	// length ordering is undone and padding does not leak into the result.
	for i, s := range corpus {
		one := encodeAll(t, m, []string{s})
		if d := maxAbsDiff(one, all[i:i+1]); d > 1e-5 {
			t.Errorf("sentence %d: alone and batched differ by %g", i, d)
		}
	}
	// Distinct sentences get distinct vectors.
	if reflect.DeepEqual(all[0], all[1]) {
		t.Error("two different sentences encode identically")
	}
	// Encoding is deterministic (no dropout at evaluation).
	if !reflect.DeepEqual(all, encodeAll(t, m, corpus)) {
		t.Error("Encode is not deterministic")
	}
	// The same seed builds the same model; another seed another one.
	if !reflect.DeepEqual(all, encodeAll(t, withBatch(tinyModel(t, transformer.PoolCLS, 1), 3), corpus)) {
		t.Error("same seed, different model")
	}
	if reflect.DeepEqual(all, encodeAll(t, withBatch(tinyModel(t, transformer.PoolCLS, 2), 3), corpus)) {
		t.Error("different seeds, same model")
	}
	if _, err := m.Encode(context.Background(), nil); err != nil {
		t.Errorf("empty input: %v", err)
	}
}

func withBatch(m *Model, b int) *Model { m.BatchSize = b; return m }

func TestPoolings(t *testing.T) {
	m := tinyModel(t, transformer.PoolCLS, 3)
	seen := map[string]transformer.Pooling{}
	for _, p := range transformer.Poolings() {
		v, err := m.EncodeWith(context.Background(), corpus[:2], p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		key := fmt.Sprint(v)
		if q, dup := seen[key]; dup {
			t.Errorf("poolings %s and %s give the same vectors", p, q)
		}
		seen[key] = p
	}
	if _, err := New(tinyConfig(), m.Tokenizer, "max", 1); err == nil || !strings.Contains(err.Error(), `unknown pooling "max"`) {
		t.Errorf("unknown pooling: %v", err)
	}
	if got := EvalPooling(transformer.PoolCLS, true); got != transformer.PoolCLSBeforePooler {
		t.Errorf("mlp_only_train: %s", got)
	}
	if got := EvalPooling(transformer.PoolCLS, false); got != transformer.PoolCLS {
		t.Errorf("no mlp_only_train: %s", got)
	}
	if got := EvalPooling(transformer.PoolMean, true); got != transformer.PoolMean {
		t.Errorf("mean: %s", got)
	}
}

func TestMaxLength(t *testing.T) {
	m := tinyModel(t, transformer.PoolMean, 4)
	long := strings.Repeat("the man is playing ", 40) // far beyond 64 positions
	ids := m.Tokenize([]string{long}, 0)
	if len(ids[0]) != 64 {
		t.Fatalf("untruncated sentence has %d ids, want the 64 positions", len(ids[0]))
	}
	if ids := m.Tokenize([]string{long}, 10); len(ids[0]) != 10 {
		t.Fatalf("max length 10 gives %d ids", len(ids[0]))
	}
	if _, err := m.Encode(context.Background(), []string{long}); err != nil {
		t.Fatalf("a sentence beyond the positions must be truncated, got %v", err)
	}
	// MaxLength caps what Encode reads: the sentence and its first 6
	// pieces then encode alike.
	m.MaxLength = 8
	a := encodeAll(t, m, []string{long})
	b := encodeAll(t, m, []string{"the man is playing the man is"})
	if d := maxAbsDiff(a, b); d > 1e-5 {
		t.Errorf("MaxLength 8 not applied: differ by %g", d)
	}
}

func TestSaveOpen(t *testing.T) {
	Register()
	for _, p := range []transformer.Pooling{transformer.PoolCLS, transformer.PoolCLSBeforePooler, transformer.PoolFirstLastAvg} {
		m := tinyModel(t, transformer.PoolCLS, 5)
		m.Pooling = p
		m.MaxLength = 24
		want := encodeAll(t, m, corpus)
		dir := t.TempDir()
		if err := m.Save(dir, map[string]any{"trained_by": "test"}); err != nil {
			t.Fatal(err)
		}
		var meta map[string]any
		b, err := os.ReadFile(filepath.Join(dir, "encoder.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			t.Fatal(err)
		}
		if meta["type"] != "transformer" || meta["pooling"] != string(p) || meta["max_length"] != 24.0 {
			t.Errorf("encoder.json %v", meta)
		}
		for _, f := range []string{"model.safetensors", "config.json", "vocab.txt", "tokenizer_config.json"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("artifact lacks %s", f)
			}
		}
		enc, err := encoder.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if enc.Dim() != 16 {
			t.Errorf("Dim %d", enc.Dim())
		}
		if got := encodeAll(t, enc, corpus); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: reopened model encodes differently (max diff %g)", p, maxAbsDiff(got, want))
		}
	}
}

// TestFromHF writes a model in Hugging Face's own layout (prefixed tensor
// names, HF config.json keys, vocab.txt) and opens it.
func TestFromHF(t *testing.T) {
	m := tinyModel(t, transformer.PoolCLS, 6)
	want, err := m.EncodeWith(context.Background(), corpus, transformer.PoolCLSBeforePooler)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ts := map[string]safetensors.Tensor{}
	for _, p := range m.Encoder.NamedParams() {
		ts["bert."+p.Name] = safetensors.Tensor{Shape: p.Shape, Data: tensor.Data(p.Param)}
	}
	ts["cls.predictions.bias"] = safetensors.Tensor{Shape: []int{m.Tokenizer.Size()}, Data: make([]float32, m.Tokenizer.Size())}
	if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_act": "gelu",
 "hidden_size": 16, "num_hidden_layers": 3, "num_attention_heads": 2, "intermediate_size": 32,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": %d, "pad_token_id": 0,
 "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}`, m.Tokenizer.Size())
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Tokenizer.(*tokenizer.WordPiece).Save(filepath.Join(dir, "vocab.txt")); err != nil {
		t.Fatal(err)
	}
	hf, err := FromHF(dir, transformer.PoolCLSBeforePooler)
	if err != nil {
		t.Fatal(err)
	}
	if got := encodeAll(t, hf, corpus); !reflect.DeepEqual(got, want) {
		t.Errorf("HF-layout model encodes differently (max diff %g)", maxAbsDiff(got, want))
	}
	// ResetPooler replaces the pooler (SimCSE's new MLP head),
	// reproducibly.
	before := append([]float32(nil), tensor.Data(hf.Encoder.Pooler.Weight)...)
	hf.ResetPooler(7)
	after := append([]float32(nil), tensor.Data(hf.Encoder.Pooler.Weight)...)
	if reflect.DeepEqual(before, after) {
		t.Error("ResetPooler kept the weights")
	}
	hf.ResetPooler(7)
	if !reflect.DeepEqual(after, tensor.Data(hf.Encoder.Pooler.Weight)) {
		t.Error("ResetPooler is not reproducible")
	}
}

func TestLoadErrors(t *testing.T) {
	Register()
	m := tinyModel(t, transformer.PoolCLS, 8)
	good := t.TempDir()
	if err := m.Save(good, nil); err != nil {
		t.Fatal(err)
	}
	copyDir := func() string {
		d := t.TempDir()
		ents, _ := os.ReadDir(good)
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(good, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	cases := []struct {
		name string
		edit func(dir string)
		want string
	}{
		{"missing dir", func(dir string) { os.RemoveAll(dir) }, "no such file"},
		{"bad pooling", func(dir string) {
			os.WriteFile(filepath.Join(dir, "encoder.json"), []byte(`{"type": "transformer", "pooling": "max", "max_length": 0}`), 0o644)
		}, `unknown pooling "max"`},
		{"encoder.json not JSON", func(dir string) {
			os.WriteFile(filepath.Join(dir, "encoder.json"), []byte(`{"type": "transformer", `), 0o644)
		}, "encoder.json"},
		{"truncated weights", func(dir string) {
			p := filepath.Join(dir, "model.safetensors")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, "model.safetensors"},
		{"no weights", func(dir string) { os.Remove(filepath.Join(dir, "model.safetensors")) }, "model.safetensors"},
		{"no tokenizer", func(dir string) { os.Remove(filepath.Join(dir, "vocab.txt")) }, "tokenizer"},
		{"wrong shape", func(dir string) {
			p := filepath.Join(dir, "config.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"intermediate_size": 32`, `"intermediate_size": 33`, 1)), 0o644)
		}, "shape"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir()
			c.edit(dir)
			_, err := encoder.Open(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			t.Log(err)
			if _, err := FromHF(dir, transformer.PoolMean); c.name != "bad pooling" && c.name != "encoder.json not JSON" && err == nil {
				t.Fatalf("FromHF accepted it")
			}
		})
	}
}

func TestInitGloVe(t *testing.T) {
	tok, err := tokenizer.NewWordPiece([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "man", "##s", "dog", "guitar"}, uncased)
	if err != nil {
		t.Fatal(err)
	}
	cfg := tinyConfig()
	m, err := New(cfg, tok, transformer.PoolMean, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := tensor.Data(m.Encoder.Embeddings.Word)
	before := append([]float32(nil), w...)
	v := &dataset.Vectors{Words: []string{"dog", "man", "s", "##s", "[CLS]", "cat"}, Dim: 4,
		Data: []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 8, 8, 8, 8, 7, 7, 7, 7, 6, 6, 6, 6}}
	n, err := m.InitGloVeScaled(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("copied %d vectors, want 2 (man, dog)", n)
	}
	row := func(id int) []float32 { return w[id*16 : (id+1)*16] }
	if got := row(6)[:4]; !reflect.DeepEqual(got, []float32{1, 2, 3, 4}) {
		t.Errorf("dog: %v", got)
	}
	if got := row(4)[:4]; !reflect.DeepEqual(got, []float32{5, 6, 7, 8}) {
		t.Errorf("man: %v", got)
	}
	if !reflect.DeepEqual(row(4)[4:], before[4*16+4:5*16]) {
		t.Error("columns beyond the vector's dimension changed")
	}
	for _, id := range []int{2, 5, 7} { // [CLS], ##s, guitar: untouched
		if !reflect.DeepEqual(row(id), before[id*16:(id+1)*16]) {
			t.Errorf("row %d (%s) changed", id, tok.Token(id))
		}
	}
	big := &dataset.Vectors{Words: []string{"dog"}, Dim: 17, Data: make([]float32, 17)}
	if _, err := m.InitGloVeScaled(big, 1); err == nil || !strings.Contains(err.Error(), "17 dimensions") {
		t.Errorf("too wide vectors: %v", err)
	}
}

// fixedEncoder maps known sentences to fixed vectors.
type fixedEncoder map[string][]float32

func (f fixedEncoder) Dim() int { return 2 }
func (f fixedEncoder) Encode(_ context.Context, ss []string) ([][]float32, error) {
	out := make([][]float32, len(ss))
	for i, s := range ss {
		v, ok := f[s]
		if !ok {
			return nil, fmt.Errorf("unknown sentence %q", s)
		}
		out[i] = v
	}
	return out, nil
}

func TestDevSet(t *testing.T) {
	enc := fixedEncoder{"a b": {1, 0}, "c": {0, 1}, "d": {1, 1}, "e": {1, -1}}
	pairs := []rows.STSPair{
		{Task: "stsb", Subset: "dev", Sentence1: "a  b", Sentence2: "a b", Score: 5}, // whitespace normalised
		{Task: "stsb", Subset: "dev", Sentence1: "a b", Sentence2: "c", Score: 0},
		{Task: "stsb", Subset: "dev", Sentence1: "d", Sentence2: "a b", Score: 3},
		{Task: "stsb", Subset: "dev", Sentence1: "e", Sentence2: "d", Score: 1},
	}
	d, err := NewDevSet(pairs)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 4 || len(d.sentences) != 4 {
		t.Fatalf("%d pairs, %d distinct sentences", d.Len(), len(d.sentences))
	}
	got, err := d.Spearman(context.Background(), enc)
	if err != nil {
		t.Fatal(err)
	}
	// cosines 1, 0, 0.707, 0 against gold 5, 0, 3, 1.
	want := 100 * metrics.Spearman([]float64{1, 0, math.Sqrt2 / 2, 0}, []float64{5, 0, 3, 1})
	if math.Abs(got-want) > 1e-9 || got < 90 {
		t.Errorf("Spearman %g, want %g", got, want)
	}
	collapsed := fixedEncoder{"a b": {1, 0}, "c": {1, 0}, "d": {1, 0}, "e": {1, 0}}
	if got, err := d.Spearman(context.Background(), collapsed); err != nil || got != 0 {
		t.Errorf("collapsed encoder: %g, %v", got, err)
	}
	nan := fixedEncoder{"a b": {float32(math.NaN()), 0}, "c": {1, 0}, "d": {1, 0}, "e": {1, 0}}
	if _, err := d.Spearman(context.Background(), nan); err == nil {
		t.Error("a NaN vector was accepted")
	}
	if _, err := NewDevSet(append(pairs, rows.STSPair{Sentence1: " ", Sentence2: "c", Score: 1})); err == nil || !strings.Contains(err.Error(), "pair 5") {
		t.Errorf("empty sentence: %v", err)
	}
	if _, err := NewDevSet(pairs[:1]); err == nil {
		t.Error("one pair accepted")
	}

	// Two tasks (SynCSE's STS-B dev + SICK-R dev): the mean of the per-task
	// correlations, not the correlation of the pooled pairs.
	sick := []rows.STSPair{
		{Task: "sickr", Subset: "dev", Sentence1: "a b", Sentence2: "d", Score: 1},
		{Task: "sickr", Subset: "dev", Sentence1: "c", Sentence2: "d", Score: 4},
		{Task: "sickr", Subset: "dev", Sentence1: "e", Sentence2: "a b", Score: 2},
	}
	both, err := NewDevSet(append(append([]rows.STSPair{}, pairs...), sick...))
	if err != nil {
		t.Fatal(err)
	}
	got2, err := both.Spearman(context.Background(), enc)
	if err != nil {
		t.Fatal(err)
	}
	s1 := 100 * metrics.Spearman([]float64{1, 0, math.Sqrt2 / 2, 0}, []float64{5, 0, 3, 1})
	s2 := 100 * metrics.Spearman([]float64{math.Sqrt2 / 2, math.Sqrt2 / 2, math.Sqrt2 / 2}, []float64{1, 4, 2})
	if math.IsNaN(s2) {
		s2 = 0
	}
	pooled := 100 * metrics.Spearman([]float64{1, 0, math.Sqrt2 / 2, 0, math.Sqrt2 / 2, math.Sqrt2 / 2, math.Sqrt2 / 2}, []float64{5, 0, 3, 1, 1, 4, 2})
	if math.Abs(got2-(s1+s2)/2) > 1e-9 || math.Abs(got2-pooled) < 1e-6 {
		t.Errorf("two tasks: %g, want the mean %g (pooled would be %g)", got2, (s1+s2)/2, pooled)
	}
	if _, err := NewDevSet(append(append([]rows.STSPair{}, pairs...), sick[0])); err == nil {
		t.Error("a task with one pair accepted")
	}
}

// TestBERTVocabGloVe builds the mini profile's model from the real
// bert-base-uncased vocabulary and GloVe vectors.
func TestBERTVocabGloVe(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 33 MB of GloVe vectors")
	}
	c := &dataset.Catalogue{Dirs: []string{datadirtest.Dir(t)}}
	path, err := c.Path("bert-base-uncased", "vocab")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := LoadVocab(path)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Size() != 30522 {
		t.Fatalf("vocabulary of %d", tok.Size())
	}
	cfg := tinyConfig()
	cfg.Hidden, cfg.Heads = 128, 4
	m, err := New(cfg, tok, transformer.PoolCLS, 1)
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.GloVe("glove.6B.100d")
	if err != nil {
		t.Fatal(err)
	}
	n, err := m.InitGloVeScaled(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Most whole words of BERT's vocabulary are among GloVe's top 100k.
	if n < 15000 || n > 30522 {
		t.Errorf("%d of 30,522 entries initialised from GloVe", n)
	}
	id, _ := tok.ID("guitar")
	gi := -1
	for i, w := range v.Words {
		if w == "guitar" {
			gi = i
		}
	}
	if gi < 0 || !reflect.DeepEqual(tensor.Data(m.Encoder.Embeddings.Word)[id*128:id*128+100], v.Vector(gi)) {
		t.Error("guitar's embedding is not its GloVe vector")
	}
	t.Logf("%d vocabulary entries initialised from GloVe", n)
}

// TestInitGloVeScaledAndBPE: vectors are scaled; byte-level BPE pieces
// that are a space and a whole word take the lower-cased word's vector.
func TestInitGloVeScaledAndBPE(t *testing.T) {
	v := &dataset.Vectors{Words: []string{"dog", "man"}, Dim: 4, Data: []float32{1, 2, 3, 4, 5, 6, 7, 8}}
	tok, err := tokenizer.NewWordPiece([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "man", "dog"}, uncased)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(tinyConfig(), tok, transformer.PoolMean, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.InitGloVeScaled(v, 0.5); err != nil {
		t.Fatal(err)
	}
	w := tensor.Data(m.Encoder.Embeddings.Word)
	if got := w[5*16 : 5*16+4]; !reflect.DeepEqual(got, []float32{0.5, 1, 1.5, 2}) {
		t.Errorf("dog scaled by 0.5: %v", got)
	}
	if v.Data[0] != 1 {
		t.Error("the word vectors themselves were changed")
	}
	bpe, err := TrainBPEVocab([]string{"The dog and the man", "a dog, a Dog"}, 300)
	if err != nil {
		t.Fatal(err)
	}
	cfg := tinyConfig()
	cfg.PositionOffset = 2
	cfg.MaxPosition += 2
	mb, err := New(cfg, bpe, transformer.PoolMean, 1)
	if err != nil {
		t.Fatal(err)
	}
	n, err := mb.InitGloVeScaled(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	wb := tensor.Data(mb.Encoder.Embeddings.Word)
	found := 0
	for id := 0; id < bpe.Size(); id++ {
		switch bpe.Token(id) {
		case "\u0120dog", "\u0120Dog":
			if got := wb[id*16 : id*16+4]; !reflect.DeepEqual(got, []float32{1, 2, 3, 4}) {
				t.Errorf("%q: %v", bpe.Token(id), got)
			}
			found++
		}
	}
	if found == 0 || n < found {
		t.Errorf("%d Ġdog pieces, %d vectors copied", found, n)
	}
}

// Len is the number of pairs.
func (d *DevSet) Len() int { return len(d.gold) }
