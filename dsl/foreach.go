package dsl

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// for_each on stage blocks, with Terraform's semantics:
//
//	stage "train" {
//	  for_each = { sts = 3e-5, nli = 5e-5 }    # or ["sts", "nli"], a set, local.X, var.X
//	  uses          = "train.simcse_unsup"
//	  data          = stage.corpus[each.key].sentences
//	  learning_rate = each.value
//	}
//	stage "eval" {
//	  for_each = stage.train                   # every instance of train
//	  uses     = "evaluate.sts"
//	  encoder  = each.value.model              # that instance's output
//	}
//
// A block with for_each is one stage instance per element, named
// NAME["KEY"] (train["sts"]) in references, plan, graph, progress and the
// report. A list or set of strings gives one instance per string (each.key
// and each.value are the string); a map or object one per key (each.value
// the element). Instances come in the order an object constructor or a list
// writes them (directly or through local.NAME), else in key order.
// `for_each = stage.NAME` (or any expression over it, such as
// { for k, v in stage.train : k => v if k != "base" }) iterates over the
// instances of another for_each stage: each.key is the instance's key and
// each.value the object of its outputs, usable as inputs
// (each.value.model) and, in expect blocks, as metrics
// (each.value.metrics.avg). Stages without for_each are listed by key,
// { bert = stage.bert, roberta = stage.roberta } (or stage.NAME.OUTPUT,
// stage.NAME["KEY"] as an element's whole value): the keys are written
// out and each.value holds that stage's outputs, as for an instance. A
// repeat's result or a module's output is listed the same way, { idc =
// repeat.idc.last.model, mini = module.pretrained.bert_4.model }, and
// each.value is then that artifact.
// Anything else about a stage -- its outputs as keys, a stage without
// for_each as the whole for_each -- is known only once it runs, so for_each
// cannot read it: the instances must be known when the file loads.
//
// References: stage.NAME["KEY"].OUTPUT names one instance; the key may be
// computed (stage.corpus[each.key].sentences). stage.NAME.OUTPUT of a
// for_each stage, an unknown key and a key on a stage without for_each are
// errors that list the instances. Override paths take the same form:
// --set 'stage.train["sts"].learning_rate=1e-5', ablation vary keys and
// variant sets ("stage.train[\"sts\"].epochs"), --target 'train["sts"]' (and
// --target train for every instance).
//
// Profiles: a profile's `stage "train" { ... }` applies to every instance
// (each.key and each.value are in scope), and may replace for_each itself
// (a mini profile that trains fewer models); `stage "train[\"sts\"]" { ... }`
// applies to one instance. An instance's own override wins over the
// block's, whichever is written later.
//
// Optional stages: `for_each = var.x == "" ? [] : ["x"]` has no instance
// while the variable is unset (an expect block's `var.x == "" ? {} : {...}`
// no cell), so a stage that needs a -var (a released model) is absent
// rather than refused; keyOrder follows the branch taken.
//
// Keys: a stage's cache key holds its type, parameters, inputs and seed,
// never its name (graph.Key), so an instance with the same type and
// parameters as an old single stage keeps that stage's key: rewriting
// repeated blocks as one for_each block re-runs nothing.

// instance marks the per-key copy of a for_each stage block.
type instance struct {
	key   string
	name  string    // train["sts"]
	each  cty.Value // { key = KEY, value = ELEMENT }
	block *stageBlock
}

// instName is the name of instance key of block name: name["key"].
func instName(name, key string) string { return name + "[" + strconv.Quote(key) + "]" }

// instanceName is s's name in references and instance names: the block's,
// or NAME["KEY"] for a for_each instance.
func (s *stageBlock) instanceName() string {
	if s.inst != nil {
		return s.inst.name
	}
	return s.name
}

// forEachState holds one evaluation's for_each instances.
type forEachState struct {
	inst      map[*stageBlock][]*stageBlock // instances in order, per block
	bad       map[*stageBlock]bool          // for_each failed (reported)
	expanding []*stageBlock                 // the blocks being expanded, to report loops
}

func (e *evaluator) forEachState() *forEachState {
	if e.fe == nil {
		e.fe = &forEachState{inst: map[*stageBlock][]*stageBlock{}, bad: map[*stageBlock]bool{}}
	}
	return e.fe
}

// ---- decoding ----

// takeForEach removes for_each from a stage block's attributes and returns
// its expression (nil when there is none, or inside a repeat block, which
// is reported).
func (d *decoder) takeForEach(attrs hcl.Attributes, rep *repeatBlock) hcl.Expression {
	a, ok := attrs["for_each"]
	if !ok {
		return nil
	}
	delete(attrs, "for_each")
	if rep != nil {
		d.errorf(a.NameRange, "for_each inside a repeat block",
			"Repeat %q already makes one instance of its stages per round; for_each is for top-level stage blocks.", rep.name)
		return nil
	}
	return a.Expr
}

