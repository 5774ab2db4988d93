package mask

import (
	"strings"
	"testing"

	"repro/internal/text/words"
)

func TestMask(t *testing.T) {
	t.Parallel()
	s := "Do I need a transit visa for a stop in London?"
	toks := words.Tokenize(s)
	// "transit visa" = tokens 4..6, "London" = 10..11, "stop" = 8..9.
	got, err := Mask(s, toks, [][]words.Span{{{From: 10, To: 11}}, {{From: 4, To: 6}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Do I need a [MASK] [MASK] for a stop in [MASK]?"; got.Masked != want {
		t.Errorf("masked %q, want %q", got.Masked, want)
	}
	if strings.Join(got.Targets, "|") != "London|transit visa" || got.Sentence != s {
		t.Errorf("targets %q, sentence %q", got.Targets, got.Sentence)
	}
	if _, err := Mask(s, toks, [][]words.Span{{{From: 4, To: 6}}, {{From: 5, To: 7}}}); err == nil || !strings.Contains(err.Error(), "overlapping") {
		t.Errorf("overlap: err %v", err)
	}
	if _, err := Mask(s, toks, [][]words.Span{{{From: 4, To: 40}}}); err == nil {
		t.Error("out of range span: no error")
	}
	got, err = Mask(s, toks, nil)
	if err != nil || got.Masked != s || len(got.Targets) != 0 {
		t.Errorf("no phrases: %+v %v", got, err)
	}
}
