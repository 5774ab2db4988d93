// Package view renders what the commands computed, for people and for
// programs, from the same values: each command builds one value (a check
// result, a plan, diagnostics, run events, stage documentation, cache
// entries) and hands it to the Human or the JSON renderer, so the two can
// never disagree. This is Terraform's command/views split: the command
// decides, the view only prints.
//
// JSON output is one document per command (check, plan, validate, stages,
// cache ls), or, for run, a stream of one JSON object per line (events,
// then the result cells), as `terraform apply -json` does, so a CI system
// can read it while the run goes on. Every document carries "format_version"
// so a consumer can refuse a shape it does not know.
package view

import (
	"encoding/json"
	"io"
	"math"
)

// FormatVersion is the version of the JSON shapes below; bump it when a
// field changes meaning or disappears (adding one does not).
const FormatVersion = "1.0"

// WriteJSON writes v as indented JSON and a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// num is a JSON number that is null when NaN (encoding/json refuses NaN).
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
