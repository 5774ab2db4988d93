package graph

import (
	"fmt"
	"strings"
)

// Dot renders the graph in Graphviz dot: one box per node labelled with its
// ID and stage type, one edge per input labelled with the output it reads.
// The output depends only on the graph (nodes in graph order, inputs by
// port name), so it can be compared and committed.
func (g *Graph) Dot() string {
	var b strings.Builder
	b.WriteString("digraph pipeline {\n  rankdir=LR;\n  node [shape=box];\n")
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "  %s [label=%s];\n", dotQuote(n.ID), dotQuote(n.ID+"\n"+typeName(n)))
	}
	for _, n := range g.Nodes {
		for _, port := range sortedPorts(n.Inputs) {
			e := n.Inputs[port]
			fmt.Fprintf(&b, "  %s -> %s [label=%s];\n", dotQuote(e.Node), dotQuote(n.ID), dotQuote(e.Output))
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// Mermaid renders the graph as a Mermaid flowchart, with the same content
// and determinism as Dot. Node IDs such as "idc[2].train" are not valid
// Mermaid identifiers, so nodes are named n0, n1, ... in graph order and
// the ID goes in the label.
func (g *Graph) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	ids := map[string]string{}
	for i, n := range g.Nodes {
		ids[n.ID] = fmt.Sprintf("n%d", i)
		fmt.Fprintf(&b, "  n%d[\"%s<br/>%s\"]\n", i, mermaidEscape(n.ID), mermaidEscape(typeName(n)))
	}
	for _, n := range g.Nodes {
		for _, port := range sortedPorts(n.Inputs) {
			e := n.Inputs[port]
			from, ok := ids[e.Node]
			if !ok {
				from = "missing_" + mermaidEscape(e.Node)
			}
			fmt.Fprintf(&b, "  %s -->|%s| %s\n", from, mermaidEscape(e.Output), ids[n.ID])
		}
	}
	return b.String()
}

func mermaidEscape(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "|", "#124;", "<", "#lt;", ">", "#gt;", "\n", " ")
	return r.Replace(s)
}

func typeName(n *Node) string {
	if n.Type == nil {
		return "?"
	}
	return n.Type.Name
}