// forEachTarget is the override target stage.S.for_each, which only a
// stage declared with for_each has: adding it would rename the stage.
func (d *decoder) forEachTarget(s *stageBlock, path string, rng hcl.Range) (target, bool) {
	if s.forEach == nil {
		d.errorf(rng, "Invalid override",
			"%s: stage %q has no for_each; only a stage declared with for_each can have it changed (adding one would rename the stage's instances).", path, s.name)
		return target{}, false
	}
	return target{kind: targetStage, stage: s, attr: "for_each", path: path}, true
}

// onInstance narrows a stage target (stage.S.ATTR, stage.S.resources.X) to
// the instance of S with key: stage.S["KEY"].ATTR.
func (d *decoder) onInstance(t target, key string, rng hcl.Range) (target, bool) {
	s := t.stage
	if s == nil {
		return t, true
	}
	if !s.keyed() { // a for_each stage, or a stage inside a for_each repeat (repeat_foreach.go)
		d.errorf(rng, "Invalid override path",
			"%s: stage %q has no for_each, so it has no instance %q; write %s.", instPath(t.path, s, key), s.name, key, t.path)
		return target{}, false
	}
	if t.kind == targetStage && t.attr == "for_each" {
		d.errorf(rng, "Invalid override path",
			"for_each belongs to the whole stage: write stage.%s.for_each, not the path of one instance.", s.name)
		return target{}, false
	}
	t.path = instPath(t.path, s, key)
	t.key = key
	return t, true
}

// instPath rewrites stage.NAME.REST as stage.NAME["KEY"].REST.
func instPath(path string, s *stageBlock, key string) string {
	return "stage." + instName(s.name, key) + strings.TrimPrefix(path, "stage."+s.name)
}

// instanceTarget resolves an override path that names an instance,
// stage.NAME["KEY"].ATTRIBUTE or stage.NAME["KEY"].resources.ATTRIBUTE;
// handled is false for every other path (target resolves those).
func (d *decoder) instanceTarget(path string, rng hcl.Range) (t target, ok, handled bool) {
	if !strings.HasPrefix(path, "stage.") || !strings.Contains(path, "[") {
		return target{}, false, false
	}
	bad := func() (target, bool, bool) {
		d.errorf(rng, "Invalid override path",
			"%q: the path of one instance is stage.NAME[\"KEY\"].ATTRIBUTE or stage.NAME[\"KEY\"].resources.ATTRIBUTE.", path)
		return target{}, false, true
	}
	tr, diags := hclsyntax.ParseTraversalAbs([]byte(path), rng.Filename, rng.Start)
	if diags.HasErrors() || len(tr) < 4 || len(tr) > 5 {
		return bad()
	}
	name, ok1 := tr[1].(hcl.TraverseAttr)
	idx, ok2 := tr[2].(hcl.TraverseIndex)
	attr, ok3 := tr[3].(hcl.TraverseAttr)
	if !ok1 || !ok2 || !ok3 || idx.Key.IsNull() || !idx.Key.Type().Equals(cty.String) {
		return bad()
	}
	s, found := d.m.stages[name.Name]
	if !found {
		d.errorf(rng, "Invalid override path", "%q: there is no stage %q.%s", path, name.Name, Suggest(name.Name, d.stageNames()))
		return target{}, false, true
	}
	switch {
	case len(tr) == 4:
		t, ok = d.stageTarget(s, attr.Name, rng)
	case attr.Name == "resources":
		res, isAttr := tr[4].(hcl.TraverseAttr)
		if !isAttr {
			return bad()
		}
		t, ok = d.resourceTarget(s, res.Name, rng)
	default:
		return bad()
	}
	if !ok {
		return target{}, false, true
	}
	t, ok = d.onInstance(t, idx.Key.AsString(), rng)
	return t, ok, true
}

// pathIndex appends a string index step of an override path written as a
// traversal (stage.train["sts"].epochs) to the stage name before it.
func pathIndex(parts []string, s hcl.TraverseIndex) ([]string, bool) {
	stage := len(parts) == 2 && (parts[0] == "stage" || parts[0] == "repeat")
	inModule := len(parts) >= 3 && len(parts)%2 == 1 && parts[0] == "module" // module.M[.module.N].STAGE (module_paths.go)
	if !stage && !inModule || s.Key.IsNull() || !s.Key.Type().Equals(cty.String) {
		return parts, false
	}
	parts[len(parts)-1] = instName(parts[len(parts)-1], s.Key.AsString())
	return parts, true
}

