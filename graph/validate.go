package graph

import (
	"fmt"
	"sort"
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// Validate checks what the scheduler relies on: unique IDs, a stage type on
// every node, a parameter object where the type has parameters, inputs that
// name declared ports of the node's type and declared outputs of EARLIER
// nodes (so the order is topological and there is no cycle), and every
// required input connected. All problems are reported together.
func (g *Graph) Validate() error {
	var errs []string
	seen := map[string]*Node{}
	for i, n := range g.Nodes {
		if n == nil {
			errs = append(errs, fmt.Sprintf("node #%d is nil", i))
			continue
		}
		if n.ID == "" {
			errs = append(errs, fmt.Sprintf("node #%d has no ID", i))
		}
		if _, dup := seen[n.ID]; dup {
			errs = append(errs, fmt.Sprintf("node %q: duplicate ID", n.ID))
		}
		if n.Type == nil {
			errs = append(errs, fmt.Sprintf("node %q: no stage type", n.ID))
			seen[n.ID] = n
			continue
		}
		if n.Type.Params != nil && (n.Params == cty.NilVal || n.Params.IsNull() || !n.Params.Type().IsObjectType()) {
			errs = append(errs, fmt.Sprintf("node %q (%s): parameters must be an object", n.ID, n.Type.Name))
		}
		for _, port := range sortedPorts(n.Inputs) {
			e := n.Inputs[port]
			if _, ok := n.Type.Input(port); !ok {
				errs = append(errs, fmt.Sprintf("node %q (%s): no input named %q", n.ID, n.Type.Name, port))
			}
			up, ok := seen[e.Node]
			switch {
			case !ok && g.Node(e.Node) != nil:
				errs = append(errs, fmt.Sprintf("node %q: input %q comes from %q, which is not an earlier node (cycle or wrong order)", n.ID, port, e.Node))
			case !ok:
				errs = append(errs, fmt.Sprintf("node %q: input %q comes from unknown node %q", n.ID, port, e.Node))
			case up.Type != nil:
				if _, ok := up.Type.Output(e.Output); !ok {
					errs = append(errs, fmt.Sprintf("node %q: input %q reads output %q, which %q (%s) does not have", n.ID, port, e.Output, e.Node, up.Type.Name))
				}
			}
		}
		for _, p := range n.Type.Inputs {
			if _, ok := n.Inputs[p.Name]; !ok && !p.Optional {
				errs = append(errs, fmt.Sprintf("node %q (%s): required input %q is not connected", n.ID, n.Type.Name, p.Name))
			}
		}
		seen[n.ID] = n
	}
	errs = append(errs, g.validateLoops()...)
	if len(errs) > 0 {
		return fmt.Errorf("invalid graph:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

func sortedPorts(m map[string]Edge) []string {
	ps := make([]string, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}
