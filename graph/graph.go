// Package graph is the pipeline that every layer of repro shares: nodes
// (stage instances with complete parameters), edges (an input reading
// another node's output), and the algorithms over them -- topological
// order and cycles, a target and its upstream, validation, static
// identities, merging the variants of an ablation grid, rendering, and the
// cache key of a node.
//
// The dsl evaluates an HCL file into one Graph per variant; the runner
// schedules a Graph against the store; the application layer (package
// experiment) narrows and merges graphs between the two. Neither the dsl
// nor the runner knows the other: this package is what they agree on. It
// knows stage types (package registry) but nothing of HCL, SQLite or
// sentence embeddings.
package graph

import (
	"fmt"
	"strings"

	"repro/registry"

	"github.com/zclconf/go-cty/cty"
)

// Node is one stage instance to run: a stage type with its complete
// parameters and its input edges.
type Node struct {
	// ID names the node for people: "train", "idc[2].train" (round 2 of a
	// repeat block), "train@top_k=3" (one cell of a merged grid). IDs are
	// unique within a Graph.
	ID     string
	Type   *registry.StageType
	Params cty.Value // object with every parameter of Type, converted to its schema types
	Inputs map[string]Edge
	Seed   int64 // ignored in the key unless Type.Seeded
	// Source is where the node was declared ("experiments/paser.hcl:120"),
	// for messages about it; not part of any key.
	Source string
	// Resources is what one run of the node needs: the stage type's
	// defaults with the stage block's `resources { }` over them. Not part
	// of the key (where a stage runs does not change what it computes).
	Resources registry.Resources
}

// Needs is what one run of n needs: n.Resources, or the stage type's
// defaults when the node declares none (a node built in code).
func (n *Node) Needs() registry.Resources {
	r := n.Resources
	if r == (registry.Resources{}) && n.Type != nil {
		r = n.Type.DefaultResources()
	}
	if r.CPUs < 1 {
		r.CPUs = 1
	}
	return r
}

// Edge names the output of another node.
type Edge struct {
	Node   string
	Output string
}

// Graph is a DAG of nodes. Nodes are in topological order (every edge points
// to an earlier node); Validate checks it.
type Graph struct {
	Nodes []*Node
	// Loops are the repeat blocks whose rounds stop when a metric stops
	// improving (see Loop); their nodes are among Nodes.
	Loops []*Loop
}

// Node returns the node with that ID, or nil.
func (g *Graph) Node(id string) *Node {
	for _, n := range g.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// IDs lists the node IDs in graph order.
func (g *Graph) IDs() []string {
	ids := make([]string, len(g.Nodes))
	for i, n := range g.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// Upstream returns the graph of the targets and everything they depend on,
// in g's order (so still topological). An unknown target is an error naming
// the stages there are. It is the one "target and its upstream" of the
// project: --target, ablation reports and the runner's Targets use it.
func (g *Graph) Upstream(targets ...string) (*Graph, error) {
	want := map[string]bool{}
	for _, id := range targets {
		if g.Node(id) == nil {
			return nil, fmt.Errorf("no stage %q (stages: %s)", id, strings.Join(g.IDs(), ", "))
		}
		want[id] = true
	}
	// Walk backwards: graph order is topological, so every user of a node
	// is seen before the node itself. A loop is wanted whole (its stopping
	// rule reads every round), which may want more upstream: walk again.
	for {
		for i := len(g.Nodes) - 1; i >= 0; i-- {
			if n := g.Nodes[i]; want[n.ID] {
				for _, e := range n.Inputs {
					want[e.Node] = true
				}
			}
		}
		if !g.withLoops(want) {
			break
		}
	}
	out := &Graph{}
	for _, n := range g.Nodes {
		if want[n.ID] {
			out.Nodes = append(out.Nodes, n)
		}
	}
	for _, l := range g.Loops {
		if want[l.Rounds[0][0]] {
			out.Loops = append(out.Loops, l)
		}
	}
	return out, nil
}

// Sort orders n items so that each comes after the items it depends on
// (deps(i) lists the indexes i depends on; indexes outside [0, n) are
// ignored). Among items ready together the lowest index wins (Kahn's
// algorithm taking the earliest ready item), so the order is stable under
// edits that do not touch the edges. Items on or behind a cycle are left
// out of order; each cycle is returned once as the path of indexes in
// data-flow order (each feeds the next), closing with its first element,
// found by a depth-first search in index order.
func Sort(n int, deps func(i int) []int) (order []int, cycles [][]int) {
	indeg := make([]int, n)
	users := make([][]int, n)
	depsOf := make([][]int, n)
	for i := 0; i < n; i++ {
		for _, j := range deps(i) {
			if j < 0 || j >= n {
				continue
			}
			depsOf[i] = append(depsOf[i], j)
			indeg[i]++
			users[j] = append(users[j], i)
		}
	}
	done := make([]bool, n)
	for {
		next := -1
		for i := 0; i < n; i++ {
			if !done[i] && indeg[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 {
			break
		}
		done[next] = true
		order = append(order, next)
		for _, u := range users[next] {
			indeg[u]--
		}
	}
	if len(order) == n {
		return order, nil
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]int, n)
	var stack []int
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		stack = append(stack, i)
		for _, j := range depsOf[i] {
			if done[j] {
				continue
			}
			switch color[j] {
			case white:
				visit(j)
			case grey:
				// The cycle runs from j down the stack to i, then back to
				// j; down the stack each item feeds the one above it.
				var path []int
				for k := len(stack) - 1; k >= 0; k-- {
					path = append(path, stack[k])
					if stack[k] == j {
						break
					}
				}
				cycles = append(cycles, append(path, path[0]))
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
	}
	for i := 0; i < n; i++ {
		if !done[i] && color[i] == white {
			visit(i)
		}
	}
	return order, cycles
}