// profileStage finds the stage a profile's stage block changes: a stage
// block's name, or NAME["KEY"] for one instance of a for_each stage.
func (d *decoder) profileStage(profile string, sb *hcl.Block) (*stageBlock, string, bool) {
	label := sb.Labels[0]
	if s, ok := d.m.stages[label]; ok {
		return s, "", true
	}
	if name, key, ok := parseInstance(label); ok {
		s, found := d.m.stages[name]
		switch {
		case !found:
			d.errorf(sb.LabelRanges[0], "Unknown stage",
				"Profile %q changes stage %q, which is not declared.%s", profile, name, Suggest(name, d.stageNames()))
			return nil, "", false
		case !s.keyed():
			d.errorf(sb.LabelRanges[0], "Invalid stage label",
				"Stage %q has no for_each, so it has no instance %q; write stage %q.", name, key, name)
			return nil, "", false
		}
		return s, key, true
	}
	d.errorf(sb.LabelRanges[0], "Unknown stage",
		"Profile %q changes stage %q, which is not declared.%s", profile, label, Suggest(label, d.stageNames()))
	return nil, "", false
}

// parseInstance reads NAME["KEY"].
func parseInstance(text string) (name, key string, ok bool) {
	if !strings.HasSuffix(text, "]") || !strings.Contains(text, "[") {
		return "", "", false
	}
	tr, diags := hclsyntax.ParseTraversalAbs([]byte(text), "", hcl.InitialPos)
	if diags.HasErrors() || len(tr) != 2 {
		return "", "", false
	}
	idx, ok := tr[1].(hcl.TraverseIndex)
	if !ok || idx.Key.IsNull() || !idx.Key.Type().Equals(cty.String) {
		return "", "", false
	}
	return tr.RootName(), idx.Key.AsString(), true
}

// pathEnd is the index of the '=' that ends a --set path: the first one
// outside brackets and quotes (an instance key may hold '='), or -1.
func pathEnd(text string) int {
	depth, inQuote, escaped := 0, false, false
	for i, r := range text {
		switch {
		case inQuote:
			switch {
			case escaped:
				escaped = false
			case r == '\\':
				escaped = true
			case r == '"':
				inQuote = false
			}
		case r == '"':
			inQuote = true
		case r == '[':
			depth++
		case r == ']':
			if depth > 0 {
				depth--
			}
		case r == '=' && depth == 0:
			return i
		}
	}
	return -1
}

// ---- evaluation ----

// stageOvr returns the override of stage s's attribute path suffix
// ("learning_rate", "seed", "resources.cpus"): the instance's own, else
// the block's.
func (e *evaluator) stageOvr(s *stageBlock, suffix string) (override, bool) {
	if s.inst != nil {
		if o, ok := e.ovr["stage."+s.inst.name+"."+suffix]; ok {
			return o, true
		}
	}
	if s.repeat != nil && s.repeat.inst != nil { // stage.S["KEY"] inside instance KEY of a repeat
		if o, ok := e.ovr["stage."+instName(s.name, s.repeat.inst.key)+"."+suffix]; ok {
			return o, true
		}
	}
	o, ok := e.ovr["stage."+s.name+"."+suffix]
	return o, ok
}

// expandAll makes the instances of every top-level for_each stage, then
// checks that each override of one instance names an instance that exists.
func (e *evaluator) expandAll() {
	for _, it := range e.m.items {
		if s := it.stage; s != nil && s.forEach != nil {
			e.expand(s)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(e.ovr)) {
		o := e.ovr[p]
		s := o.target.stage
		if o.target.key == "" || s == nil || s.repeat != nil { // a repeat's: expandRepeats
			continue
		}
		insts, ok := e.expand(s)
		if !ok || e.instanceByKey(insts, o.target.key) != nil {
			continue
		}
		e.errorf(o.rng, "No such instance", "%s: stage %q has no instance %q; its instances: %s.%s",
			o.target.path, s.name, o.target.key, instanceList(insts), Suggest(o.target.key, instanceKeys(insts)))
	}
}

// expand evaluates s's for_each (the override's, else the block's) into
// its instances, once per evaluation; ok is false after an error.
func (e *evaluator) expand(s *stageBlock) ([]*stageBlock, bool) {
	st := e.forEachState()
	if insts, done := st.inst[s]; done {
		return insts, !st.bad[s]
	}
	expr := s.forEach
	o, overridden := e.stageOvr(s, "for_each")
	if overridden {
		expr = o.expr
	}
	if i := slices.Index(st.expanding, s); i >= 0 {
		var chain []string
		for _, b := range st.expanding[i:] {
			chain = append(chain, b.name)
		}
		e.errorf(expr.Range(), "Circular for_each",
			"The for_each expressions iterate over each other's instances in a loop: %s -> %s.", strings.Join(chain, " -> "), s.name)
		return nil, false
	}
	st.expanding = append(st.expanding, s)
	v, ok := e.forEachValue(expr)
	st.expanding = st.expanding[:len(st.expanding)-1]
	var keys []string
	var vals map[string]cty.Value
	if ok {
		keys, vals, ok = e.forEachKeys(expr, v)
	}
	if ok && overridden && o.label && !holdsOutput(v) {
		e.labels[o.target.path] = v
	}
	var insts []*stageBlock
	for _, k := range keys {
		c := *s
		c.inst = &instance{key: k, name: instName(s.name, k), block: s,
			each: cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(k), "value": vals[k]})}
		insts = append(insts, &c)
	}
	if !ok {
		insts = nil
	}
	st.inst[s], st.bad[s] = insts, !ok
	return insts, ok
}

