package llm

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces a secret, or a fragment of it, in server text.
const Redacted = "[redacted]"

// Redactor is implemented by a provider that holds a secret (an API key):
// a Client passes every server text it logs, returns or stores through
// Redact, besides the provider's own scrubbing.
type Redactor interface {
	Redact(text string) string
}

// minFragment is the shortest run of a secret's characters redacted
// wherever it appears: shorter runs ("sk-", four digits) are common text,
// and are caught only beside a mask (see maskedToken).
const minFragment = 8

// Redact returns text with secret removed: the secret itself, any run of
// minFragment or more of its characters, and any token in which a server
// shows the secret masked -- a run of mask characters with the secret's
// beginning before it or its end after it, as "sk-abc***...3456" or
// "sk-...***3456" -- each replaced by Redacted. Servers echo keys in error
// messages (a 401's "Incorrect API key provided: ..."); a key must reach
// neither a console, a log, nor the cache.
func Redact(text, secret string) string {
	if secret == "" || text == "" {
		return text
	}
	cover := make([]bool, len(text))
	n := minFragment
	if len(secret) < n {
		n = len(secret)
	}
	frags := make(map[string]struct{}, len(secret))
	for i := 0; i+n <= len(secret); i++ {
		frags[secret[i:i+n]] = struct{}{}
	}
	for i := 0; i+n <= len(text); i++ {
		if _, ok := frags[text[i:i+n]]; ok {
			for j := i; j < i+n; j++ {
				cover[j] = true
			}
		}
	}
	// Tokens that show the secret masked.
	for start := 0; start < len(text); {
		r, w := utf8.DecodeRuneInString(text[start:])
		if tokenBreak(r) {
			start += w
			continue
		}
		end := start
		for end < len(text) {
			r, w := utf8.DecodeRuneInString(text[end:])
			if tokenBreak(r) {
				break
			}
			end += w
		}
		if maskedToken(text[start:end], secret) {
			for j := start; j < end; j++ {
				cover[j] = true
			}
		}
		start = end
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		if !cover[i] {
			b.WriteByte(text[i])
			i++
			continue
		}
		b.WriteString(Redacted)
		for i < len(text) && cover[i] {
			i++
		}
	}
	return b.String()
}

// tokenBreak separates tokens: space, quotes, brackets and the like, but
// not the characters of keys ("-", "_") nor of masks ("*", ".", "…", "•").
func tokenBreak(r rune) bool {
	if unicode.IsSpace(r) {
		return true
	}
	return strings.ContainsRune("\"'`,;()[]{}<>=", r)
}

func isMask(r rune) bool { return r == '*' || r == '.' || r == '…' || r == '•' || r == '×' }

// maskedToken reports whether tok shows secret masked: it holds at least
// three mask characters (or one "…"/"•"), and what precedes the first is a
// beginning of the secret of three or more characters, or what follows
// the last (trailing punctuation aside) an end of it of two or more.
func maskedToken(tok, secret string) bool {
	first, masks := -1, 0
	for i, r := range tok {
		if isMask(r) {
			if first < 0 {
				first = i
			}
			masks++
			if r != '*' && r != '.' {
				masks += 2
			}
		}
	}
	if first < 0 || masks < 3 {
		return false
	}
	if lead := tok[:first]; len(lead) >= 3 && strings.HasPrefix(secret, lead) {
		return true
	}
	// The end: what follows the last mask, once the token's own trailing
	// punctuation (a sentence's full stop) is set aside.
	core := strings.TrimRightFunc(tok, func(r rune) bool { return isMask(r) || (unicode.IsPunct(r) && r != '-' && r != '_') })
	i := strings.LastIndexFunc(core, isMask)
	if i < 0 {
		return false
	}
	_, w := utf8.DecodeRuneInString(core[i:])
	trail := core[i+w:]
	return len(trail) >= 2 && strings.HasSuffix(secret, trail)
}
