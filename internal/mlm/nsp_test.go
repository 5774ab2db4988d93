package mlm

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/encoder/pooled"
	"repro/internal/model/safetensors"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

func TestPair(t *testing.T) {
	a := []int{1, 10, 11, 12, 13, 14, 2} // [CLS] 5 tokens [SEP]
	b := []int{1, 20, 21, 2}             // [CLS] 2 tokens [SEP]
	ids, types, err := Pair(a, b, 64)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 10, 11, 12, 13, 14, 2, 20, 21, 2}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}
	if want := []int{0, 0, 0, 0, 0, 0, 0, 1, 1, 1}; !reflect.DeepEqual(types, want) {
		t.Errorf("types %v, want %v", types, want)
	}
	// Longest first: a loses 3 (5 -> 2), then they alternate from the
	// longer; 8 ids = 3 special + 3 + 2.
	ids, types, err = Pair(a, b, 8)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 10, 11, 12, 2, 20, 21, 2}; !reflect.DeepEqual(ids, want) {
		t.Errorf("truncated ids %v, want %v", ids, want)
	}
	if want := []int{0, 0, 0, 0, 0, 1, 1, 1}; !reflect.DeepEqual(types, want) {
		t.Errorf("truncated types %v, want %v", types, want)
	}
	if _, _, err := Pair(a, b, 4); err == nil || !strings.Contains(err.Error(), "no room") {
		t.Errorf("max length 4: %v", err)
	}
	if _, _, err := Pair([]int{1}, b, 64); err == nil {
		t.Error("an unframed sentence was paired")
	}
}

// TestDrawPairs: an IsNext pair's B is the successor, a NotNext pair's B
// is neither the successor nor A itself, the last sentence is never
// IsNext, and about half the pairs are IsNext.
func TestDrawPairs(t *testing.T) {
	seqs := make([][]int, 50)
	for i := range seqs {
		seqs[i] = []int{1, 100 + i, 2} // each sentence's token names it
	}
	rng := rand.New(rand.NewPCG(4, 4))
	next, all := 0, 0
	for range 100 {
		batch := []int{0, 7, 48, 49}
		ids, types, labels, err := DrawPairs(seqs, batch, 16, rng)
		if err != nil {
			t.Fatal(err)
		}
		for k, i := range batch {
			a, b := ids[k][1]-100, ids[k][3]-100
			if a != i || !reflect.DeepEqual(types[k], []int{0, 0, 0, 1, 1}) {
				t.Fatalf("pair %v (types %v) for sentence %d", ids[k], types[k], i)
			}
			switch labels[k] {
			case IsNext:
				if b != i+1 {
					t.Fatalf("IsNext pair of %d with %d", i, b)
				}
				next++
			case NotNext:
				if b == i+1 || b == i {
					t.Fatalf("NotNext pair of %d with %d", i, b)
				}
			}
			if i == 49 && labels[k] != NotNext {
				t.Fatal("the last sentence was paired as IsNext")
			}
			all++
		}
	}
	// 3 of 4 batch positions can be IsNext: 300 draws at 1/2, sd ~8.7.
	if next < 120 || next > 180 {
		t.Errorf("%d IsNext pairs of 300 possible", next)
	}
	if _, _, _, err := DrawPairs(seqs[:2], []int{0}, 16, rng); err == nil {
		t.Error("two sentences were accepted")
	}
}

// trainNSP runs n updates of masked-LM + next-sentence prediction on the
// corpus sentences in order.
func trainNSP(t *testing.T, m *Model, n int, seed uint64) {
	t.Helper()
	seqs := encodeAll(m, corpus)
	runLoop(t, m, len(seqs), n, seed, func(_ context.Context, batch []int, rng *rand.Rand) (mat.Tensor, error) {
		ids, types, labels, err := DrawPairs(seqs, batch, 40, rng)
		if err != nil {
			return nil, err
		}
		l, _, err := m.PairLoss(ids, types, labels, BERT(), rng)
		return l, err
	})
}