// stageRefs is an expression whose stage.NAME references, and the
// repeat.* and module.* references listed as element values, are left out
// of Variables, so that checkVars checks the rest of a for_each expression
// (and refuses any other repeat.* or module.* reference).
type stageRefs struct {
	hcl.Expression
	listed map[hcl.Range]bool
}

func (x stageRefs) Variables() []hcl.Traversal {
	var out []hcl.Traversal
	for _, t := range x.Expression.Variables() {
		switch root := t.RootName(); {
		case root == "stage":
		case (root == "repeat" || root == "module") && x.listed[t.SourceRange()]:
		default:
			out = append(out, t)
		}
	}
	return out
}

// forEachValue evaluates a for_each expression (of a stage or an expect
// block): var., local., functions, and stage.NAME for a for_each stage NAME,
// which is the object of NAME's instances (each the object of its outputs).
// A stage listed as an element's value ({ bert = stage.bert }) is the
// object of its outputs, and a repeat's or a module's result listed so
// ({ infocse = repeat.infocse.last.model, mini = module.pretrained.bert_4.model })
// that artifact. Anything else about a stage is known only once it runs,
// and is refused.
func (e *evaluator) forEachValue(expr hcl.Expression) (cty.Value, bool) {
	stages := map[string]cty.Value{}
	ok := true
	listed := listedStages(expr)
	results := map[string]*refTree{} // listed repeat.* and module.* results, by root
	for _, t := range expr.Variables() {
		if root := t.RootName(); (root == "repeat" || root == "module") && listed[t.SourceRange()] {
			if !e.listedResult(t, results) {
				ok = false
			}
			continue
		}
		if t.RootName() != "stage" {
			continue
		}
		name, isAttr := traverseAttr(t)
		s := e.m.stages[name]
		switch {
		case !isAttr:
			e.errorf(t.SourceRange(), "Invalid reference", "Write stage.NAME.")
			ok = false
		case s == nil:
			e.errorf(t.SourceRange(), "Reference to undeclared stage",
				"There is no stage %q.%s", name, Suggest(name, e.visibleStages(scope{})))
			ok = false
		case s.forEach == nil && s.repeat == nil && listed[t.SourceRange()]:
			// { bert = stage.bert }: a stage listed as an element's value,
			// the object of its outputs (the keys are the constructor's).
			stages[name] = e.outputsOf(s)
		case s.forEach == nil || (len(t) > 2 && !listed[t.SourceRange()]):
			e.errorf(t.SourceRange(), "Reference not allowed here",
				"for_each cannot refer to stage outputs: the instances must be known when the file loads, and %s is written by a run. Iterate over values (a list or set of strings, a map), over the instances of a stage with for_each (stage.NAME), or over stages listed by key ({ bert = stage.bert }).",
				traversalString(t))
			ok = false
		default:
			insts, good := e.expand(s)
			if !good {
				ok = false
				continue
			}
			m := map[string]cty.Value{}
			for _, c := range insts {
				m[c.inst.key] = e.outputsOf(c)
			}
			stages[name] = cty.ObjectVal(m)
		}
	}
	if !e.checkVars(stageRefs{expr, listed}, "for_each") || !ok {
		return cty.NilVal, false
	}
	ctx := e.ctx
	if len(stages)+len(results) > 0 {
		ctx = e.ctx.NewChild()
		ctx.Variables = map[string]cty.Value{}
		if len(stages) > 0 {
			ctx.Variables["stage"] = cty.ObjectVal(stages)
		}
		for root, tree := range results {
			ctx.Variables[root] = tree.value()
		}
	}
	v, diags := expr.Value(ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsKnown() {
		return cty.NilVal, false
	}
	return v, true
}

// listedResult resolves t, a repeat.* or module.* reference listed as an
// element's value in a for_each expression (repeat.idc.last.model,
// module.pretrained.bert_4.model), and adds the artifact it names to
// results under its root, so that evaluating the expression gives that
// element the artifact as its value. It reports an error and returns false
// when t names none.
func (e *evaluator) listedResult(t hcl.Traversal, results map[string]*refTree) bool {
	parts, good := steps(t)
	if !good {
		e.errorf(t.SourceRange(), "Invalid reference", "A reference is %s.", refForms)
		return false
	}
	ref, kind, good := e.resolveTrav(t.RootName(), parts, t.SourceRange(), scope{})
	if !good {
		return false
	}
	tree := results[t.RootName()]
	if tree == nil {
		tree = &refTree{}
		results[t.RootName()] = tree
	}
	for _, p := range parts {
		tree = tree.child(p)
	}
	v := cty.CapsuleVal(outputType, &instOutput{ref: ref, kind: kind})
	tree.leaf = &v
	return true
}

// refTree builds the value of a root (repeat, module) from the listed
// references under it: objects for names, tuples for round[N].
type refTree struct {
	attrs map[string]*refTree
	index map[int64]*refTree
	leaf  *cty.Value
}

func (n *refTree) child(p step) *refTree {
	if p.isIdx {
		if n.index == nil {
			n.index = map[int64]*refTree{}
		}
		if n.index[p.index] == nil {
			n.index[p.index] = &refTree{}
		}
		return n.index[p.index]
	}
	if n.attrs == nil {
		n.attrs = map[string]*refTree{}
	}
	if n.attrs[p.name] == nil {
		n.attrs[p.name] = &refTree{}
	}
	return n.attrs[p.name]
}

func (n *refTree) value() cty.Value {
	switch {
	case n.leaf != nil:
		return *n.leaf
	case len(n.index) > 0:
		last := int64(0)
		for i := range n.index {
			last = max(last, i)
		}
		elems := make([]cty.Value, last+1)
		for i := range elems {
			elems[i] = cty.NullVal(cty.DynamicPseudoType)
			if c := n.index[int64(i)]; c != nil {
				elems[i] = c.value()
			}
		}
		return cty.TupleVal(elems)
	}
	m := map[string]cty.Value{}
	for k, c := range n.attrs {
		m[k] = c.value()
	}
	return cty.ObjectVal(m)
}

// listedStages is the set of references that an object constructor in a
// for_each expression gives as an element's whole value, { bert =
// stage.bert, nli = stage.train["nli"].model, idc = repeat.idc.last.model }:
// the keys are written out, so the stages behind them may be any, and
// each.value holds their outputs (or the one artifact named).
func listedStages(expr hcl.Expression) map[hcl.Range]bool {
	out := map[hcl.Range]bool{}
	x, ok := expr.(hclsyntax.Expression)
	if !ok {
		return out
	}
	_ = hclsyntax.VisitAll(x, func(n hclsyntax.Node) hcl.Diagnostics {
		oc, ok := n.(*hclsyntax.ObjectConsExpr)
		if !ok {
			return nil
		}
		for _, item := range oc.Items {
			if st, ok := item.ValueExpr.(*hclsyntax.ScopeTraversalExpr); ok && slices.Contains([]string{"stage", "repeat", "module"}, st.Traversal.RootName()) {
				out[st.Traversal.SourceRange()] = true
			}
		}
		return nil
	})
	return out
}

// forEachKeys turns a stage's for_each value into instance keys, in order,
// and each key's each.value.
func (e *evaluator) forEachKeys(expr hcl.Expression, v cty.Value) ([]string, map[string]cty.Value, bool) {
	const want = `for_each takes a list or set of strings (["sts", "nli"]), a map or object ({ sts = 3e-5 }) or the instances of a stage with for_each (stage.NAME)`
	ty := v.Type()
	vals := map[string]cty.Value{}
	var keys []string
	switch {
	case v.IsNull():
		e.errorf(expr.Range(), "Invalid for_each", "%s; got null.", want)
		return nil, nil, false
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		first := map[string]int{}
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			_, ev := it.Element()
			if !ev.IsKnown() {
				return nil, nil, false // depends on a value already reported as broken
			}
			if ev.IsNull() || !ev.Type().Equals(cty.String) {
				what := "null"
				if !ev.IsNull() {
					what = ev.Type().FriendlyName()
				}
				e.errorf(expr.Range(), "Invalid for_each key",
					"Element %d of for_each is %s: the elements of a list are the instance keys, strings such as \"sts\"; for other values use a map ({ sts = 1 }).", i, what)
				return nil, nil, false
			}
			k := ev.AsString()
			if j, dup := first[k]; dup {
				e.errorf(expr.Range(), "Duplicate for_each key",
					"for_each lists %q twice (elements %d and %d); each key names one instance.", k, j, i)
				return nil, nil, false
			}
			first[k] = i
			keys = append(keys, k)
			vals[k] = ev
		}
	case ty.IsMapType() || ty.IsObjectType():
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			keys = append(keys, k.AsString())
			vals[k.AsString()] = ev
		}
		sort.Strings(keys)
		n := len(e.diags)
		order, ok := e.keyOrder(expr)
		if len(e.diags) > n {
			return nil, nil, false // a key written twice
		}
		if ok && len(order) == len(keys) {
			keys = order
		}
	default:
		e.errorf(expr.Range(), "Invalid for_each", "%s; got %s.", want, ty.FriendlyName())
		return nil, nil, false
	}
	for _, k := range keys {
		if k == "" {
			e.errorf(expr.Range(), "Invalid for_each key", "A for_each key names an instance (NAME[\"KEY\"]); it cannot be empty.")
			return nil, nil, false
		}
	}
	return keys, vals, true
}

