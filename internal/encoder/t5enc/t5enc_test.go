package t5enc

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/encoder"
	"repro/internal/model/t5"
	"repro/internal/model/t5/t5test"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

func tiny(t *testing.T) (*t5.Model, *t5.Text) {
	t.Helper()
	var corpus []string
	for i := 0; i < 10; i++ {
		corpus = append(corpus, "the cat sat on the mat", "a dog ran in the park", "what can we draw from the above sentence", "question")
	}
	return t5test.New(t, t5test.Spec{Texts: corpus, Vocab: 110, Sentinels: 2, Layers: 2, Seed: [2]uint64{4, 5}})
}

const ts = "[X] Question: what can we draw from the above sentence?"

func TestModes(t *testing.T) {
	m, text := tiny(t)
	sents := []string{"the cat sat on the mat", "a dog", "the park"}
	enc, err := New(m, text.Tok, ModeEncDec, ts, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := enc.Encode(context.Background(), sents)
	if err != nil {
		t.Fatal(err)
	}
	mean, _ := New(m, text.Tok, ModeMean, ts, 0)
	gotMean, err := mean.Encode(context.Background(), sents)
	if err != nil {
		t.Fatal(err)
	}
	D := m.Config.DModel
	for i, s := range sents {
		// One sentence alone, by hand: the template filled, EOS appended,
		// encoder, then the decoder on the start token.
		ids, _ := text.Encode(strings.ReplaceAll(ts, "[X]", s), 0)
		src, _ := transformer.NewBatch([][]int{ids}, 0)
		e, err := m.Encode(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		dec, _ := transformer.NewBatch([][]int{{0}}, 0)
		h, err := m.Decode(dec, e, nil)
		if err != nil {
			t.Fatal(err)
		}
		close(t, "encdec", got[i], tensor.Data(h))
		H := tensor.Data(e.Hidden)
		want := make([]float32, D)
		for r := 0; r < len(ids); r++ {
			for j := 0; j < D; j++ {
				want[j] += H[r*D+j] / float32(len(ids))
			}
		}
		close(t, "mean", gotMean[i], want)
	}
	if enc.Dim() != D || len(got[0]) != D {
		t.Errorf("dim %d", enc.Dim())
	}
}

func close(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for j := range want {
		if math.Abs(float64(got[j]-want[j])) > 1e-5 {
			t.Fatalf("%s: element %d: %g, want %g", what, j, got[j], want[j])
		}
	}
}

func TestSaveOpen(t *testing.T) {
	Register()
	m, text := tiny(t)
	e, _ := New(m, text.Tok, ModeEncDec, ts, 12)
	dir := t.TempDir()
	if err := e.Save(dir, map[string]any{"trained_by": "test"}); err != nil {
		t.Fatal(err)
	}
	back, err := encoder.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := e.Encode(context.Background(), []string{"the cat sat on the mat the cat sat on the mat"})
	b, err := back.Encode(context.Background(), []string{"the cat sat on the mat the cat sat on the mat"})
	if err != nil {
		t.Fatal(err)
	}
	close(t, "reopened", b[0], a[0])
	if _, cut := e.Inputs([]string{"the cat sat on the mat the cat sat on the mat"}); cut != 1 {
		t.Errorf("max length 12 did not cut")
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "encoder.json"))
	var mt map[string]any
	json.Unmarshal(raw, &mt)
	if mt["mode"] != "encdec" || mt["template"] != ts {
		t.Errorf("encoder.json %s", raw)
	}
}

func TestBadInput(t *testing.T) {
	m, text := tiny(t)
	if _, err := New(m, text.Tok, ModeEncDec, "no placeholder", 0); err == nil || !strings.Contains(err.Error(), "has no [X] placeholder") {
		t.Errorf("template without placeholder: %v", err)
	}
	if _, err := New(m, text.Tok, "cls", "", 0); err == nil || !strings.Contains(err.Error(), `mode "cls"`) {
		t.Errorf("bad mode: %v", err)
	}
}
