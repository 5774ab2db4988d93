package runner

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"repro/registry"

	"github.com/zclconf/go-cty/cty"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// grid returns the variant graphs of an ablation over the transform's
// suffix: src is shared, mid/end differ.
func grid(t *testing.T, ts map[string]*registry.StageType, suffixes ...string) []*Graph {
	var gs []*Graph
	for _, s := range suffixes {
		gs = append(gs, &Graph{Nodes: []*Node{
			node(t, "src", ts["source"], nil, nil),
			node(t, "mid", ts["transform"], map[string]cty.Value{"suffix": cty.StringVal(s)}, map[string]Edge{"in": {Node: "src", Output: "out"}}),
			node(t, "idc[2].end", ts["transform"], nil, map[string]Edge{"in": {Node: "mid", Output: "out"}, "extra": {Node: "src", Output: "out"}}),
		}})
	}
	return gs
}

func TestMergeSharesIdenticalNodes(t *testing.T) {
	cnt := newCounter("")
	ts := testTypes(cnt)
	vs := grid(t, ts, "1", "2", "3")
	vs[2].Nodes = append(vs[2].Nodes, node(t, "extra_eval", ts["transform"], nil, map[string]Edge{"in": {Node: "src", Output: "out"}}))
	g, maps, err := Merge(vs, []string{"suffix=1", "suffix=2", "suffix=3"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range g.Nodes {
		ids = append(ids, n.ID)
	}
	want := "[src mid@suffix=1 idc[2].end@suffix=1 mid@suffix=2 idc[2].end@suffix=2 mid@suffix=3 idc[2].end@suffix=3 extra_eval]"
	if fmt.Sprint(ids) != want {
		t.Errorf("merged IDs %v\nwant %s", ids, want)
	}
	if maps[1]["mid"] != "mid@suffix=2" || maps[2]["src"] != "src" || maps[2]["extra_eval"] != "extra_eval" {
		t.Errorf("maps %v", maps)
	}
	if e := g.Node("idc[2].end@suffix=3").Inputs["in"]; e.Node != "mid@suffix=3" {
		t.Errorf("end@3 reads %v", e)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	// The input graphs are untouched.
	if vs[1].Nodes[1].ID != "mid" || vs[1].Nodes[2].Inputs["in"].Node != "mid" {
		t.Error("Merge modified its input")
	}
	// Running the merged grid runs the shared source once.
	c := openTemp(t)
	if _, err := c.Run(context.Background(), g, Options{}); err != nil {
		t.Fatal(err)
	}
	if cnt.get("src") != 1 || cnt.total() != 8 {
		t.Errorf("executions %v", cnt.n)
	}
	// Identity follows content, not names.
	id1, _ := vs[0].Identities()
	id2, _ := grid(t, ts, "1")[0].Identities()
	if id1["idc[2].end"] != id2["idc[2].end"] || id1["mid"] == mustIdent(t, vs[1])["mid"] {
		t.Error("identities do not follow content")
	}
	if _, _, err := Merge(vs, []string{"x"}); err == nil {
		t.Error("label count mismatch accepted")
	}
	// Empty labels fall back to the variant index.
	g, _, err = Merge(grid(t, ts, "1", "2"), []string{"", ""})
	if err != nil || g.Nodes[1].ID != "mid#0" || g.Nodes[3].ID != "mid#1" {
		t.Errorf("empty labels: %v", err)
	}
}

func mustIdent(t *testing.T, g *Graph) map[string]string {
	ids, err := g.Identities()
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestRender(t *testing.T) {
	ts := testTypes(newCounter(""))
	g, _, err := Merge(grid(t, ts, "1", "2"), []string{"suffix=1", `suffix="2"`})
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{"graph.dot": g.Dot(), "graph.mmd": g.Mermaid()} {
		path := "testdata/" + name
		if *update {
			os.WriteFile(path, []byte(got), 0o644)
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs from %s:\n%s", name, path, got)
		}
		// Deterministic: map iteration order must not leak.
		for i := 0; i < 20; i++ {
			again := g.Dot()
			if name == "graph.mmd" {
				again = g.Mermaid()
			}
			if again != got {
				t.Fatalf("%s not deterministic", name)
			}
		}
	}
}
