package dsl

import (
	"strings"
	"testing"
)

// 100,000 nested parentheses used to overflow the stack inside HCL's
// parser; now they are a diagnostic at the first bracket past the limit.
func TestDeepNestingIsADiagnostic(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000)
	src := "experiment \"x\" {}\nlocals {\n  v = " + deep + "\n}\n"
	l := NewLoader(testRegistry())
	_, diags := l.LoadSource("deep.hcl", []byte(src), Options{})
	if !diags.HasErrors() || diags[0].Summary != "Nested too deeply" || diags[0].Subject.Start.Line != 3 {
		t.Fatalf("diags %v", diags)
	}
	var b strings.Builder
	if err := Render(&b, l.Files(), diags); err != nil || !strings.Contains(b.String(), "deep.hcl:3:") {
		t.Errorf("render: %v\n%s", err, b.String())
	}
	// In a --set value too.
	_, diags = l.LoadSource("ok.hcl", []byte("experiment \"x\" {}\nstage \"s\" {\n  uses = \"data.sentences\"\n}\n"),
		Options{Sets: []string{"stage.s.limit=" + strings.Repeat("[", 50000)}})
	if !diags.HasErrors() {
		t.Error("a deeply nested --set value was accepted")
	}
	// Brackets in strings and comments do not count; interpolations do.
	fine := "experiment \"x\" {}\n# " + strings.Repeat("(", 500) + "\nlocals {\n  s = \"" + strings.Repeat("[", 500) + "\"\n  t = \"${1}\"\n}\n"
	if _, diags := NewLoader(testRegistry()).LoadSource("fine.hcl", []byte(fine), Options{}); diags.HasErrors() {
		t.Errorf("brackets in comments/strings counted: %v", diags)
	}
}

// A diagnostic never echoes raw control bytes: an escape sequence in a file
// must not reach the terminal.
func TestDiagnosticsEscapeControlBytes(t *testing.T) {
	t.Parallel()
	src := "experiment \"x\" {}\nstage \"s\" {\n  uses = \"data.\x1b[2Jsentences\"\n}\n"
	l := NewLoader(testRegistry())
	_, diags := l.LoadSource("ctl.hcl", []byte(src), Options{})
	var b strings.Builder
	Render(&b, l.Files(), diags)
	out := b.String()
	if strings.ContainsRune(out, 0x1b) || !strings.Contains(out, `\x1b[2J`) {
		t.Errorf("rendered diagnostics hold a raw escape or lack its visible form:\n%q", out)
	}
}