// keyOrder is the order of a map's keys as the file writes them: an object
// constructor's (directly or as local.NAME), another stage's instance
// order for `for_each = stage.NAME`, or, for COND ? A : B (a row present
// only when a variable is set), the order of the branch COND takes.
func (e *evaluator) keyOrder(expr hcl.Expression) ([]string, bool) {
	if c, ok := expr.(*hclsyntax.ConditionalExpr); ok {
		v, diags := c.Condition.Value(e.ctx)
		if diags.HasErrors() || !v.IsKnown() || v.IsNull() || !v.Type().Equals(cty.Bool) {
			return nil, false // the for_each's own evaluation reports it
		}
		if v.True() {
			return e.keyOrder(c.TrueResult)
		}
		return e.keyOrder(c.FalseResult)
	}
	if st, ok := expr.(*hclsyntax.ScopeTraversalExpr); ok && len(st.Traversal) == 2 && st.Traversal.RootName() == "stage" {
		if name, ok := traverseAttr(st.Traversal); ok {
			if s := e.m.stages[name]; s != nil {
				insts, _ := e.expand(s)
				return instanceKeys(insts), true
			}
		}
	}
	return e.sourceOrder(expr)
}

// instantiateTop instantiates a top-level stage block: once, or once per
// instance with each in scope. Diagnostics raised for an instance name it.
func (e *evaluator) instantiateTop(s *stageBlock) {
	if s.forEach == nil {
		e.instantiate(s, scope{})
		return
	}
	insts, _ := e.expand(s)
	saved := e.ctx
	defer func() { e.ctx = saved }()
	for _, c := range insts {
		e.ctx = saved.NewChild()
		e.ctx.Variables = map[string]cty.Value{"each": c.inst.each}
		n, before := len(e.diags), len(e.stages)
		e.instantiate(c, scope{})
		for _, d := range e.diags[n:] {
			d.Detail = fmt.Sprintf("In stage %s: %s", c.inst.name, d.Detail)
		}
		if len(e.stages) > before {
			e.stages[len(e.stages)-1].Key = c.inst.key
		}
	}
}

