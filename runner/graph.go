package runner

import (
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
