package runner

import (
	"fmt"

	"repro/graph"
	"repro/registry"
)

// LoopPlan is where a repeat block with `until` stands given the cache:
// the metric of every round whose metric stage is cached (in order, up to
// the first that is not), and the decision those values give.
type LoopPlan struct {
	Name string
	Rule string
	graph.Decision
	// Err: a cached round's metric could not be read.
	Err error
}

func (l LoopPlan) String() string {
	s := l.Rule + ": " + l.Decision.String()
	if !l.Stopped && l.Err == nil {
		s += fmt.Sprintf("; round %d decides what comes next", len(l.Values)+1)
	}
	if l.Err != nil {
		s += fmt.Sprintf("; %v", l.Err)
	}
	return s
}

// loopPlans tracks the loops of a graph while Plan walks it in order.
type loopPlans []*loopPlan

type loopPlan struct {
	loop   *graph.Loop
	values []*float64 // per round: the cached metric, nil while unknown
	err    error
}

func newLoopPlans(loops []*graph.Loop) loopPlans {
	var out loopPlans
	for _, l := range loops {
		out = append(out, &loopPlan{loop: l, values: make([]*float64, len(l.Rounds))})
	}
	return out
}

func (ls loopPlans) of(id string) (*loopPlan, int) {
	for _, lp := range ls {
		if r, _, ok := lp.loop.Locate(id); ok {
			return lp, r
		}
	}
	return nil, 0
}

// decision is the loop's decision from the leading known rounds, and
// whether round `through`'s metric (and all before it) is known.
func (lp *loopPlan) decision() graph.Decision {
	var vs []float64
	for _, v := range lp.values {
		if v == nil {
			break
		}
		vs = append(vs, *v)
	}
	return lp.loop.Decide(vs)
}

// gate says whether node id is in a round its loop will not run (stopped
// true, with the reason), or waits for a decision not known yet (a
// ReasonUntil reason), or neither (a zero Reason).
func (ls loopPlans) gate(id string) (Reason, bool) {
	lp, r := ls.of(id)
	if lp == nil || r < 2 {
		return Reason{}, false
	}
	d := lp.decision()
	switch {
	case d.Stopped && len(d.Values) < r:
		return Reason{Kind: ReasonUntil, Name: lp.loop.Name,
			New: fmt.Sprintf("stops after round %d (%s); selected round %d", len(d.Values), d.Reason, d.Best)}, true
	case len(d.Values) < r-1:
		return Reason{Kind: ReasonUntil, Name: lp.loop.Name, New: fmt.Sprintf("runs unless it stops after round %d", r-1)}, false
	}
	return Reason{}, false
}

// edge resolves an input edge: from outside a loop into its last round it
// reads the selected round once the decision is known; until then the
// node waits for it (the returned reason).
func (ls loopPlans) edge(id string, e graph.Edge) (graph.Edge, *Reason) {
	lp, r := ls.of(e.Node)
	if lp == nil || r != len(lp.loop.Rounds) {
		return e, nil
	}
	if own, _ := ls.of(id); own == lp {
		return e, nil
	}
	d := lp.decision()
	if !d.Stopped {
		return e, &Reason{Kind: ReasonUntil, Name: lp.loop.Name, New: "its selected round is known once its rounds have run"}
	}
	e.Node = lp.loop.Selected(e.Node, d.Best)
	return e, nil
}

// cached records the metric of a cached metric node.
func (ls loopPlans) cached(id string, outs map[string]registry.Artifact) {
	lp, r := ls.of(id)
	if lp == nil || lp.loop.MetricNode(r) != id {
		return
	}
	a, ok := outs[lp.loop.Output]
	if !ok {
		lp.err = fmt.Errorf("round %d's metric stage %s has no output %q", r, id, lp.loop.Output)
		return
	}
	v, err := registry.MetricAt(a, lp.loop.Path)
	if err != nil {
		lp.err = fmt.Errorf("round %d: %v", r, err)
		return
	}
	lp.values[r-1] = &v
}

func (ls loopPlans) results() []LoopPlan {
	var out []LoopPlan
	for _, lp := range ls {
		out = append(out, LoopPlan{Name: lp.loop.Name, Rule: lp.loop.Describe(), Decision: lp.decision(), Err: lp.err})
	}
	return out
}

// untilReasons keeps the ReasonUntil entries of rs.
func untilReasons(rs []Reason) []Reason {
	var out []Reason
	for _, r := range rs {
		if r.Kind == ReasonUntil {
			out = append(out, r)
		}
	}
	return out
}
