package text

import (
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	for s, want := range map[string]string{
		"A girl is styling her hair.":                 "A|girl|is|styling|her|hair|.",
		"Don't stop: it's 3.5% of $1,000 (term-end)!": "Don't|stop|:|it's|3.5|%|of|$|1,000|(|term-end|)|!",
		"rock 'n' roll -- \"quoted\" dogs' bowls":     "rock|'|n|'|roll|-|-|\"|quoted|\"|dogs|'|bowls",
		"  ":         "",
		"Zoë’s café": "Zoë’s|café",
	} {
		toks := Tokenize(s)
		var got []string
		for _, tk := range toks {
			if s[tk.Start:tk.End] != tk.Text {
				t.Errorf("%q: token %q has offsets [%d,%d)", s, tk.Text, tk.Start, tk.End)
			}
			got = append(got, tk.Text)
		}
		if strings.Join(got, "|") != want {
			t.Errorf("Tokenize(%q) = %q, want %q", s, strings.Join(got, "|"), want)
		}
	}
	if toks := Tokenize("a ."); !toks[0].Word || toks[1].Word {
		t.Errorf("word flags wrong: %+v", toks)
	}
}

func TestMask(t *testing.T) {
	s := "Do I need a transit visa for a stop in London?"
	toks := Tokenize(s)
	// "transit visa" = tokens 4..6, "London" = 10..11, "stop" = 8..9.
	got, err := Mask(s, toks, [][]Span{{{10, 11}}, {{4, 6}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Do I need a [MASK] [MASK] for a stop in [MASK]?"; got.Masked != want {
		t.Errorf("masked %q, want %q", got.Masked, want)
	}
	if strings.Join(got.Targets, "|") != "London|transit visa" || got.Sentence != s {
		t.Errorf("targets %q, sentence %q", got.Targets, got.Sentence)
	}
	if _, err := Mask(s, toks, [][]Span{{{4, 6}}, {{5, 7}}}); err == nil || !strings.Contains(err.Error(), "overlapping") {
		t.Errorf("overlap: err %v", err)
	}
	if _, err := Mask(s, toks, [][]Span{{{4, 40}}}); err == nil {
		t.Error("out of range span: no error")
	}
	got, err = Mask(s, toks, nil)
	if err != nil || got.Masked != s || len(got.Targets) != 0 {
		t.Errorf("no phrases: %+v %v", got, err)
	}
}
