package runner

import (
	"fmt"
	"strings"

	"repro/registry"

	"github.com/zclconf/go-cty/cty"
)

// Node is one stage instance to run: a stage type with its complete,
// decoded-ready parameters and its input edges. The dsl package produces
// the information (cmd/repro turns dsl stages into Nodes); the runner knows
// nothing of HCL.
type Node struct {
	// ID names the node for people: "train", "idc[2].train" (round 2 of a
	// repeat block). IDs are unique within a Graph.
	ID     string
	Type   *registry.StageType
	Params cty.Value // object with every parameter of Type, converted to its schema types
	Inputs map[string]Edge
	Seed   int64 // ignored in the key unless Type.Seeded
}

// Edge names the output of another node.
type Edge struct {
	Node   string
	Output string
}

// Graph is a DAG of nodes. Nodes are in topological order (every edge points
// to an earlier node).
type Graph struct {
	Nodes []*Node
}

// Node returns the node with that ID.
func (g *Graph) Node(id string) *Node {
	for _, n := range g.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// Subgraph returns the nodes of g that targets need: the targets and
// everything upstream of them, in g's order. An unknown target is an error
// naming the stages there are.
func (g *Graph) Subgraph(targets []string) (*Graph, error) {
	keep := map[string]bool{}
	var visit func(id string) error
	visit = func(id string) error {
		if keep[id] {
			return nil
		}
		n := g.Node(id)
		if n == nil {
			ids := make([]string, len(g.Nodes))
			for i, n := range g.Nodes {
				ids[i] = n.ID
			}
			return fmt.Errorf("no stage %q (stages: %s)", id, strings.Join(ids, ", "))
		}
		keep[id] = true
		for _, e := range n.Inputs {
			if err := visit(e.Node); err != nil {
				return err
			}
		}
		return nil
	}
	for _, t := range targets {
		if err := visit(t); err != nil {
			return nil, err
		}
	}
	out := &Graph{}
	for _, n := range g.Nodes {
		if keep[n.ID] {
			out.Nodes = append(out.Nodes, n)
		}
	}
	return out, nil
}
