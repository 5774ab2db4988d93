package prompt

import (
	"strings"
	"testing"
)

func TestFill(t *testing.T) {
	t.Parallel()
	te := MustParse(`Write two sentences that are entailment. Sentence 1: "[X1]" Sentence 2:`, 1)
	if got := te.Fill("A man sleeps."); got != `Write two sentences that are entailment. Sentence 1: "A man sleeps." Sentence 2:` {
		t.Errorf("got %q", got)
	}
	td := MustParse(`if "[X1]", does this mean that "[X2]"? true or false`, 2)
	if got := td.Fill("a [X2] b", "c"); got != `if "a [X2] b", does this mean that "c"? true or false` {
		t.Errorf("a sentence's own [X2] must not be replaced: %q", got)
	}
	ts := MustParse("[X] Question: what can we draw from the above sentence?", 1)
	if got := ts.Fill("S."); got != "S. Question: what can we draw from the above sentence?" {
		t.Errorf("got %q", got)
	}
	tgt, err := ParseOptional("[X2]", 2)
	if err != nil || tgt.Fill("a", "b") != "b" {
		t.Errorf("optional target: %v %q", err, tgt.Fill("a", "b"))
	}
	if c, err := ParseOptional("true", 2); err != nil || c.Fill("a", "b") != "true" {
		t.Errorf("constant target: %v", err)
	}
	if _, err := ParseOptional("[X3]", 2); err == nil {
		t.Error("[X3] of two sentences accepted")
	}
	rep := MustParse("[X] and [X]", 1)
	if got := rep.Fill("a"); got != "a and a" {
		t.Errorf("got %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text  string
		slots int
		want  string
	}{
		{"no placeholder here", 1, `has no [X] placeholder`},
		{"only [X1]", 2, `has no [X2] placeholder`},
		{"[X] and [X2]", 2, `[X] is ambiguous`},
		{"[X1] [X3]", 2, `placeholder [X3], but only [X1] .. [X2]`},
		{"[X]", 0, "0 slots"},
	} {
		if _, err := Parse(tc.text, tc.slots); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q, %d) = %v, want %q", tc.text, tc.slots, err, tc.want)
		}
	}
}
