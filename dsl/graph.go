package dsl

import (
	"fmt"
	"sort"
	"strings"

	"repro/graph"
)

// toposort orders the stage instances so that every input refers to an
// earlier stage (graph.Sort: among stages ready together, file order wins).
// Instances left over sit on or behind a cycle; each cycle is reported once,
// at the reference that closes it.
func (e *evaluator) toposort() []*Stage {
	order, cycles := graph.Sort(len(e.stages), func(i int) []int {
		var deps []int
		s := e.stages[i]
		for _, in := range sortedInputs(s) {
			if j, ok := e.stageIdx[s.Inputs[in].Stage]; ok {
				deps = append(deps, j)
			}
		}
		return deps
	})
	for _, c := range cycles {
		// c runs in data-flow order and closes with its first element, which
		// reads the one before last: that reference closes the cycle.
		from, to := e.stages[c[0]], e.stages[c[len(c)-2]]
		names := make([]string, len(c))
		for k, i := range c {
			names[k] = e.stages[i].Name
		}
		for _, in := range sortedInputs(from) {
			if ref := from.Inputs[in]; ref.Stage == to.Name {
				e.errorf(ref.Range, "Dependency cycle",
					"The stages depend on each other in a loop: %s (each feeds the next).", strings.Join(names, " -> "))
				break
			}
		}
	}
	out := make([]*Stage, len(order))
	for k, i := range order {
		out[k] = e.stages[i]
	}
	return out
}

func sortedInputs(s *Stage) []string {
	ins := make([]string, 0, len(s.Inputs))
	for k := range s.Inputs {
		ins = append(ins, k)
	}
	sort.Strings(ins)
	return ins
}

// graphOf turns evaluated stages (in topological order) into the runner's
// graph.
func graphOf(stages []*Stage) *graph.Graph {
	g := &graph.Graph{}
	for _, s := range stages {
		n := &graph.Node{
			ID: s.Name, Type: s.Type, Params: s.Params, Seed: s.Seed, Inputs: map[string]graph.Edge{},
			Source:    fmt.Sprintf("%s:%d", s.Range.Filename, s.Range.Start.Line),
			Resources: s.Resources,
		}
		for port, ref := range s.Inputs {
			n.Inputs[port] = graph.Edge{Node: ref.Stage, Output: ref.Output}
		}
		g.Nodes = append(g.Nodes, n)
	}
	return g
}
