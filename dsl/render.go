package dsl

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// Render writes each diagnostic as
//
//	file:line:column: error: Summary
//	   12 |   uses = "text.rake_msk"
//	      |          ^^^^^^^^^^^^^^^
//	  Detail.
//
// the form compilers use, so editors and terminals can jump to the spot.
// Sources come from files (Loader.Files); a file missing there is read from
// disk, and a diagnostic without a range or source prints without snippet.
func Render(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics) error {
	bw := bufio.NewWriter(w)
	disk := map[string][]byte{}
	source := func(name string) []byte {
		if f, ok := files[name]; ok && f != nil {
			return f.Bytes
		}
		if b, ok := disk[name]; ok {
			return b
		}
		b, _ := os.ReadFile(name) // best effort: no snippet when unreadable
		disk[name] = b
		return b
	}
	for i, d := range diags {
		if i > 0 {
			bw.WriteString("\n")
		}
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		if d.Subject == nil {
			fmt.Fprintf(bw, "%s: %s\n", sev, printable(d.Summary))
		} else {
			s := d.Subject
			fmt.Fprintf(bw, "%s:%d:%d: %s: %s\n", printable(s.Filename), s.Start.Line, s.Start.Column, sev, printable(d.Summary))
			writeSnippet(bw, source(s.Filename), *s)
		}
		if d.Detail != "" {
			for _, line := range strings.Split(d.Detail, "\n") {
				fmt.Fprintf(bw, "  %s\n", printable(line))
			}
		}
	}
	return bw.Flush()
}

// writeSnippet prints the range's first line and underlines the range (to
// the end of the line when it spans several).
func writeSnippet(w io.Writer, src []byte, r hcl.Range) {
	if len(src) == 0 || r.Start.Line < 1 {
		return
	}
	lines := bytes.Split(src, []byte("\n"))
	if r.Start.Line > len(lines) {
		return
	}
	line := []rune(strings.TrimRight(string(lines[r.Start.Line-1]), "\r"))
	from := r.Start.Column - 1
	if from < 0 {
		from = 0
	}
	if from > len(line) {
		from = len(line)
	}
	to := len(line)
	if r.End.Line == r.Start.Line && r.End.Column-1 < to {
		to = r.End.Column - 1
	}
	if to <= from {
		to = from + 1
	}
	num := fmt.Sprint(r.Start.Line)
	pad := strings.Repeat(" ", len(num))
	var mark strings.Builder
	for _, c := range printable(string(line[:from])) {
		if c == '\t' {
			mark.WriteRune('\t') // keeps the carets aligned under tabs
		} else {
			mark.WriteRune(' ')
		}
	}
	// The range may end past the line (a caret after its last character).
	carets := utf8.RuneCountInString(printable(string(line[from:min(to, len(line))])))
	mark.WriteString(strings.Repeat("^", max(carets, to-min(to, len(line)), 1)))
	fmt.Fprintf(w, "  %s | %s\n", num, printable(string(line)))
	fmt.Fprintf(w, "  %s | %s\n", pad, mark.String())
}
