package runner

import (
	"context"
	"fmt"

	"repro/graph"
	"repro/registry"
	"repro/store"
)

// RequestPlan is what one node would send to a language model.
type RequestPlan struct {
	ID string
	registry.RequestEstimate
}

// PlanRequests asks every node of g whose stage type sends language-model
// requests what it would send, given the artifacts of the nodes that plan
// (from Plan) says are cached; nothing is run or sent. A node that is
// itself cached sends nothing and is not asked to build its requests (a
// paper-size stage has hundreds of thousands), so planning a cached
// pipeline stays fast.
//
// st may be nil (a cache that does not exist yet): nothing is cached then.
func PlanRequests(ctx context.Context, st *store.Store, g *graph.Graph, plan []PlanEntry) ([]RequestPlan, error) {
	var requests registry.RequestStore
	if st != nil {
		var err error
		if requests, err = st.Requests(); err != nil {
			return nil, err
		}
	} else {
		plan = nil
	}
	outputs := map[string]map[string]registry.Artifact{}
	cached := map[string]bool{}
	for _, e := range plan {
		cached[e.ID] = e.Status == PlanCached
		if e.Status == PlanCached && e.Key != "" {
			outs, err := st.Outputs(ctx, e.Key)
			if err != nil {
				return nil, err
			}
			outputs[e.ID] = outs
		}
	}
	var out []RequestPlan
	for _, n := range g.Nodes {
		if n.Type.Requests == nil {
			continue
		}
		params, err := n.Type.DecodeParams(n.Params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.ID, err)
		}
		inputs := map[string]registry.Artifact{}
		if cached[n.ID] {
			// The stage will not run, so it sends nothing; asked without
			// inputs, the type only names its model and price, cheaply.
			env := &registry.Env{Params: params, Inputs: inputs, Seed: n.Seed, Requests: requests}
			est, err := n.Type.Requests(ctx, env)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", n.ID, err)
			}
			if est != nil {
				e := *est
				e.Requests, e.Cached, e.Exact, e.PromptTokens, e.CompletionTokens = 0, 0, true, 0, 0
				e.Note = "stage cached: sends nothing"
				out = append(out, RequestPlan{ID: n.ID, RequestEstimate: e})
			}
			continue
		}
		for port, e := range n.Inputs {
			if a, ok := outputs[e.Node][e.Output]; ok && objectsPresent(map[string]registry.Artifact{port: a}) {
				inputs[port] = a
			}
		}
		env := &registry.Env{Params: params, Inputs: inputs, Seed: n.Seed, Requests: requests}
		est, err := n.Type.Requests(ctx, env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.ID, err)
		}
		if est != nil {
			out = append(out, RequestPlan{ID: n.ID, RequestEstimate: *est})
		}
	}
	return out, nil
}
