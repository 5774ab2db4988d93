package text

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/model/checkpoint"
	"repro/internal/model/tokenizer"
	"repro/internal/rows"
	"repro/registry"
)

func runVocab(t *testing.T, p UnigramVocabParams, inDir string) (string, error) {
	t.Helper()
	r := registryForTest(t)
	st, _ := r.Lookup("text.unigram_vocab")
	if err := p.Validate(); err != nil {
		return "", err
	}
	out := t.TempDir()
	env := &registry.Env{
		Params:  &p,
		Inputs:  map[string]registry.Artifact{"input": {Kind: registry.KindSentences, Dir: inDir}},
		Outputs: map[string]string{"tokenizer": out},
		Work:    t.TempDir(),
	}
	return out, st.Call(context.Background(), env)
}

// TestUnigramVocabStage: the artifact opens with checkpoint.LoadTokenizer
// as a T5-framed SentencePiece tokenizer that round-trips the text.
func TestUnigramVocabStage(t *testing.T) {
	sents := stsSentences(t, 1500)
	dir, err := runVocab(t, UnigramVocabParams{VocabSize: 600, Sentinels: 100, CharacterCoverage: 0.9995}, writeSentences(t, sents))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := checkpoint.LoadTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	sp, ok := tok.(*tokenizer.SentencePiece)
	if !ok || sp.Size() != 700 || sp.Special() != (tokenizer.Specials{CLS: -1, SEP: 1, PAD: 0, UNK: 2, MASK: -1}) {
		t.Fatalf("%T size %d specials %+v", tok, tok.Size(), tok.Special())
	}
	exact := 0
	for _, s := range sents[:300] {
		if sp.Decode(sp.Encode(s.Text, 0)) == strings.Join(strings.Fields(s.Text), " ") {
			exact++
		}
	}
	if exact < 295 {
		t.Fatalf("%d of 300 sentences round-trip", exact)
	}
	b, err := os.ReadFile(filepath.Join(dir, FilePieces))
	if err != nil || strings.Count(string(b), "\n") != 600 || !strings.HasPrefix(string(b), "<pad>\t0\n</s>\t0\n<unk>\t0\n") {
		t.Fatalf("pieces.tsv: %v %.60q", err, b)
	}
}

func TestUnigramVocabBadInput(t *testing.T) {
	if _, err := runVocab(t, UnigramVocabParams{VocabSize: 600, CharacterCoverage: 0.9995}, writeSentences(t, []rows.Sentence{{Text: "  "}})); err == nil || !strings.Contains(err.Error(), "no text to train on") {
		t.Fatalf("empty corpus: %v", err)
	}
	for _, c := range []struct {
		p    UnigramVocabParams
		want string
	}{
		{UnigramVocabParams{VocabSize: 5, CharacterCoverage: 0.9995}, "vocab_size"},
		{UnigramVocabParams{VocabSize: 600, CharacterCoverage: 0}, "character_coverage"},
		{UnigramVocabParams{VocabSize: 600, CharacterCoverage: 1, Sentinels: -1}, "sentinels"},
	} {
		if err := c.p.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}
