package graph

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

func TestLoopDecide(t *testing.T) {
	t.Parallel()
	l := &Loop{Rounds: make([][]string, 4), Patience: 1}
	for _, c := range []struct {
		vals    []float64
		stopped bool
		best    int
		kept    int // values the decision keeps
	}{
		{nil, false, 0, 0},
		{[]float64{40}, false, 1, 1},
		{[]float64{40, 42}, false, 2, 2},
		{[]float64{40, 39}, true, 1, 2},
		{[]float64{40, 40}, true, 1, 2}, // a tie is no improvement; the earlier round is kept
		{[]float64{40, 39, 50}, true, 1, 2},
		{[]float64{1, 2, 3, 4}, true, 4, 4}, // the most rounds ran
	} {
		d := l.Decide(c.vals)
		if d.Stopped != c.stopped || d.Best != c.best || len(d.Values) != c.kept {
			t.Errorf("Decide(%v) = %+v", c.vals, d)
		}
	}
	l.Patience = 2
	if d := l.Decide([]float64{40, 39, 38}); !d.Stopped || d.Best != 1 || !strings.Contains(d.Reason, "not beaten in 2 rounds") {
		t.Errorf("patience 2: %+v", d)
	}
	if d := l.Decide([]float64{40, 39, 41}); d.Stopped || d.Best != 3 {
		t.Errorf("patience 2, recovered: %+v", d)
	}
	d := l.Decide([]float64{40.5, 39, 38})
	if got := d.String(); got != "by round: 40.50, 39.00, 38.00; stopped after round 3 (round 1 not beaten in 2 rounds); selected round 1" {
		t.Errorf("String() = %q", got)
	}
}

func TestLoopSelectedAndValidate(t *testing.T) {
	t.Parallel()
	ts := testTypes()
	g := &Graph{Nodes: []*Node{node(t, "init", ts["source"], nil, nil)}}
	l := &Loop{Name: "r", Metric: 0, Output: "out", Path: []string{"x"}, Patience: 1}
	prev := "init"
	for _, id := range []string{"r[1].a", "r[2].a", "r[3].a"} {
		g.Nodes = append(g.Nodes, node(t, id, ts["transform"], nil, map[string]Edge{"in": {Node: prev, Output: "out"}}))
		l.Rounds = append(l.Rounds, []string{id})
		prev = id
	}
	g.Nodes = append(g.Nodes, node(t, "eval", ts["transform"], map[string]cty.Value{"suffix": cty.StringVal("?")}, map[string]Edge{"in": {Node: prev, Output: "out"}}))
	g.Loops = []*Loop{l}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if l.Selected("r[3].a", 2) != "r[2].a" || l.Selected("r[2].a", 1) != "r[2].a" || l.Selected("eval", 1) != "eval" {
		t.Error("Selected maps only the last round")
	}
	if g.LoopOf("r[2].a") != l || g.LoopOf("eval") != nil {
		t.Error("LoopOf")
	}
	if got := l.Describe(); got != "until a.out.x stops improving (patience 1, at most 3 rounds)" {
		t.Errorf("Describe() = %q", got)
	}
	// Upstream of the first round alone still takes the whole loop.
	sub, err := g.Upstream("r[1].a")
	if err != nil || !reflect.DeepEqual(sub.IDs(), []string{"init", "r[1].a", "r[2].a", "r[3].a"}) || len(sub.Loops) != 1 {
		t.Errorf("upstream %v %v", sub.IDs(), err)
	}
	bad := &Graph{Nodes: g.Nodes, Loops: []*Loop{{Name: "q", Rounds: [][]string{{"r[1].a"}, {"nope", "r[2].a"}}, Patience: 0}, l}}
	err = bad.Validate()
	for _, want := range []string{`loop "q": patience 0`, `round 2 has 2 nodes`, `node "r[1].a" is in loop "q" and in loop "r"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validate: %v, want %q", err, want)
		}
	}
}

func TestMergeKeepsLoops(t *testing.T) {
	t.Parallel()
	ts := testTypes()
	mk := func(text string) *Graph {
		g := &Graph{Nodes: []*Node{
			node(t, "init", ts["source"], map[string]cty.Value{"text": cty.StringVal(text)}, nil),
			node(t, "r[1].a", ts["transform"], nil, map[string]Edge{"in": {Node: "init", Output: "out"}}),
			node(t, "r[2].a", ts["transform"], nil, map[string]Edge{"in": {Node: "r[1].a", Output: "out"}}),
		}}
		g.Loops = []*Loop{{Name: "r", Rounds: [][]string{{"r[1].a"}, {"r[2].a"}}, Output: "out", Patience: 1}}
		return g
	}
	// Identical variants: one loop.
	m, _, err := Merge([]*Graph{mk("x"), mk("x")}, []string{"a", "b"})
	if err != nil || len(m.Loops) != 1 || m.Loops[0].Name != "r" {
		t.Fatalf("identical: %+v %v", m.Loops, err)
	}
	// Different upstream: each variant's loop over its own renamed nodes.
	m, _, err = Merge([]*Graph{mk("x"), mk("y")}, []string{"a", "b"})
	if err != nil || len(m.Loops) != 2 {
		t.Fatalf("different: %+v %v", m.Loops, err)
	}
	if m.Loops[1].Name != "r@b" || m.Loops[1].Rounds[1][0] != "r[2].a@b" {
		t.Errorf("renamed loop %+v", m.Loops[1])
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}

// LoopOf returns the loop holding node id, if any.
func (g *Graph) LoopOf(id string) *Loop {
	for _, l := range g.Loops {
		if _, _, ok := l.Locate(id); ok {
			return l
		}
	}
	return nil
}
