package experiment

import (
	"context"
	"fmt"

	"repro/runner"
	"repro/store"
)

// loopNotes says, for the report, how each repeat block with `until`
// ended: its rule, its metric by round, where it stopped and which round
// repeat.R.last read.
func loopNotes(loops []runner.LoopResult) []string {
	var out []string
	for _, l := range loops {
		s := fmt.Sprintf("repeat %s, %s: %s", l.Name, l.Rule, l.Decision.String())
		if l.Err != nil {
			s += fmt.Sprintf("; could not decide: %v", l.Err)
		}
		out = append(out, s)
	}
	return out
}

// PlanDetailed is Plan with where each repeat block with `until` stands.
func (x *Experiment) PlanDetailed(ctx context.Context, st *store.Store, backend string) (*runner.PlanResult, error) {
	return runner.PlanDetailed(ctx, st, x.Graph, runner.PlanOptions{Scope: x.Scope, Fallback: []string{x.BaseScope}, Backend: backend, Mirror: x.Mirror})
}
