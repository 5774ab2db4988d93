package experiment

import (
	"context"

	"repro/runner"
	"repro/store"
)

// PlanCosts sets the estimated cost of the experiment's training stages
// that plan (from PlanDetailed) says will run, with times from the
// throughput of the store's earlier runs on backend (runner.PlanCosts).
func (x *Experiment) PlanCosts(ctx context.Context, st *store.Store, plan []runner.PlanEntry, backend string) error {
	return runner.PlanCosts(ctx, st, x.Graph, plan, backend)
}
