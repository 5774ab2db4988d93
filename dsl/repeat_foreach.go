package dsl

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// for_each on repeat blocks: one repeat block, several independent
// iterations, Terraform's semantics as for stages (foreach.go):
//
//	repeat "pp" {
//	  for_each = { "1k" = stage.split.labeled, all = stage.split.labeled_all }
//	  rounds   = 4
//	  until    = { metric = stage.pp_val.metrics.r5 }
//	  start    = { model = stage.ft["infocse_${each.key}"].model }
//	  stage "pp_ft" {
//	    uses = "train.headline"
//	    init = previous.model
//	    data = each.value                      # this instance's labelled data
//	  }
//	  ...
//	  next = { model = stage.pp_ft.model }
//	}
//
// The block is one repeat instance per key, named R["KEY"] (pp["1k"]), each
// with its own rounds, its own `until` decision and its own start and next
// values; each.key and each.value are in scope in rounds, until, start,
// next and every inner stage. The values come as for a stage's for_each: a
// list or set of strings, a map or object, stage.NAME of a for_each stage,
// stages and results listed by key ({ sc = stage.simcse.model }).
//
// Names: an inner stage S of instance KEY in round N is R["KEY"][N].S
// (pp["1k"][2].pp_ft) in plan, graph, progress, --target and the report;
// --target R["KEY"] takes every stage of that instance, --target R every
// stage of the block. Results are read as repeat.R["KEY"].last.X and
// repeat.R["KEY"].round[N].X (the key may be computed:
// repeat.pp[each.key].last.test). Overrides: repeat.R.rounds (every
// instance) or repeat.R["KEY"].rounds (one), and, for an inner stage, the
// for_each form of a stage: stage.S.ATTR for every instance and round,
// stage.S["KEY"].ATTR for instance KEY's rounds (profile blocks
// `repeat "pp[\"1k\"]" { rounds = 2 }` and `stage "pp_ft[\"1k\"]" { ... }`).
//
// Keys: an instance's stages have the type, parameters, inputs and seed of
// the longhand block they replace, and names are not in keys (graph.Key),
// so folding near-identical repeat blocks into one re-runs nothing.

// repeatInst marks the per-key copy of a for_each repeat block.
type repeatInst struct {
	key   string
	name  string    // pp["1k"]
	each  cty.Value // { key = KEY, value = ELEMENT }
	block *repeatBlock
}

// instanceName is r's name in instance names and messages: the block's,
// or R["KEY"] for an instance of a for_each repeat.
func (r *repeatBlock) instanceName() string {
	if r.inst != nil {
		return r.inst.name
	}
	return r.name
}

// origin is the declared block behind r (r itself unless r is an instance).
func (r *repeatBlock) origin() *repeatBlock {
	if r.inst != nil {
		return r.inst.block
	}
	return r
}

// stage is r's inner stage block of that name (r's own copy for an instance).
func (r *repeatBlock) stage(name string) *stageBlock {
	for _, s := range r.stages {
		if s.name == name {
			return s
		}
	}
	return nil
}

// keyed reports whether s has instance keys: a for_each stage, or a stage
// inside a for_each repeat (one instance per repeat key).
func (s *stageBlock) keyed() bool {
	return s.forEach != nil || (s.repeat != nil && s.repeat.forEach != nil)
}

// repeatState holds one evaluation's repeat instances.
type repeatState struct {
	inst      map[*repeatBlock][]*repeatBlock
	bad       map[*repeatBlock]bool
	expanding []*repeatBlock // to report for_each loops
}

// ---- decoding ----

// profileRepeat finds the repeat a profile's repeat block changes: a
// repeat's name, or R["KEY"] for one instance of a for_each repeat.
func (d *decoder) profileRepeat(profile string, sb *hcl.Block) (*repeatBlock, string, bool) {
	label := sb.Labels[0]
	if r, ok := d.m.repeats[label]; ok {
		return r, "", true
	}
	name, key, isInst := parseInstance(label)
	if !isInst {
		name = label
	}
	r, ok := d.m.repeats[name]
	switch {
	case !ok:
		d.errorf(sb.LabelRanges[0], "Unknown repeat block",
			"Profile %q changes repeat %q, which is not declared.%s", profile, name, Suggest(name, slices.Sorted(maps.Keys(d.m.repeats))))
		return nil, "", false
	case r.forEach == nil:
		d.errorf(sb.LabelRanges[0], "Invalid repeat label",
			"Repeat %q has no for_each, so it has no instance %q; write repeat %q.", name, key, name)
		return nil, "", false
	}
	return r, key, true
}

