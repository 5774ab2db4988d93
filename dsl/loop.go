package dsl

import (
	"repro/graph"
	"repro/registry"

	"github.com/hashicorp/hcl/v2"
)

// A repeat block may end early:
//
//	repeat "idc" {
//	  rounds = 5                                                  # the most rounds
//	  until  = { metric = stage.idc_val.metrics.r5, patience = 1 } # stop when it stops improving
//	  ...
//	}
//
// metric names a metrics value written in each round by one of the block's
// own stages; after every round the runner reads it, and once `patience`
// rounds in a row (default 1) have not beaten the best round so far, no
// further round runs and repeat.R.last means the best round (InfoCSE's
// Algorithm 1 returns the best model on validation). All `rounds` rounds
// are instances, cached one by one as ever; the evaluation hands the
// runner a graph.Loop that says which nodes each round holds. Which rounds
// run is known only at run time, so repeat.R.round[N] cannot be read from
// outside such a block.

// loopRule is a repeat block's `until` object.
type loopRule struct {
	metric   hcl.Expression
	patience hcl.Expression // nil: 1
	rng      hcl.Range
}

// loopRule decodes `until = { metric = ..., patience = N }`.
func (d *decoder) loopRule(a *hcl.Attribute) *loopRule {
	keys, _ := d.objectKeys(a, "until")
	u := &loopRule{rng: a.Expr.Range()}
	for k, v := range keys {
		switch k {
		case "metric":
			u.metric = v
		case "patience":
			u.patience = v
		default:
			d.errorf(v.Range(), "Invalid until",
				"`until` takes metric (a metrics value of one of the block's stages) and patience (rounds without improvement before stopping), not %q.", k)
		}
	}
	if u.metric == nil {
		d.errorf(a.Expr.Range(), "Invalid until",
			"`until` needs metric, such as until = { metric = stage.score.metrics.r5, patience = 1 }.")
		return nil
	}
	return u
}

// loop evaluates r's until into the graph.Loop of its rounds (nil
// when r has none or an error was reported).
func (e *evaluator) loop(r *repeatBlock) *graph.Loop {
	u := r.loop
	if u == nil || e.roundsFor(r) == 0 {
		return nil
	}
	defer e.enterRepeat(r)() // each.key and each.value of an instance (repeat_foreach.go)
	patience := int64(1)
	if u.patience != nil {
		p, ok := e.int(u.patience, "patience", true)
		if !ok {
			return nil
		}
		patience = p
	}
	t, diags := hcl.AbsTraversalForExpr(u.metric)
	parts, good := steps(t)
	if diags.HasErrors() || !good || t.RootName() != "stage" || len(parts) < 1 {
		e.errorf(u.metric.Range(), "Invalid until metric",
			"metric must name a metrics value of one of repeat %s's stages, such as stage.score.metrics.r5.", r.quoted())
		return nil
	}
	block := -1
	for i, s := range r.stages {
		if s.name == parts[0].name {
			block = i
		}
	}
	if block < 0 {
		e.errorf(u.metric.Range(), "Invalid until metric",
			"metric must be written by one of repeat %s's own stages (%s), so that every round has its value.", r.quoted(), stageList(r))
		return nil
	}
	l := &graph.Loop{Name: r.instanceName(), Metric: block, Patience: int(patience)}
	for round := 1; round <= e.rounds[r]; round++ {
		sc := scope{repeat: r, round: round}
		ref, kind, ok := e.resolve(u.metric, sc, true)
		if !ok {
			return nil
		}
		if kind != registry.KindMetrics || len(ref.Path) == 0 {
			e.errorf(u.metric.Range(), "Invalid until metric",
				"metric must be a number in a metrics output, such as stage.%s.metrics.r5; this is an artifact of kind %s.", parts[0].name, kind)
			return nil
		}
		l.Output, l.Path = ref.Output, ref.Path
		var ids []string
		for _, s := range r.stages {
			ids = append(ids, sc.instance(s))
		}
		l.Rounds = append(l.Rounds, ids)
	}
	return l
}

func stageList(r *repeatBlock) string {
	s := ""
	for i, b := range r.stages {
		if i > 0 {
			s += ", "
		}
		s += b.name
	}
	return s
}

// graph is the variant's graph: its stages and the loops of its repeat
// blocks with until.
func (e *evaluator) graph() *graph.Graph {
	g := graphOf(e.stages)
	for _, it := range e.m.items {
		if it.repeat == nil {
			continue
		}
		for _, r := range e.repeatList(it.repeat) { // each instance of a for_each repeat its own loop
			if l := e.loop(r); l != nil {
				g.Loops = append(g.Loops, l)
			}
		}
	}
	return g
}
