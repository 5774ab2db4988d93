package syncse

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var placeholderRE = regexp.MustCompile(`\{([a-z]+[0-9]*)\}`)

// Placeholders lists the distinct placeholders of a prompt ("genre",
// "topic1", ...), sorted.
func Placeholders(prompt string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(prompt, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// Render fills a prompt's placeholders. A placeholder without a value is an
// error naming it.
func Render(prompt string, vals map[string]string) (string, error) {
	var missing []string
	out := placeholderRE.ReplaceAllStringFunc(prompt, func(m string) string {
		name := m[1 : len(m)-1]
		v, ok := vals[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("prompt placeholder {%s} has no value here", missing[0])
	}
	return out, nil
}

// Words counts whitespace-separated words, as SimCSE's 32-word truncation
// (and the paper's filter) counts them.
func Words(s string) int { return len(strings.Fields(s)) }

// DedupeKey is what two sentences must share to count as duplicates: the
// same words, ignoring case and spacing.
func DedupeKey(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

var itemRE = regexp.MustCompile(`^\s*(?:\(?(\d{1,3})[.):]|[-*•])\s+(.*)$`)

// ParseList returns the items of an answer that is a numbered or bulleted
// list ("1. ...", "2) ...", "- ..."), in order, quotes and surrounding
// space removed. Lines that are not items (a preamble such as "Here are 20
// sentences:", a closing remark) are ignored; an answer without any item
// gives none.
func ParseList(answer string) []string {
	var out []string
	for _, line := range strings.Split(answer, "\n") {
		m := itemRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if s := clean(m[2]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ParseSentence reads a one-sentence answer (a positive or a hard negative):
// its first non-empty line that is not a preamble ending in a colon
// ("Here is a paraphrase:"), without a list marker or wrapping quotes. ok
// is false when nothing is left.
func ParseSentence(answer string) (string, bool) {
	for _, line := range strings.Split(answer, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasSuffix(line, ":") {
			continue
		}
		if m := itemRE.FindStringSubmatch(line); m != nil {
			line = m[2]
		}
		s := clean(line)
		return s, s != ""
	}
	return "", false
}

// clean trims space and one pair of wrapping quotes, and collapses runs of
// whitespace.
func clean(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for _, q := range [][2]string{{`"`, `"`}, {"“", "”"}, {"'", "'"}} {
		if len(s) >= len(q[0])+len(q[1]) && strings.HasPrefix(s, q[0]) && strings.HasSuffix(s, q[1]) {
			inner := s[len(q[0]) : len(s)-len(q[1])]
			if !strings.Contains(inner, q[0]) {
				s = strings.TrimSpace(inner)
			}
			break
		}
	}
	return s
}

// FormatList writes sentences as the numbered list a one-shot example
// answer shows the model ("1. ...\n2. ...").
func FormatList(items []string) string {
	var b strings.Builder
	for i, s := range items {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString(". ")
		b.WriteString(s)
	}
	return b.String()
}