func (e *evaluator) instanceByKey(insts []*stageBlock, key string) *stageBlock {
	for _, c := range insts {
		if c.inst.key == key {
			return c
		}
	}
	return nil
}

// keyedInstance is a for_each instance of a stage or of a repeat block.
type keyedInstance interface {
	instanceName() string
	instanceKey() string
}

func (s *stageBlock) instanceKey() string  { return s.inst.key }
func (r *repeatBlock) instanceKey() string { return r.inst.key }

// instanceKeys lists the keys of insts, in order.
func instanceKeys[T keyedInstance](insts []T) []string {
	out := make([]string, len(insts))
	for i, c := range insts {
		out[i] = c.instanceKey()
	}
	return out
}

// instanceList names insts for a message: NAME["KEY"], ..., or "none".
func instanceList[T keyedInstance](insts []T) string {
	if len(insts) == 0 {
		return "none"
	}
	out := make([]string, len(insts))
	for i, c := range insts {
		out[i] = c.instanceName()
	}
	return strings.Join(out, ", ")
}

// pickInstance resolves the instance part of a reference to stage s of
// e's file: parts[0] is the stage's name, parts[1] (for a for_each stage)
// the instance key. It returns the instance and the parts with the key
// removed, so that parts[1] is the output. Errors go to rep, the evaluator
// of the file where the reference is written.
func (e *evaluator) pickInstance(s *stageBlock, parts []step, rng hcl.Range, rep *evaluator) (*stageBlock, []step, bool) {
	if s.forEach == nil {
		if len(parts) > 1 && parts[1].key {
			rep.errorf(parts[1].rng, "Not a for_each stage",
				"Stage %q has no for_each, so it has no instance %q; write stage.%s.OUTPUT.", s.name, parts[1].name, s.name)
			return nil, nil, false
		}
		return s, parts, true
	}
	insts, ok := e.expand(s)
	if !ok {
		return nil, nil, false // its for_each was reported
	}
	if len(parts) < 2 || !parts[1].key {
		example := "KEY"
		if len(insts) > 0 {
			example = insts[0].inst.key
		}
		rep.errorf(rng, "Missing instance key",
			"Stage %q has for_each: name one instance, such as stage.%s.OUTPUT; its instances: %s.",
			s.name, instName(s.name, example), instanceList(insts))
		return nil, nil, false
	}
	c := e.instanceByKey(insts, parts[1].name)
	if c == nil {
		rep.errorf(parts[1].rng, "No such instance",
			"Stage %q has no instance %q; its instances: %s.%s", s.name, parts[1].name, instanceList(insts),
			Suggest(parts[1].name, instanceKeys(insts)))
		return nil, nil, false
	}
	return c, append([]step{parts[0]}, parts[2:]...), true
}

