package view

import (
	"github.com/hashicorp/hcl/v2"
)

// Validate is `repro validate --json`: per file its diagnostics, in the
// shape an editor or a CI annotation reads (Terraform's validate -json).
type Validate struct {
	FormatVersion string         `json:"format_version"`
	Valid         bool           `json:"valid"`
	ErrorCount    int            `json:"error_count"`
	WarningCount  int            `json:"warning_count"`
	Files         []ValidateFile `json:"files"`
}

// ValidateFile is one file's result.
type ValidateFile struct {
	File        string       `json:"file"`
	Valid       bool         `json:"valid"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// Diagnostic is one error or warning, at its place in a file where it has
// one (a command-line value's place is in a synthetic file named after its
// flag: "-var", "--set").
type Diagnostic struct {
	Severity string `json:"severity"` // "error" or "warning"
	Summary  string `json:"summary"`
	Detail   string `json:"detail,omitempty"`
	Range    *Range `json:"range,omitempty"`
}

// Range is a span in a file; lines and columns count from 1, byte offsets
// from 0; End is exclusive.
type Range struct {
	Filename string `json:"filename"`
	Start    Pos    `json:"start"`
	End      Pos    `json:"end"`
}

// Pos is a position in a file.
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// Diagnostics converts HCL diagnostics.
func Diagnostics(diags hcl.Diagnostics) []Diagnostic {
	out := []Diagnostic{}
	for _, d := range diags {
		v := Diagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			v.Severity = "warning"
		}
		if s := d.Subject; s != nil {
			v.Range = &Range{Filename: s.Filename,
				Start: Pos{Line: s.Start.Line, Column: s.Start.Column, Byte: s.Start.Byte},
				End:   Pos{Line: s.End.Line, Column: s.End.Column, Byte: s.End.Byte}}
		}
		out = append(out, v)
	}
	return out
}

// Add adds a file's diagnostics.
func (v *Validate) Add(file string, diags hcl.Diagnostics) {
	v.FormatVersion = FormatVersion
	f := ValidateFile{File: file, Valid: !diags.HasErrors(), Diagnostics: Diagnostics(diags)}
	for _, d := range f.Diagnostics {
		if d.Severity == "error" {
			v.ErrorCount++
		} else {
			v.WarningCount++
		}
	}
	v.Files = append(v.Files, f)
	v.Valid = v.ErrorCount == 0
}