// repeatInstanceTarget resolves repeat.R["KEY"].rounds; handled is false
// for every other path.
func (d *decoder) repeatInstanceTarget(path string, rng hcl.Range) (t target, ok, handled bool) {
	if !strings.HasPrefix(path, "repeat.") || !strings.Contains(path, "[") {
		return target{}, false, false
	}
	tr, diags := hclsyntax.ParseTraversalAbs([]byte(path), rng.Filename, rng.Start)
	var name, attr hcl.TraverseAttr
	var idx hcl.TraverseIndex
	good := !diags.HasErrors() && len(tr) == 4
	if good {
		var ok1, ok2, ok3 bool
		name, ok1 = tr[1].(hcl.TraverseAttr)
		idx, ok2 = tr[2].(hcl.TraverseIndex)
		attr, ok3 = tr[3].(hcl.TraverseAttr)
		good = ok1 && ok2 && ok3 && !idx.Key.IsNull() && idx.Key.Type().Equals(cty.String) && attr.Name == "rounds"
	}
	if !good {
		d.errorf(rng, "Invalid override path",
			"%q: the path of one repeat instance is repeat.NAME[\"KEY\"].rounds.", path)
		return target{}, false, true
	}
	r, found := d.m.repeats[name.Name]
	switch {
	case !found:
		d.errorf(rng, "Invalid override path", "%q: there is no repeat block %q.%s", path, name.Name, Suggest(name.Name, slices.Sorted(maps.Keys(d.m.repeats))))
		return target{}, false, true
	case r.forEach == nil:
		d.errorf(rng, "Invalid override path",
			"%q: repeat %q has no for_each, so it has no instance %q; write repeat.%s.rounds.", path, r.name, idx.Key.AsString(), r.name)
		return target{}, false, true
	}
	key := idx.Key.AsString()
	return target{kind: targetRounds, repeat: r, key: key, path: "repeat." + instName(r.name, key) + ".rounds"}, true, true
}

// ---- evaluation ----

func (e *evaluator) repeatState() *repeatState {
	if e.reps == nil {
		e.reps = &repeatState{inst: map[*repeatBlock][]*repeatBlock{}, bad: map[*repeatBlock]bool{}}
	}
	return e.reps
}

// repeatInstances is r's instances: r itself without for_each, else one
// copy per key, made once per evaluation; ok is false after an error.
func (e *evaluator) repeatInstances(r *repeatBlock) ([]*repeatBlock, bool) {
	if r.forEach == nil {
		return []*repeatBlock{r}, true
	}
	st := e.repeatState()
	if insts, done := st.inst[r]; done {
		return insts, !st.bad[r]
	}
	if i := slices.Index(st.expanding, r); i >= 0 {
		var chain []string
		for _, b := range st.expanding[i:] {
			chain = append(chain, b.name)
		}
		e.errorf(r.forEach.Range(), "Circular for_each",
			"The for_each of repeat %q reads its own instances: %s -> %s.", r.name, strings.Join(chain, " -> "), r.name)
		return nil, false
	}
	st.expanding = append(st.expanding, r)
	restore := e.enterRepeat(nil) // the for_each is read at top level
	v, ok := e.forEachValue(r.forEach)
	var keys []string
	var vals map[string]cty.Value
	if ok {
		keys, vals, ok = e.forEachKeys(r.forEach, v)
	}
	restore()
	st.expanding = st.expanding[:len(st.expanding)-1]
	var insts []*repeatBlock
	for _, k := range keys {
		c := new(repeatBlock)
		*c = *r
		c.inst = &repeatInst{key: k, name: instName(r.name, k), block: r,
			each: cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(k), "value": vals[k]})}
		c.stages = make([]*stageBlock, len(r.stages))
		for i, s := range r.stages {
			sc := new(stageBlock)
			*sc = *s
			sc.repeat = c
			c.stages[i] = sc
		}
		insts = append(insts, c)
	}
	if !ok {
		insts = nil
	}
	st.inst[r], st.bad[r] = insts, !ok
	return insts, ok
}

// repeatList is r's instances, nil after an error (reported).
func (e *evaluator) repeatList(r *repeatBlock) []*repeatBlock {
	insts, _ := e.repeatInstances(r)
	return insts
}

// enterRepeat sets the evaluation context for expressions of repeat
// instance r (its rounds, until, start, next and inner stages): the file's
// variables and locals, with each.key and each.value of r's key when r is
// an instance of a for_each repeat, and no each otherwise (an enclosing
// stage's each does not reach into a repeat). It returns the restore.
func (e *evaluator) enterRepeat(r *repeatBlock) func() {
	saved := e.ctx
	root := saved
	for root.Parent() != nil {
		root = root.Parent()
	}
	e.ctx = root
	if r != nil && r.inst != nil {
		e.ctx = root.NewChild()
		e.ctx.Variables = map[string]cty.Value{"each": r.inst.each}
	}
	return func() { e.ctx = saved }
}

// roundsFor is the number of rounds of repeat instance r, evaluated on
// first use (0 after an error).
func (e *evaluator) roundsFor(r *repeatBlock) int {
	if n, done := e.rounds[r]; done {
		return n
	}
	e.rounds[r] = 0
	restore := e.enterRepeat(r)
	e.roundsOf(r)
	restore()
	return e.rounds[r]
}

