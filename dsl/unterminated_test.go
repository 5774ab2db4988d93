package dsl

import (
	"os"
	"strings"
	"testing"
)

// One missing quote in a real experiment file is one error, at its line,
// not the ~120 the parser reports for the rest of the file.
func TestUnterminatedStringFirst(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../experiments/gense.hcl")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	i := strings.Index(s, `"data.nli"`)
	broken := s[:i] + `"data.nli` + s[i+len(`"data.nli"`):]
	line := strings.Count(broken[:i], "\n") + 1
	_, diags := NewLoader(testRegistry()).LoadSource("gense.hcl", []byte(broken), Options{})
	if len(diags) != 1 {
		t.Fatalf("%d diagnostics, want 1:\n%v", len(diags), diags)
	}
	d := diags[0]
	if d.Summary != "Unterminated string" || d.Subject.Start.Line != line || !strings.Contains(d.Detail, "follow from it and are not shown") {
		t.Errorf("diagnostic %q at line %d (want %d): %s", d.Summary, d.Subject.Start.Line, line, d.Detail)
	}
	// An error before the broken string is kept, and comes first.
	early := strings.Replace(broken, `experiment "gense" {`, `experiment "gense" { = `, 1)
	_, diags = NewLoader(testRegistry()).LoadSource("gense.hcl", []byte(early), Options{})
	if len(diags) < 2 || diags[len(diags)-1].Summary != "Unterminated string" || diags[0].Subject.Start.Line >= line {
		t.Errorf("with an earlier error: %v", diags)
	}
}
