// Package t5test builds tiny random T5 models for tests in other packages:
// a WordPiece vocabulary with sentinels learned on a few texts, a model of
// a given width and depth from a seeded generator, saved where a stage or
// loader can open it. One builder, so that every package's test model has
// the same, valid special-token wiring (pad = decoder start, [SEP] = eos).
package t5test

import (
	"math/rand/v2"
	"testing"

	"repro/internal/model/t5"
)

// Spec says what tiny model to build. Zero fields take the defaults in
// comments.
type Spec struct {
	Texts     []string // the vocabulary's training texts (required)
	Vocab     int      // vocabulary size to train (120)
	Sentinels int      // sentinel tokens (2)
	Width     int      // d_model (16; 2 heads of width / 2)
	FF        int      // d_ff (32)
	Layers    int      // encoder and decoder blocks (1)
	Seed      [2]uint64
}

// New builds the model and its text handling.
func New(t testing.TB, s Spec) (*t5.Model, *t5.Text) {
	t.Helper()
	if s.Vocab == 0 {
		s.Vocab = 120
	}
	if s.Sentinels == 0 {
		s.Sentinels = 2
	}
	if s.Width == 0 {
		s.Width = 16
	}
	if s.FF == 0 {
		s.FF = 32
	}
	if s.Layers == 0 {
		s.Layers = 1
	}
	tok, err := t5.TrainVocab(s.Texts, s.Vocab, s.Sentinels)
	if err != nil {
		t.Fatal(err)
	}
	c := t5.DefaultConfig()
	sp := tok.Special()
	c.VocabSize, c.DModel, c.NumHeads, c.DKV, c.DFF, c.NumLayers = tok.Size(), s.Width, 2, s.Width/2, s.FF, s.Layers
	c.PadTokenID, c.DecoderStartTokenID, c.EOSTokenID = sp.PAD, sp.PAD, sp.SEP
	m, err := t5.New(c, rand.New(rand.NewPCG(s.Seed[0], s.Seed[1])))
	if err != nil {
		t.Fatal(err)
	}
	return m, t5.NewText(tok, c)
}

// Dir builds the model and saves it (Hugging Face layout with its
// tokenizer) in a fresh temporary directory.
func Dir(t testing.TB, s Spec) (string, *t5.Model, *t5.Text) {
	t.Helper()
	m, tx := New(t, s)
	dir := t.TempDir()
	if err := t5.Save(dir, m, tx.Tok, nil); err != nil {
		t.Fatal(err)
	}
	return dir, m, tx
}