// instanceKeyAt is the index in parts (the steps after the root) of a
// reference's instance key, which may be computed; -1 when the reference
// names no for_each stage.
func (e *evaluator) instanceKeyAt(root string, parts []step) int {
	switch root {
	case "stage":
		if len(parts) > 1 && !parts[0].isIdx {
			if s := e.m.stages[parts[0].name]; s != nil && s.forEach != nil {
				return 1
			}
		}
	case "repeat": // repeat.R[KEY].last.X (repeat_foreach.go)
		if len(parts) > 1 && !parts[0].isIdx {
			if r := e.m.repeats[parts[0].name]; r != nil && r.forEach != nil {
				return 1
			}
		}
	}
	return -1
}

// refTraversal is the traversal of an input reference. Only the instance
// key may be computed (stage.corpus[each.key].sentences); it is evaluated
// here. ok is false after an error, reported.
func (e *evaluator) refTraversal(expr hcl.Expression) (hcl.Traversal, bool) {
	if t, diags := hcl.AbsTraversalForExpr(expr); !diags.HasErrors() {
		return t, true
	}
	invalid := func() (hcl.Traversal, bool) {
		e.errorf(expr.Range(), "Invalid reference",
			"An input takes a reference to another stage's output: %s.", refForms)
		return nil, false
	}
	t, dyn, ok, reported := e.flatten(expr)
	if reported {
		return nil, false
	}
	if !ok {
		return invalid()
	}
	parts, good := steps(t)
	if !good {
		return invalid()
	}
	at := e.instanceKeyAt(t.RootName(), parts)
	for i := range parts {
		if dyn[i+1] && i != at && t.RootName() != "local" { // local.NAME[KEY]: any key (local_refs.go)
			e.errorf(parts[i].rng, "Invalid reference",
				"Only the key of a for_each stage's instance can be computed in a reference (stage.NAME[each.key].OUTPUT); write the rest literally.")
			return nil, false
		}
	}
	return t, true
}

// flatten is a reference whose bracketed keys may be expressions, as a
// static traversal: the keys evaluated (strings only), dyn marking them.
// reported is true when it reported an error; ok false and reported false
// mean the expression is not a reference at all.
func (e *evaluator) flatten(expr hcl.Expression) (t hcl.Traversal, dyn []bool, ok, reported bool) {
	switch x := expr.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		return append(hcl.Traversal(nil), x.Traversal...), make([]bool, len(x.Traversal)), true, false
	case *hclsyntax.RelativeTraversalExpr:
		t, dyn, ok, rep := e.flatten(x.Source)
		if !ok {
			return nil, nil, false, rep
		}
		return append(t, x.Traversal...), append(dyn, make([]bool, len(x.Traversal))...), true, false
	case *hclsyntax.IndexExpr:
		t, dyn, ok, rep := e.flatten(x.Collection)
		if !ok {
			return nil, nil, false, rep
		}
		if !e.checkVars(x.Key, "An instance key") {
			return nil, nil, false, true
		}
		v, diags := x.Key.Value(e.ctx)
		e.diags = append(e.diags, diags...)
		if diags.HasErrors() || !v.IsWhollyKnown() {
			return nil, nil, false, true
		}
		if v.IsNull() || !v.Type().Equals(cty.String) {
			what := "null"
			if !v.IsNull() {
				what = v.Type().FriendlyName()
			}
			e.errorf(x.Key.Range(), "Invalid instance key",
				"%s is %s; an instance of a for_each stage is named by a string key (stage.NAME[each.key]).", exprText(e.m, x.Key), what)
			return nil, nil, false, true
		}
		return append(t, hcl.TraverseIndex{Key: v, SrcRange: x.BracketRange}), append(dyn, true), true, false
	}
	return nil, nil, false, false
}

// ---- stage outputs as values ----

// instOutput is a stage output held in a cty value: each.value.OUTPUT when
// for_each iterates over another stage's instances.
type instOutput struct {
	ref  Ref
	kind registry.Kind
}

var outputType = cty.CapsuleWithOps("stage output", reflect.TypeOf(instOutput{}), &cty.CapsuleOps{
	GoString: func(v any) string {
		o := v.(*instOutput)
		return "stage." + o.ref.Stage + "." + o.ref.Output
	},
	TypeGoString: func(reflect.Type) string { return "dsl.outputType" },
})

// outputsOf is the object of instance c's outputs.
func (e *evaluator) outputsOf(c *stageBlock) cty.Value {
	if c.typ == nil {
		return cty.DynamicVal // its type was reported
	}
	m := map[string]cty.Value{}
	for _, p := range c.typ.Outputs {
		m[p.Name] = cty.CapsuleVal(outputType, &instOutput{ref: Ref{Stage: e.prefix + c.instanceName(), Output: p.Name}, kind: p.Kind})
	}
	return cty.ObjectVal(m)
}

// holdsOutput reports whether v is or contains a stage output.
func holdsOutput(v cty.Value) bool {
	found := false
	_ = cty.Walk(v, func(_ cty.Path, x cty.Value) (bool, error) {
		if x.Type().Equals(outputType) {
			found = true
		}
		return !found, nil
	})
	return found
}

