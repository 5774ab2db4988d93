package tokenizer

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"
)

// spNormalizer is sentencepiece's Normalizer: longest-match rewriting with
// the precompiled charsmap (for nmt_nfkc: NFKC plus sentencepiece's own
// rules, compiled into a Darts-clone double-array trie over UTF-8 bytes),
// user-defined symbols passed through untouched, whitespace handling, and
// the dummy prefix. It is a port of normalizer.cc's Normalize without the
// alignment bookkeeping, so that the same bytes come out.
type spNormalizer struct {
	spec NormalizerSpec
	// trie is the double array; norm the replacement strings it points
	// into (NUL-terminated).
	trie    []uint32
	norm    []byte
	normStr string // norm as a string, sliced without copying
	// user matches user-defined symbols, which are never normalised.
	user *pieceTrie
	// suffix: whitespace marks the end of a word (treat_whitespace_as_suffix).
	suffix bool
}

const spaceSymbol = "\u2581"

func newSPNormalizer(spec NormalizerSpec, userDefined []string, suffix bool) (*spNormalizer, error) {
	n := &spNormalizer{spec: spec, suffix: suffix}
	if len(userDefined) > 0 {
		n.user = newPieceTrie()
		for i, s := range userDefined {
			n.user.insert(s, int32(i))
		}
		n.user.freeze()
	}
	if b := spec.PrecompiledCharsmap; len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("precompiled charsmap: %d bytes, too short", len(b))
		}
		size := int(binary.LittleEndian.Uint32(b))
		if size%4 != 0 || 4+size > len(b) {
			return nil, fmt.Errorf("precompiled charsmap: trie size %d does not fit in %d bytes", size, len(b))
		}
		n.trie = make([]uint32, size/4)
		for i := range n.trie {
			n.trie[i] = binary.LittleEndian.Uint32(b[4+4*i:])
		}
		n.norm = b[4+size:]
		n.normStr = string(n.norm)
		if len(n.trie) == 0 {
			return nil, fmt.Errorf("precompiled charsmap: empty trie")
		}
	}
	return n, nil
}

// Darts-clone unit fields (darts.h: DoubleArrayUnit).
func dartsHasLeaf(u uint32) bool  { return (u>>8)&1 == 1 }
func dartsValue(u uint32) uint32  { return u & (1<<31 - 1) }
func dartsLabel(u uint32) uint32  { return u & (1<<31 | 0xFF) }
func dartsOffset(u uint32) uint32 { return (u >> 10) << ((u & (1 << 9)) >> 6) }

// longestRule returns the length of the longest charsmap key that prefixes
// s and its value (an offset into norm); length 0 when none does.
func (n *spNormalizer) longestRule(s string) (length int, value uint32) {
	t := n.trie
	pos := dartsOffset(t[0])
	for i := 0; i < len(s); i++ {
		c := uint32(s[i])
		pos ^= c
		if int(pos) >= len(t) {
			return
		}
		u := t[pos]
		if dartsLabel(u) != c {
			return
		}
		pos ^= dartsOffset(u)
		if dartsHasLeaf(u) {
			if int(pos) >= len(t) {
				return
			}
			length, value = i+1, dartsValue(t[pos])
		}
	}
	return
}

// prefix normalises the first unit of s: a user-defined symbol (kept), the
// longest charsmap rule (replaced), or one UTF-8 character (kept; an
// invalid byte becomes U+FFFD and consumes one byte). It does not
// allocate: the result is a slice of s or of the replacement strings.
func (n *spNormalizer) prefix(s string) (out string, consumed int) {
	if n.user != nil {
		if l, _ := n.user.longest(s); l > 0 {
			return s[:l], l
		}
	}
	if n.trie != nil {
		if l, v := n.longestRule(s); l > 0 {
			rest := ""
			if int(v) < len(n.normStr) {
				rest = n.normStr[v:]
			}
			if end := strings.IndexByte(rest, 0); end >= 0 {
				rest = rest[:end]
			}
			return rest, l
		}
	}
	if s[0] < utf8.RuneSelf {
		return s[:1], 1
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size <= 1 {
		return "\uFFFD", 1
	}
	return s[:size], size
}

// Normalize returns the text the Unigram model segments.
func (n *spNormalizer) Normalize(input string) string {
	space := " "
	if n.spec.EscapeWhitespaces {
		space = spaceSymbol
	}
	if n.spec.RemoveExtraWhitespaces {
		for len(input) > 0 {
			p, c := n.prefix(input)
			if p != " " {
				break
			}
			input = input[c:]
		}
	}
	if input == "" {
		return ""
	}
	out := make([]byte, 0, len(input)*3/2+len(space))
	if !n.suffix && n.spec.AddDummyPrefix {
		out = append(out, space...)
	}
	prevSpace := n.spec.RemoveExtraWhitespaces
	for len(input) > 0 {
		p, c := n.prefix(input)
		if prevSpace {
			p = strings.TrimLeft(p, " ")
		}
		if p != "" {
			for i := 0; i < len(p); i++ {
				if p[i] == ' ' {
					out = append(out, space...)
				} else {
					out = append(out, p[i])
				}
			}
			prevSpace = p[len(p)-1] == ' '
		}
		input = input[c:]
		if !n.spec.RemoveExtraWhitespaces {
			prevSpace = false
		}
	}
	if n.spec.RemoveExtraWhitespaces {
		for len(out) >= len(space) && string(out[len(out)-len(space):]) == space {
			out = out[:len(out)-len(space)]
		}
	}
	if n.suffix && n.spec.AddDummyPrefix {
		out = append(out, space...)
	}
	return string(out)
}
