package tokenizer

import (
	"reflect"
	"strings"
	"testing"
)

// TestTrainBPEToy checks the merges on a corpus worked out by hand: " low"
// pieces carry their leading space (GPT-2's pre-tokenization), bytes are
// GPT-2's printable runes ("Ġ" for the space), in rune order after the
// special token ("!" first), a special token in the text kept whole.
func TestTrainBPEToy(t *testing.T) {
	t.Parallel()
	var corpus []string
	for w, n := range map[string]int{"low": 5, "lower": 2, "newest": 6, "widest": 3} {
		for i := 0; i < n; i++ {
			corpus = append(corpus, "a "+w)
		}
	}
	tok, err := TrainBPE(corpus, BPETrainOptions{VocabSize: 257 + 6, Special: GPT2Specials})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Size() != 263 || tok.Token(0) != "<|endoftext|>" || tok.Token(1) != "!" {
		t.Fatalf("size %d, first tokens %q %q", tok.Size(), tok.Token(0), tok.Token(1))
	}
	// Pair counts: "es" 9, "st" 9 ("es" < "st": first), then "est" (9);
	// the sevens "Ġl", "lo", "ow": "lo" first (Ġ is U+0120, after ASCII),
	// then "low", then "Ġlow"; then the sixes of " newest" -- "ew", "ne",
	// "west", "Ġn" -- in byte order: "ew".
	want := [][2]string{{"e", "s"}, {"es", "t"}, {"l", "o"}, {"lo", "w"}, {"Ġ", "low"}, {"e", "w"}}
	if got := tok.merges; !reflect.DeepEqual(got, want) {
		t.Fatalf("merges %q, want %q", got, want)
	}
	if ids := tok.IDs(" lowest<|endoftext|>"); len(ids) != 3 || tok.Token(ids[0]) != "Ġlow" || tok.Token(ids[1]) != "est" || ids[2] != 0 {
		t.Errorf("encode %v (%q %q)", ids, tok.Token(ids[0]), tok.Token(ids[1]))
	}
	// Only specials in a text: nothing to learn from.
	if _, err := TrainBPE([]string{"<|endoftext|>"}, BPETrainOptions{VocabSize: 300, Special: GPT2Specials}); err == nil || !strings.Contains(err.Error(), "no text") {
		t.Errorf("a corpus of special tokens: %v", err)
	}
}

// TestTrainBPERoundTrip trains on real sentences and checks that every
// text decodes back to itself and that the vocabulary compresses.
func TestTrainBPERoundTrip(t *testing.T) {
	t.Parallel()
	sents := readSTSB(t)
	tok, err := TrainBPE(sents[:4000], BPETrainOptions{VocabSize: 2000, Special: GPT2Specials})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Size() != 2000 {
		t.Fatalf("vocabulary of %d", tok.Size())
	}
	var chars, ids int
	for _, s := range sents[4000:5000] {
		x := tok.IDs(s)
		if got := tok.Decode(x); got != s {
			t.Fatalf("round trip %q -> %q", s, got)
		}
		chars += len(s)
		ids += len(x)
	}
	if float64(chars)/float64(ids) < 2 {
		t.Errorf("%.2f bytes per token on held-out sentences: the merges do not compress", float64(chars)/float64(ids))
	}
	again, _ := TrainBPE(sents[:4000], BPETrainOptions{VocabSize: 2000, Special: GPT2Specials})
	if !reflect.DeepEqual(again.merges, tok.merges) {
		t.Error("training is not deterministic")
	}
}
