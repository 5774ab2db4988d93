// Package prompt holds the prompt templates of text-to-text models: text
// with placeholders that input sentences replace -- "[X]" for a template of
// one sentence, "[X1]", "[X2]", ... for several (GenSE's Table 1:
// `Write two sentences that are entailment. Sentence 1: "[X1]" Sentence 2:`).
// One Template value is applied the same way wherever it is used (building
// training instances, prompting generation, embedding sentences), so the
// model always sees the text it was trained on.
package prompt

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// X is the placeholder of a one-sentence template; "[X1]" is accepted for
// it too.
const X = "[X]"

var slot = regexp.MustCompile(`\[X([0-9]*)\]`)

// Template is a prompt with placeholders; Slots is how many sentences fill
// it.
type Template struct {
	Text  string
	Slots int
}

// Parse checks that text has placeholders for exactly slots sentences:
// with one slot, "[X]" (or "[X1]"); with n > 1, each of "[X1]" .. "[Xn]"
// and no other. A placeholder may repeat.
func Parse(text string, slots int) (Template, error) {
	return parse(text, slots, true)
}

// ParseOptional is Parse for a template that may leave sentences out (a
// target such as "[X2]", or the constant "true"): only placeholders beyond
// the slots are an error.
func ParseOptional(text string, slots int) (Template, error) {
	return parse(text, slots, false)
}

func parse(text string, slots int, all bool) (Template, error) {
	if slots < 1 {
		return Template{}, fmt.Errorf("template %q: %d slots (want at least 1)", text, slots)
	}
	seen := map[int]bool{}
	for _, m := range slot.FindAllStringSubmatch(text, -1) {
		n := 1
		if m[1] != "" {
			n, _ = strconv.Atoi(m[1])
		} else if slots > 1 {
			return Template{}, fmt.Errorf("template %q: [X] is ambiguous with %d sentences (use [X1] .. [X%d])", text, slots, slots)
		}
		if n < 1 || n > slots {
			return Template{}, fmt.Errorf("template %q: placeholder %s, but only [X1] .. [X%d] are filled", text, m[0], slots)
		}
		seen[n] = true
	}
	for n := 1; n <= slots && all; n++ {
		if !seen[n] {
			name := "[X" + strconv.Itoa(n) + "]"
			if slots == 1 {
				name = X
			}
			return Template{}, fmt.Errorf("template %q has no %s placeholder", text, name)
		}
	}
	return Template{Text: text, Slots: slots}, nil
}

// MustParse is Parse for templates fixed in code.
func MustParse(text string, slots int) Template {
	t, err := Parse(text, slots)
	if err != nil {
		panic(err)
	}
	return t
}

// Fill replaces each placeholder by its sentence: [X] and [X1] by xs[0],
// [Xn] by xs[n-1]. It panics when len(xs) != t.Slots (a caller's bug).
func (t Template) Fill(xs ...string) string {
	if len(xs) != t.Slots {
		panic(fmt.Sprintf("prompt: template of %d slots filled with %d sentences", t.Slots, len(xs)))
	}
	return slot.ReplaceAllStringFunc(t.Text, func(m string) string {
		n := 1
		if d := strings.TrimSuffix(strings.TrimPrefix(m, "[X"), "]"); d != "" {
			n, _ = strconv.Atoi(d)
		}
		return xs[n-1]
	})
}

// Constant reports whether the template has no placeholder at all.
func (t Template) Constant() bool { return !slot.MatchString(t.Text) }