// eachPlain reports a value reference each.* (t) that reads a stage
// output: outputs are artifacts, known only once their stage runs, so a
// parameter or a table value cannot use them.
func (e *evaluator) eachPlain(t hcl.Traversal) bool {
	v, diags := t.TraverseAbs(e.ctx)
	if diags.HasErrors() || !v.IsKnown() || !holdsOutput(v) {
		return true
	}
	e.errorf(t.SourceRange(), "Stage output in a value",
		"%s holds stage outputs (artifacts, written when a stage runs); a value can use each.key, and an input reads each.value.OUTPUT.", traversalString(t))
	return false
}

// resolveEach resolves each.value.OUTPUT[.key...] in an input or a table
// value, where for_each iterates over another stage's instances.
func (e *evaluator) resolveEach(parts []step, rng hcl.Range) (Ref, registry.Kind, bool) {
	ev, inScope := e.ctx.Variables["each"]
	if !inScope {
		e.errorf(rng, "each outside for_each", "each.key and each.value are only defined in a block with for_each (a stage or an expect block).")
		return Ref{}, "", false
	}
	if len(parts) < 1 || parts[0].isIdx || (parts[0].name != "key" && parts[0].name != "value") {
		e.errorf(rng, "Invalid reference", "Write each.key or each.value.")
		return Ref{}, "", false
	}
	v := ev.GetAttr(parts[0].name)
	for i := 1; ; i++ {
		if !v.IsKnown() {
			return Ref{}, "", false // depends on a value already reported as broken
		}
		if v.Type().Equals(outputType) && !v.IsNull() {
			o := v.EncapsulatedValue().(*instOutput)
			path, ok := pathOf(parts[i:])
			if !ok {
				e.errorf(rng, "Invalid reference", "Keys after an output are names, such as each.value.metrics.avg.")
				return Ref{}, "", false
			}
			ref := o.ref
			ref.Path = append(append([]string(nil), o.ref.Path...), path...)
			return ref, o.kind, true
		}
		if i >= len(parts) || v.IsNull() {
			break
		}
		var key cty.Value
		if parts[i].isIdx {
			key = cty.NumberIntVal(parts[i].index)
		} else {
			key = cty.StringVal(parts[i].name)
		}
		ty := v.Type()
		switch {
		case ty.IsObjectType() && !parts[i].isIdx && ty.HasAttribute(parts[i].name):
			v = v.GetAttr(parts[i].name)
		case (ty.IsMapType() || ty.IsListType() || ty.IsTupleType()) && v.HasIndex(key).True():
			v = v.Index(key)
		default:
			e.errorf(parts[i].rng, "Invalid reference", "%s has no element %q.", traversalString(eachTrav(parts[:i])), parts[i].name)
			return Ref{}, "", false
		}
	}
	e.errorf(rng, "Not a stage output",
		"%s is a %s, not a stage output: an input reads stage.NAME.OUTPUT, or each.value.OUTPUT when for_each iterates over the instances of another stage (for_each = stage.NAME).",
		traversalString(eachTrav(parts)), v.Type().FriendlyName())
	return Ref{}, "", false
}

// eachTrav rebuilds each.PARTS for messages.
func eachTrav(parts []step) hcl.Traversal {
	t := hcl.Traversal{hcl.TraverseRoot{Name: "each"}}
	for _, p := range parts {
		if p.isIdx {
			t = append(t, hcl.TraverseIndex{Key: cty.NumberIntVal(p.index)})
		} else {
			t = append(t, hcl.TraverseAttr{Name: p.name})
		}
	}
	return t
}

// ---- after loading ----

// Instances returns the stage instances in v that a --target name means:
// the instance of that name (train, idc[2].train, train["sts"], also
// written train[sts]), or every instance of a for_each stage NAME. nil when
// it names none.
func (v *Variant) Instances(name string) []string {
	if v.Stage(name) != nil {
		return []string{name}
	}
	if block, key, ok := parseInstance(name); ok {
		if v.Stage(instName(block, key)) != nil {
			return []string{instName(block, key)}
		}
	}
	if i := strings.IndexByte(name, '['); i > 0 && strings.HasSuffix(name, "]") {
		if n := instName(name[:i], name[i+1:len(name)-1]); v.Stage(n) != nil {
			return []string{n}
		}
	}
	var out []string
	for _, s := range v.Stages {
		// module.M.NAME names every instance of a module's for_each stage
		if n := instName(s.Block, s.Key); s.Key != "" && s.Repeat == "" && strings.HasSuffix(s.Name, n) && strings.TrimSuffix(s.Name, n)+s.Block == name {
			out = append(out, s.Name)
		}
	}
	if len(out) == 0 {
		out = v.repeatInstancesOf(name) // a repeat block, or one instance of one
	}
	return out
}
