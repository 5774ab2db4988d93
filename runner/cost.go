package runner

import (
	"context"
	"fmt"
	"os"

	"repro/graph"
	"repro/registry"
	"repro/store"
)

// CostEstimate is a stage's estimated arithmetic (its type's
// registry.CostEstimate) and, where the store holds measured runs, the
// time it would take at their throughput.
type CostEstimate struct {
	registry.CostEstimate
	// FLOPsPerSecond is the throughput of the store's earlier runs of
	// tensor stages on the same backend that have an estimate: their
	// estimated FLOPs over their recorded durations (whole runs: data
	// preparation and evaluations included); 0 when there are none.
	FLOPsPerSecond float64
	// MeasuredRuns is how many runs FLOPsPerSecond comes from.
	MeasuredRuns int
}

// Seconds is the estimated run time at FLOPsPerSecond; 0 when either the
// FLOPs or the throughput is unknown.
func (c *CostEstimate) Seconds() float64 {
	if c.FLOPsPerSecond <= 0 {
		return 0
	}
	return c.FLOPs() / c.FLOPsPerSecond
}

// PlanCosts sets the Cost of every entry of plan (from Plan) that will run
// and whose stage type estimates its arithmetic (registry.StageType.Cost),
// given the artifacts of the entries that are cached; nothing is run. A
// type that cannot estimate (an input it reads is unreadable) gets a Cost
// whose Note says why. st may be nil (no cache yet): no input is
// computed and no throughput measured.
func PlanCosts(ctx context.Context, st *store.Store, g *graph.Graph, plan []PlanEntry, backend string) error {
	outputs := map[string]map[string]registry.Artifact{}
	if st != nil {
		for _, e := range plan {
			if e.Status == PlanCached && e.Key != "" {
				outs, err := st.Outputs(ctx, e.Key)
				if err != nil {
					return err
				}
				outputs[e.ID] = outs
			}
		}
	}
	rate, runs, err := throughput(ctx, st, g, backend)
	if err != nil {
		return err
	}
	for i := range plan {
		e := &plan[i]
		n := g.Node(e.ID)
		if e.Status != PlanRun || n == nil || n.Type.Cost == nil {
			continue
		}
		in := registry.CostInputs{Computed: map[string]registry.Artifact{}, Connected: map[string]bool{}}
		for port, edge := range n.Inputs {
			in.Connected[port] = true
			if a, ok := outputs[edge.Node][edge.Output]; ok && objectsPresent(map[string]registry.Artifact{port: a}) {
				in.Computed[port] = a
			}
		}
		params, err := n.Type.DecodeParams(n.Params)
		if err != nil {
			return fmt.Errorf("%s: %w", n.ID, err)
		}
		est, err := n.Type.Cost(params, in)
		switch {
		case err != nil:
			e.Cost = &CostEstimate{CostEstimate: registry.CostEstimate{Note: "no estimate: " + err.Error()}}
		case est == nil:
			e.Cost = &CostEstimate{CostEstimate: registry.CostEstimate{Note: "no estimate: the model's shape is known once its input is computed"}}
		default:
			e.Cost = &CostEstimate{CostEstimate: *est}
		}
		if runs > 0 {
			e.Cost.FLOPsPerSecond, e.Cost.MeasuredRuns = rate, runs
		}
	}
	return nil
}

// throughput is the FLOPs per second of the store's finished runs of g's
// tensor stage types with a Cost, on backend: the sum of their estimates
// over the sum of their durations. Runs whose estimate has no updates, or
// whose inputs are gone from the store where the estimate needs them, do
// not count.
func throughput(ctx context.Context, st *store.Store, g *graph.Graph, backend string) (float64, int, error) {
	if st == nil || !st.HasIndex() {
		return 0, 0, nil
	}
	types := map[string]*registry.StageType{}
	for _, n := range g.Nodes {
		if n.Type.Tensor && n.Type.Cost != nil {
			types[n.Type.Name] = n.Type
		}
	}
	if len(types) == 0 {
		return 0, 0, nil
	}
	all, err := st.List(ctx)
	if err != nil {
		return 0, 0, err
	}
	var flops, secs float64
	n := 0
	for _, r := range all {
		t := types[r.Type]
		if t == nil || r.Partial || r.Duration <= 0 || r.Version != t.Version || backendOf(r.Backend) != backendOf(backend) {
			continue
		}
		obj, err := t.ParamsFromJSON(r.Params)
		if err != nil {
			continue // recorded under other parameters: not comparable
		}
		params, err := t.DecodeParams(obj)
		if err != nil {
			continue
		}
		in := registry.CostInputs{Computed: map[string]registry.Artifact{}, Connected: map[string]bool{}}
		for port, d := range r.Inputs {
			in.Connected[port] = true
			if dir := st.ObjectPath(d); dirExists(dir) {
				in.Computed[port] = registry.Artifact{Dir: dir, Digest: d}
			}
		}
		est, err := t.Cost(params, in)
		if err != nil || est == nil || est.FLOPs() <= 0 {
			continue
		}
		flops += est.FLOPs()
		secs += r.Duration.Seconds()
		n++
	}
	if n == 0 {
		return 0, 0, nil
	}
	return flops / secs, n, nil
}

func backendOf(b string) string {
	if b == "" {
		return "cpu"
	}
	return b
}

func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}
