package dsl

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// unterminatedFirst reports an unterminated string as one error at the
// line it starts on. HCL's parser, having read the rest of the file as the
// string's continuation, reports "Invalid multi-line string" at the end of
// every following line and "Unterminated template string" last: about a
// hundred errors for one missing quote in an experiment file, the cause
// lost among them. The errors after the first are its consequences and
// are dropped (counted in the detail); errors before it are kept.
func unterminatedFirst(diags hcl.Diagnostics) hcl.Diagnostics {
	first := -1
	for i, d := range diags {
		if d.Subject == nil || !isStringBreak(d.Summary) {
			continue
		}
		if first < 0 || d.Subject.Start.Byte < diags[first].Subject.Start.Byte {
			first = i
		}
	}
	if first < 0 {
		return diags
	}
	cause := diags[first]
	var out hcl.Diagnostics
	dropped := 0
	for i, d := range diags {
		if i == first {
			continue
		}
		if d.Subject == nil || d.Subject.Start.Byte >= cause.Subject.Start.Byte {
			dropped++
			continue
		}
		out = append(out, d)
	}
	detail := fmt.Sprintf("The string on line %d has no closing quote before the end of its line; HCL strings end on the line they start "+
		"(for more lines, use \\n or a heredoc: <<EOT ... EOT).", cause.Subject.Start.Line)
	if dropped > 0 {
		detail += fmt.Sprintf(" The %d error(s) after this one in the file follow from it and are not shown.", dropped)
	}
	return append(out, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unterminated string", Detail: detail, Subject: cause.Subject})
}

func isStringBreak(summary string) bool {
	return summary == "Invalid multi-line string" || summary == "Unterminated template string"
}
