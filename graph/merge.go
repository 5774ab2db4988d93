package graph

import (
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/zeebo/blake3"
)

// Identities returns a static identity hash for every node of g, computed
// without running anything: BLAKE3 of the stage type, version, canonical
// parameters, seed (Seeded types only) and, for each input, the identity of
// the upstream node and the output read. Two nodes with equal identities
// compute equal keys whatever their upstream stages write.
func (g *Graph) Identities() (map[string]string, error) {
	ids := map[string]string{}
	for _, n := range g.Nodes {
		if n.Type == nil {
			return nil, fmt.Errorf("node %q has no stage type", n.ID)
		}
		params, err := CanonicalParams(n.Params)
		if err != nil {
			return nil, fmt.Errorf("node %q: %v", n.ID, err)
		}
		ins := map[string]string{}
		for port, e := range n.Inputs {
			up, ok := ids[e.Node]
			if !ok {
				return nil, fmt.Errorf("node %q: input %q comes from %q, which is not an earlier node", n.ID, port, e.Node)
			}
			ins[port] = up + "/" + e.Output
		}
		d := keyDoc{Scheme: "repro-identity-v1", Type: n.Type.Name, Version: n.Type.Version, Params: params, Inputs: ins}
		if n.Type.Seeded {
			s := n.Seed
			d.Seed = &s
		}
		buf, _ := json.Marshal(d)
		sum := blake3.Sum256(buf)
		ids[n.ID] = hex.EncodeToString(sum[:])
	}
	return ids, nil
}

// Merge combines the graphs of several variants (the cells of an ablation
// grid) into one graph in which a node that is identical in several
// variants (same ID and same identity, see Identities) appears once, so
// shared upstream stages are scheduled once and their results shared.
//
// Naming: a node whose ID has the same identity in every variant that has
// it keeps its ID. Otherwise each distinct version of it is named
// ID@label, label being the one of the first variant that has that version
// ("train@top_k=3"); when the label is empty or the name is taken, "#i"
// (the variant's index) is appended. The returned maps give, for each
// variant, its node IDs -> merged node IDs.
func Merge(variants []*Graph, labels []string) (*Graph, []map[string]string, error) {
	if len(labels) != len(variants) {
		return nil, nil, fmt.Errorf("merge: %d variants but %d labels", len(variants), len(labels))
	}
	idents := make([]map[string]string, len(variants))
	seen := map[string]map[string]bool{} // node ID -> identities
	for i, g := range variants {
		ids, err := g.Identities()
		if err != nil {
			return nil, nil, fmt.Errorf("variant %d (%s): %v", i, labels[i], err)
		}
		idents[i] = ids
		for id, ident := range ids {
			if seen[id] == nil {
				seen[id] = map[string]bool{}
			}
			seen[id][ident] = true
		}
	}
	merged := &Graph{}
	taken := map[string]bool{}
	byIdent := map[string]string{} // ID + identity -> merged ID
	maps := make([]map[string]string, len(variants))
	for i, g := range variants {
		maps[i] = map[string]string{}
		for _, n := range g.Nodes {
			ident := n.ID + "\x00" + idents[i][n.ID]
			if m, ok := byIdent[ident]; ok {
				maps[i][n.ID] = m
				continue
			}
			name := n.ID
			if len(seen[n.ID]) > 1 {
				if labels[i] != "" {
					name = n.ID + "@" + labels[i]
				}
				if labels[i] == "" || taken[name] {
					name = fmt.Sprintf("%s#%d", name, i)
				}
			}
			if taken[name] {
				return nil, nil, fmt.Errorf("merge: node name %q would be used twice", name)
			}
			taken[name] = true
			byIdent[ident] = name
			maps[i][n.ID] = name
			c := *n
			c.ID = name
			c.Inputs = make(map[string]Edge, len(n.Inputs))
			for port, e := range n.Inputs {
				c.Inputs[port] = Edge{Node: maps[i][e.Node], Output: e.Output}
			}
			merged.Nodes = append(merged.Nodes, &c)
		}
	}
	merged.Loops = mergeLoops(variants, maps, labels)
	return merged, maps, nil
}
