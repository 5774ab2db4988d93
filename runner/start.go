package runner

import (
	"fmt"
	"os"
	"strings"

	"repro/graph"
	"repro/internal/dataset"
	"repro/registry"
)

// StartError is a run refused before any stage started: stages whose
// parameters alone show they cannot work (a paper profile run without the
// -var that names its pretrained weights, a checkpoint directory that is
// not there). Every such stage is listed, so one attempt shows all that is
// missing.
type StartError struct {
	Stages []StartProblem
}

// StartProblem is one stage a run cannot start with.
type StartProblem struct {
	ID, Type, Source string
	Err              error
}

func (e *StartError) Error() string {
	// Stages refused for the same reason (the five T5 stages of a paper
	// profile run without -var t5) share one statement of it.
	n := len(e.Stages)
	return fmt.Sprintf("the run cannot start (nothing ran): %d stage%s cannot work as declared", n, plural(n)) + e.Detail()
}

// Detail lists the stages, grouped by reason, one per line after a blank
// line: what Error says after its first line.
func (e *StartError) Detail() string {
	var reasons []string
	byReason := map[string][]StartProblem{}
	for _, p := range e.Stages {
		r := p.Err.Error()
		if _, ok := byReason[r]; !ok {
			reasons = append(reasons, r)
		}
		byReason[r] = append(byReason[r], p)
	}
	var b strings.Builder
	for _, r := range reasons {
		b.WriteString("\n")
		for _, p := range byReason[r] {
			b.WriteString("\n  ")
			if p.Source != "" {
				b.WriteString(p.Source + ": ")
			}
			fmt.Fprintf(&b, "stage %q (%s)", p.ID, p.Type)
		}
		b.WriteString("\n    " + r)
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// CheckStart is the check Run makes before anything starts, for `repro
// plan` to show what a run would refuse.
func CheckStart(nodes []*graph.Node) error { return checkStart(nodes) }

// checkStart asks every node whether it can start (registry.StartChecker
// over its decoded parameters, and every external path its type reads must
// exist), before anything runs: a refusal after hours of data stages would
// waste them, and a stage's own check at its turn cannot tell the user of
// the other stages that would fail the same way.
func checkStart(nodes []*graph.Node) error {
	var probs []StartProblem
	for _, n := range nodes {
		if err := startable(n); err != nil {
			probs = append(probs, StartProblem{ID: n.ID, Type: n.Type.Name, Source: n.Source, Err: err})
		}
	}
	if len(probs) > 0 {
		return &StartError{Stages: probs}
	}
	return nil
}

func startable(n *graph.Node) error {
	if n.Type == nil {
		return nil
	}
	params, err := n.Type.DecodeParams(n.Params)
	if err != nil {
		return err
	}
	if err := n.Type.ValidateParams(params); err != nil {
		return err
	}
	if c, ok := params.(registry.StartChecker); ok {
		if err := c.CheckStart(func(port string) bool { _, ok := n.Inputs[port]; return ok }); err != nil {
			return err
		}
	}
	if n.Type.Datasets != nil {
		if names := n.Type.Datasets(params); len(names) > 0 {
			if err := dataset.Default().Missing(names...); err != nil {
				return err
			}
		}
	}
	if n.Type.Externals == nil {
		return nil
	}
	exts, err := n.Type.Externals(params)
	if err != nil {
		return err
	}
	for _, e := range exts {
		if _, err := os.Stat(e.Path); err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
	}
	return nil
}
