package graph

import (
	"flag"
	"fmt"
	"os"
	"strings"
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
	t.Parallel()
	ts := testTypes()
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
	t.Parallel()
	ts := testTypes()
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

func TestCanonicalParams(t *testing.T) {
	t.Parallel()
	v := cty.ObjectVal(map[string]cty.Value{
		"z":    cty.NumberIntVal(3),
		"a":    cty.StringVal("x\"y"),
		"lr":   cty.NumberFloatVal(3e-5),
		"tags": cty.ListVal([]cty.Value{cty.StringVal("b"), cty.StringVal("a")}),
		"m":    cty.MapVal(map[string]cty.Value{"k2": cty.True, "k1": cty.False}),
		"n":    cty.NullVal(cty.String),
		"big":  cty.NumberIntVal(1 << 60),
	})
	got, err := CanonicalParams(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":"x\"y","big":1152921504606846976,"lr":3e-05,"m":{"k1":false,"k2":true},"n":null,"tags":["b","a"],"z":3}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// A number parsed at HCL's 512-bit precision and the float64 a stage
	// decodes it into give the same canonical form.
	parsed, err := cty.ParseNumberVal("0.1")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := CanonicalParams(cty.ObjectVal(map[string]cty.Value{"x": parsed}))
	b, _ := CanonicalParams(cty.ObjectVal(map[string]cty.Value{"x": cty.NumberFloatVal(0.1)}))
	if string(a) != string(b) || string(a) != `{"x":0.1}` {
		t.Errorf("0.1: parsed %s, float %s", a, b)
	}
	if _, err := CanonicalParams(cty.ObjectVal(map[string]cty.Value{"u": cty.UnknownVal(cty.String)})); err == nil || !strings.Contains(err.Error(), "u") {
		t.Errorf("unknown value: err = %v", err)
	}
}

func TestKeyComponents(t *testing.T) {
	t.Parallel()
	ts := testTypes()
	base := func() *Node {
		n := node(t, "train", ts["seeded"], map[string]cty.Value{"suffix": cty.StringVal("!")}, map[string]Edge{"in": {Node: "src", Output: "out"}})
		n.Seed = 42
		return n
	}
	digests := map[string]string{"in": strings.Repeat("a", 64)}
	key := func(n *Node, d map[string]string) string {
		k, err := Key(n, d, "cpu")
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key(base(), digests)
	misses := map[string]func(n *Node, d map[string]string) map[string]string{
		"type name": func(n *Node, d map[string]string) map[string]string {
			st := *n.Type
			st.Name = "test.other"
			n.Type = &st
			return d
		},
		"type version": func(n *Node, d map[string]string) map[string]string {
			st := *n.Type
			st.Version++
			n.Type = &st
			return d
		},
		"parameter": func(n *Node, d map[string]string) map[string]string {
			n.Params = params(t, n.Type, map[string]cty.Value{"suffix": cty.StringVal("?")})
			return d
		},
		"input digest": func(n *Node, d map[string]string) map[string]string {
			return map[string]string{"in": strings.Repeat("b", 64)}
		},
		"input port": func(n *Node, d map[string]string) map[string]string {
			return map[string]string{"extra": d["in"]}
		},
		"seed (seeded type)": func(n *Node, d map[string]string) map[string]string {
			n.Seed = 43
			return d
		},
	}
	for name, change := range misses {
		n := base()
		d := change(n, digests)
		if k := key(n, d); k == k0 {
			t.Errorf("changing the %s did not change the key", name)
		}
	}
	hits := map[string]func(n *Node){
		"node ID":            func(n *Node) { n.ID = "renamed" },
		"upstream node name": func(n *Node) { n.Inputs = map[string]Edge{"in": {Node: "other", Output: "out"}} },
		"stage doc":          func(n *Node) { st := *n.Type; st.Doc = "new doc"; n.Type = &st },
	}
	for name, change := range hits {
		n := base()
		change(n)
		if k := key(n, digests); k != k0 {
			t.Errorf("changing the %s changed the key", name)
		}
	}
	// The seed of an unseeded type is not part of its key.
	u := node(t, "u", ts["transform"], nil, nil)
	u.Seed = 1
	ku := key(u, nil)
	u.Seed = 2
	if key(u, nil) != ku {
		t.Error("the seed changed the key of an unseeded type")
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	ts := testTypes()
	g := &Graph{Nodes: []*Node{
		node(t, "a", ts["transform"], nil, map[string]Edge{"in": {Node: "b", Output: "out"}, "bogus": {Node: "a0", Output: "out"}}),
		node(t, "b", ts["source"], nil, nil),
		node(t, "b", ts["source"], nil, nil),
		node(t, "c", ts["transform"], nil, map[string]Edge{"in": {Node: "b", Output: "nope"}}),
		node(t, "d", ts["transform"], nil, nil),
		{ID: "e"},
	}}
	err := g.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{
		`node "a": input "in" comes from "b", which is not an earlier node`,
		`node "a" (test.transform): no input named "bogus"`,
		`node "a": input "bogus" comes from unknown node "a0"`,
		`node "b": duplicate ID`,
		`input "in" reads output "nope", which "b" (test.source) does not have`,
		`node "d" (test.transform): required input "in" is not connected`,
		`node "e": no stage type`,
	} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
}

// The backend family is part of a tensor stage's key and of no other.
func TestKeyBackend(t *testing.T) {
	t.Parallel()
	ts := testTypes()
	tensorType := *ts["seeded"]
	tensorType.Tensor = true
	n := node(t, "train", &tensorType, nil, nil)
	cpu, _ := Key(n, nil, "cpu")
	cuda, _ := Key(n, nil, "cuda")
	def, _ := Key(n, nil, "")
	if cpu == cuda || cpu != def {
		t.Errorf("tensor stage: cpu %s cuda %s default %s", cpu[:8], cuda[:8], def[:8])
	}
	plain := node(t, "src", ts["source"], nil, nil)
	a, _ := Key(plain, nil, "cpu")
	b, _ := Key(plain, nil, "cuda")
	if a != b {
		t.Error("the backend changed the key of a stage that does no tensor work")
	}
}
