package dsl

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// MaxNesting is the deepest bracket nesting a file or flag value may have.
// HCL's parser recurses once per level: 100,000 nested parentheses overflow
// Go's stack and kill the process before any diagnostic, so the source is
// scanned first. No experiment comes near this.
const MaxNesting = 200

// checkNesting scans src for (, [, { and their closers outside comments and
// string text (interpolations inside strings count) and reports the first
// place nesting passes MaxNesting. It is a scanner, not a parser: any
// malformation it does not understand is left to the parser, which reports
// it properly.
func checkNesting(filename string, src []byte, start hcl.Pos) hcl.Diagnostics {
	depth := 0
	var stack []bool // per open bracket: whether it is an interpolation
	inString := false
	line, col := start.Line, start.Column
	for i := 0; i < len(src); {
		c := src[i]
		adv := 1
		switch {
		case inString:
			switch {
			case c == '\\' && i+1 < len(src):
				adv = 2
			case c == '"':
				inString = false
			case c == '$' && i+1 < len(src) && src[i+1] == '{', c == '%' && i+1 < len(src) && src[i+1] == '{':
				stack = append(stack, true)
				depth++
				inString = false
				adv = 2
			}
		case c == '#' || c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i+adv < len(src) && src[i+adv] != '\n' {
				adv++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(string(src[i+2:]), "*/")
			if end < 0 {
				return nil
			}
			adv = end + 4
		case c == '"':
			inString = true
		case c == '(' || c == '[' || c == '{':
			stack = append(stack, false)
			depth++
		case c == ')' || c == ']' || c == '}':
			if len(stack) > 0 {
				interp := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				depth--
				if interp && c == '}' {
					inString = true
				}
			}
		}
		if depth > MaxNesting {
			pos := hcl.Pos{Line: line, Column: col, Byte: start.Byte + i}
			return hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Nested too deeply",
				Detail:   fmt.Sprintf("Brackets are nested more than %d levels deep here; no experiment needs that many.", MaxNesting),
				Subject:  &hcl.Range{Filename: filename, Start: pos, End: hcl.Pos{Line: line, Column: col + 1, Byte: pos.Byte + 1}},
			}}
		}
		for k := 0; k < adv && i < len(src); k++ {
			if src[i] == '\n' {
				line, col = line+1, 1
			} else if src[i] < utf8.RuneSelf || utf8.RuneStart(src[i]) {
				col++
			}
			i++
		}
	}
	return nil
}

// printable replaces control characters (other than tab) with a visible
// escape, so that a diagnostic never writes raw control bytes to a
// terminal (an escape sequence in a file must not recolour or clear it).
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r != '\t' && unicode.IsControl(r) || r == utf8.RuneError }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteRune(r)
		case r == utf8.RuneError:
			b.WriteRune('\uFFFD')
		case unicode.IsControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