// roundsOvr is the override of r's rounds: the instance's own
// (repeat.R["KEY"].rounds), else the block's (repeat.R.rounds).
func (e *evaluator) roundsOvr(r *repeatBlock) (override, bool) {
	if r.inst != nil {
		if o, ok := e.ovr["repeat."+r.inst.name+".rounds"]; ok {
			return o, true
		}
	}
	o, ok := e.ovr["repeat."+r.name+".rounds"]
	return o, ok
}

// expandRepeats makes the instances of every for_each repeat and their
// rounds, then checks that each override of one instance (its rounds, an
// inner stage's attribute) names an instance that exists.
func (e *evaluator) expandRepeats() {
	for _, it := range e.m.items {
		if r := it.repeat; r != nil && r.forEach != nil {
			for _, c := range e.repeatList(r) {
				e.roundsFor(c)
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(e.ovr)) {
		o := e.ovr[p]
		r, what := o.target.repeat, ""
		if s := o.target.stage; s != nil && s.repeat != nil {
			r, what = s.repeat, fmt.Sprintf("stage %q runs in repeat %q, which", s.name, s.repeat.name)
		} else if r != nil {
			what = fmt.Sprintf("repeat %q", r.name)
		}
		if r == nil || o.target.key == "" {
			continue
		}
		insts, ok := e.repeatInstances(r)
		if !ok || slices.ContainsFunc(insts, func(c *repeatBlock) bool { return c.inst.key == o.target.key }) {
			continue
		}
		e.errorf(o.rng, "No such instance", "%s: %s has no instance %q; its instances: %s.%s",
			o.target.path, what, o.target.key, instanceList(insts), Suggest(o.target.key, instanceKeys(insts)))
	}
}

// instantiateRepeat instantiates every round of every instance of r, with
// each in scope for an instance; diagnostics raised for an instance name it.
func (e *evaluator) instantiateRepeat(r *repeatBlock) {
	for _, c := range e.repeatList(r) {
		restore := e.enterRepeat(c)
		n := len(e.diags)
		for round := 1; round <= e.roundsFor(c); round++ {
			for _, s := range c.stages {
				e.instantiate(s, scope{repeat: c, round: round})
			}
		}
		e.checkCarry(c)
		if c.inst != nil {
			for _, d := range e.diags[n:] {
				if !strings.HasPrefix(d.Detail, "In repeat ") {
					d.Detail = fmt.Sprintf("In repeat %s: %s", c.inst.name, d.Detail)
				}
			}
		}
		restore()
	}
}

// pickRepeat resolves the instance part of a reference to repeat r:
// parts[0] is its name, parts[1] (for a for_each repeat) the key. It
// returns the instance and the parts with the key removed.
func (e *evaluator) pickRepeat(r *repeatBlock, parts []step, rng hcl.Range) (*repeatBlock, []step, bool) {
	if r.forEach == nil {
		if len(parts) > 1 && parts[1].key {
			e.errorf(parts[1].rng, "Not a for_each repeat",
				"Repeat %q has no for_each, so it has no instance %q; write repeat.%s.last.NAME.", r.name, parts[1].name, r.name)
			return nil, nil, false
		}
		return r, parts, true
	}
	insts, ok := e.repeatInstances(r)
	if !ok {
		return nil, nil, false // its for_each was reported
	}
	if len(parts) < 2 || !parts[1].key {
		example := "KEY"
		if len(insts) > 0 {
			example = insts[0].inst.key
		}
		e.errorf(rng, "Missing instance key",
			"Repeat %q has for_each: name one instance, such as repeat.%s.last.NAME; its instances: %s.",
			r.name, instName(r.name, example), instanceList(insts))
		return nil, nil, false
	}
	for _, c := range insts {
		if c.inst.key == parts[1].name {
			return c, append([]step{parts[0]}, parts[2:]...), true
		}
	}
	e.errorf(parts[1].rng, "No such instance",
		"Repeat %q has no instance %q; its instances: %s.%s", r.name, parts[1].name, instanceList(insts),
		Suggest(parts[1].name, instanceKeys(insts)))
	return nil, nil, false
}

// intoRepeat explains how to read the results of r from outside it.
func intoRepeat(r *repeatBlock) string {
	name := r.name
	if r.forEach != nil {
		name = instName(r.name, "KEY")
	}
	return fmt.Sprintf("refer to a round's result with repeat.%s.last.NAME or repeat.%s.round[N].NAME (NAME one of: %s)",
		name, name, strings.Join(r.nextOrder, ", "))
}

// repeatInstancesOf lists the instances of repeat name in v: every stage
// of the block (name) or of one instance (R["KEY"], also written R[KEY]).
func (v *Variant) repeatInstancesOf(name string) []string {
	var out []string
	for _, s := range v.Stages {
		if s.Repeat == "" {
			continue
		}
		switch {
		case s.Repeat == name,
			s.Key != "" && (instName(s.Repeat, s.Key) == name || s.Repeat+"["+s.Key+"]" == name):
			out = append(out, s.Name)
		}
	}
	return out
}

// quoted is r's name for messages: "NAME", or NAME["KEY"] for an instance.
func (r *repeatBlock) quoted() string {
	if r.inst != nil {
		return r.inst.name
	}
	return strconv.Quote(r.name)
}
