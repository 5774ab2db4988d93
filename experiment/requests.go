package experiment

import (
	"context"

	"repro/registry"
	"repro/runner"
	"repro/store"
)

// PlanRequests says what the experiment's language-model stages would send,
// given what Plan found cached; nothing is sent.
func (x *Experiment) PlanRequests(ctx context.Context, st *store.Store, plan []runner.PlanEntry) ([]runner.RequestPlan, error) {
	return runner.PlanRequests(ctx, st, x.Graph, plan)
}

// Prices returns, by "provider/model", the price its stages' price tables
// give it (the first stage that prices it).
func (x *Experiment) Prices(ctx context.Context, st *store.Store) (map[string]registry.RequestEstimate, error) {
	rps, err := runner.PlanRequests(ctx, st, x.Graph, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]registry.RequestEstimate{}
	for _, r := range rps {
		k := r.Provider + "/" + r.Model
		if _, ok := out[k]; !ok && r.Priced {
			out[k] = r.RequestEstimate
		}
	}
	return out, nil
}
