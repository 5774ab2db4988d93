package words

import (
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	t.Parallel()
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