// nspAccuracy draws pairs of every sentence with a fixed generator and
// returns the share the classifier gets right (no dropout: the model's
// dropout is 0 in these tests' uses).
func nspAccuracy(t *testing.T, m *Model, draws int) float64 {
	t.Helper()
	seqs := encodeAll(m, corpus)
	rng := rand.New(rand.NewPCG(11, 11))
	all := make([]int, len(seqs))
	for i := range all {
		all[i] = i
	}
	right, n := 0, 0
	for range draws {
		ids, types, labels, err := DrawPairs(seqs, all, 40, rng)
		if err != nil {
			t.Fatal(err)
		}
		_, r, err := m.PairLoss(ids, types, labels, Masking{Prob: 0.01, MaskFrac: 0, RandomFrac: 0}, rng)
		if err != nil {
			t.Fatal(err)
		}
		right += r
		n += len(labels)
	}
	return float64(right) / float64(n)
}

// TestNSPLearnsSavesAndLoads: on ten sentences in order the classifier
// learns which sentence follows which (from chance to near certain); the
// saved checkpoint is a BertForPreTraining with a pooler and the
// classifier under Hugging Face's names; FromEncoder restores both, and
// the same seed gives the same weights.
func TestNSPLearnsSavesAndLoads(t *testing.T) {
	m := tinyMLM(t, false, 0)
	if err := m.WithNSP(5); err != nil {
		t.Fatal(err)
	}
	if m.Encoder.Pooler == nil || !m.Encoder.Config.Pooler {
		t.Fatal("WithNSP left the encoder without a pooler")
	}
	before := nspAccuracy(t, m, 20)
	trainNSP(t, m, nspSteps, 3)
	after := nspAccuracy(t, m, 20)
	if before > 0.7 || after < 0.9 {
		t.Errorf("next-sentence accuracy %.2f before training, %.2f after", before, after)
	}
	m2 := tinyMLM(t, false, 0)
	if err := m2.WithNSP(5); err != nil {
		t.Fatal(err)
	}
	trainNSP(t, m2, nspSteps, 3)
	for i, p := range m.NamedParams() {
		if !reflect.DeepEqual(tensor.Data(p.Param), tensor.Data(m2.NamedParams()[i].Param)) {
			t.Fatalf("%s differs between two runs with the same seed", p.Name)
		}
	}

	dir := t.TempDir()
	if err := m.Save(dir, transformer.PoolCLS, nil); err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	if !strings.Contains(string(cfg), `"BertForPreTraining"`) {
		t.Errorf("config.json lacks BertForPreTraining:\n%s", cfg)
	}
	f, err := safetensors.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cls.seq_relationship.weight", "cls.seq_relationship.bias", "pooler.dense.weight", "cls.predictions.bias"} {
		if _, ok := f.Tensors[name]; !ok {
			t.Errorf("no %s in the checkpoint", name)
		}
	}
	p, err := pooled.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	back, hadHead, err := FromEncoder(p, dir, 99)
	if err != nil || !hadHead || back.NSP == nil {
		t.Fatalf("FromEncoder: head %v, classifier %v, %v", hadHead, back != nil && back.NSP != nil, err)
	}
	if !reflect.DeepEqual(tensor.Data(back.NSP.Weight), tensor.Data(m.NSP.Weight)) ||
		!reflect.DeepEqual(tensor.Data(back.Encoder.Pooler.Weight), tensor.Data(m.Encoder.Pooler.Weight)) {
		t.Error("the classifier or the pooler came back different")
	}
	if a, b := nspAccuracy(t, m, 5), nspAccuracy(t, back, 5); a != b {
		t.Errorf("accuracy %.3f before saving, %.3f after", a, b)
	}
}

func TestNSPNeedsTwoSegments(t *testing.T) {
	m := tinyMLM(t, true, 0) // RoBERTa's shape: type_vocab_size 1
	if err := m.WithNSP(1); err == nil || !strings.Contains(err.Error(), "type_vocab_size 1") {
		t.Errorf("WithNSP on RoBERTa's shape: %v", err)
	}
	b := tinyMLM(t, false, 0)
	if _, _, err := b.PairLoss([][]int{{1, 5, 2, 6, 2}}, [][]int{{0, 0, 0, 1, 1}}, []int{IsNext}, BERT(), rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("PairLoss without a classifier")
	}
}

// nspSteps: the tiny model needs ~1,000 updates to tell the ten pairs
// apart (at 800 it is still near chance, at 1,500 above 90%).
const nspSteps = 1500
