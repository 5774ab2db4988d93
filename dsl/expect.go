package dsl

import (
	"fmt"
	"math"
	"sort"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Expect blocks. A block is one cell of a paper's table, or, with for_each,
// one cell per element of a map or object (a table row in one block):
//
//	expect "simcse_unsup" {
//	  for_each  = { STS12 = 68.40, STS13 = 82.41, Avg = 76.25 }
//	  row       = "SimCSE-BERT-base (unsup)"
//	  column    = each.key
//	  value     = stage.eval.metrics[lower(each.key)]
//	  paper     = each.value
//	}
//
// Every attribute is evaluated once per element with each.key (a string)
// and each.value in scope. Elements come in the order they are written when
// for_each is an object constructor (directly or through local.NAME), else
// in sorted key order. In `value`, the reference's head (stage.NAME.OUTPUT,
// repeat.NAME.last.X) is static, since it is a DAG edge; only the bracketed
// keys after it (and N in round[N]) may be computed.

func (e *evaluator) expects(x *expectBlock) []*Expect {
	fe, ok := x.attrs["for_each"]
	if !ok {
		return []*Expect{e.expect(x, "", false)}
	}
	keys, vals, ok := e.forEach(fe.Expr)
	if !ok {
		return nil
	}
	saved := e.ctx
	defer func() { e.ctx = saved }()
	var out []*Expect
	for _, k := range keys {
		vars := make(map[string]cty.Value, len(saved.Variables)+1)
		for n, v := range saved.Variables {
			vars[n] = v
		}
		vars["each"] = cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(k), "value": vals[k]})
		e.ctx = &hcl.EvalContext{Variables: vars, Functions: saved.Functions}
		n := len(e.diags)
		out = append(out, e.expect(x, k, true))
		// Name the element: the diagnostic's range is the same for all.
		for _, d := range e.diags[n:] {
			d.Detail = fmt.Sprintf("In %s[%s]: %s", x.name, k, d.Detail)
		}
	}
	return out
}

func (e *evaluator) expect(x *expectBlock, key string, each bool) *Expect {
	name := x.name
	if each {
		name = x.name + "[" + key + "]"
	}
	out := &Expect{Name: name, Block: x.name, Key: key, Range: x.rng, Tolerance: DefaultTolerance}
	out.Pending = e.str(x.attrs, "pending")
	a, hasValue := x.attrs["value"]
	switch {
	case hasValue && out.Pending != "":
		e.errorf(x.attrs["pending"].Expr.Range(), "Pending cell with a value",
			"pending marks a cell we do not compute; remove value, or remove pending.")
	case hasValue:
		out.Value, _ = e.metric(a.Expr)
	case out.Pending == "":
		e.errorf(x.rng, "Missing value",
			`An expect block needs value = stage.NAME.metrics..., or pending = "why" for a cell only the paper reports.`)
	}
	out.Paper = e.num(x.attrs, "paper", math.NaN())
	out.Tolerance = e.num(x.attrs, "tolerance", DefaultTolerance)
	if out.Tolerance < 0 {
		e.errorf(x.attrs["tolerance"].Expr.Range(), "Invalid tolerance", "A tolerance is at least 0.")
	}
	out.LowerIsBetter = e.boolean(x.attrs, "lower_is_better", false)
	out.Count = e.boolean(x.attrs, "count", false)
	out.MaxTolerance = e.num(x.attrs, "max_tolerance", 0)
	if out.MaxTolerance < 0 {
		e.errorf(x.attrs["max_tolerance"].Expr.Range(), "Invalid max_tolerance", "max_tolerance is at least 0 (0: no ceiling beyond the value itself).")
	}
	out.Row = e.str(x.attrs, "row")
	out.Column = e.str(x.attrs, "column")
	out.Profile = e.str(x.attrs, "profile")
	if out.Profile != "" {
		if _, ok := e.m.profiles[out.Profile]; !ok {
			e.errorf(x.attrs["profile"].Expr.Range(), "Unknown profile",
				"There is no profile %q.%s Declared: %s.", out.Profile, Suggest(out.Profile, e.m.profOrder), listOrNone(e.m.profOrder))
		}
	}
	return out
}

// forEach evaluates a for_each expression into its keys (in source order
// where the source has one) and elements.
func (e *evaluator) forEach(expr hcl.Expression) ([]string, map[string]cty.Value, bool) {
	v, ok := e.forEachValue(expr) // may iterate over a stage's instances (foreach.go)
	if !ok {
		return nil, nil, false
	}
	ty := v.Type()
	if v.IsNull() || !(ty.IsMapType() || ty.IsObjectType()) {
		what := ty.FriendlyName()
		if v.IsNull() {
			what = "null"
		}
		e.errorf(expr.Range(), "Invalid for_each",
			"for_each must be a map or object, such as { STS12 = 68.40, Avg = 76.25 } or { STS12 = { paper = 68.40, metric = \"sts12\" } }; got %s.", what)
		return nil, nil, false
	}
	vals := map[string]cty.Value{}
	var sorted []string
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		vals[k.AsString()] = ev
		sorted = append(sorted, k.AsString())
	}
	sort.Strings(sorted)
	order, ok := e.keyOrder(expr) // as written, or a stage's instance order (foreach.go)
	if !ok || len(order) != len(sorted) {
		return sorted, vals, true
	}
	for _, k := range order {
		if _, ok := vals[k]; !ok {
			return sorted, vals, true
		}
	}
	return order, vals, true
}

// sourceOrder returns the keys of an object constructor, written directly
// or as the value of local.NAME, in the order they are written. cty maps
// and objects have no order, so this reads the syntax tree.
func (e *evaluator) sourceOrder(expr hcl.Expression) ([]string, bool) {
	if st, ok := expr.(*hclsyntax.ScopeTraversalExpr); ok && len(st.Traversal) == 2 && st.Traversal.RootName() == "local" {
		if attr, ok := st.Traversal[1].(hcl.TraverseAttr); ok {
			if a, ok := e.m.locals[attr.Name]; ok {
				expr = a.Expr
			}
		}
	}
	oc, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return nil, false
	}
	var order []string
	seen := map[string]bool{}
	for _, item := range oc.Items {
		k, diags := item.KeyExpr.Value(e.ctx)
		if diags.HasErrors() || !k.IsKnown() || k.IsNull() {
			return nil, false
		}
		k, err := convert.Convert(k, cty.String)
		if err != nil {
			return nil, false
		}
		if seen[k.AsString()] {
			e.errorf(item.KeyExpr.Range(), "Duplicate key", "for_each sets key %q twice.", k.AsString())
			return nil, false
		}
		seen[k.AsString()] = true
		order = append(order, k.AsString())
	}
	return order, true
}

// boolean evaluates an optional bool attribute.
func (e *evaluator) boolean(attrs hcl.Attributes, name string, def bool) bool {
	a, ok := attrs[name]
	if !ok || !e.checkVars(a.Expr, "This attribute") {
		return def
	}
	v, diags := a.Expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() {
		return def
	}
	v, err := convert.Convert(v, cty.Bool)
	if err != nil {
		e.errorf(a.Expr.Range(), "Invalid "+name, "%s must be true or false.", name)
		return def
	}
	return v.True()
}

// metric resolves a reference to a key inside a metrics artifact. Bracketed
// keys may be computed (stage.eval.metrics[lower(each.key)]).
func (e *evaluator) metric(expr hcl.Expression) (Ref, bool) {
	t, dyn, ok := e.dynTraversal(expr)
	if !ok {
		return Ref{}, false
	}
	parts, good := steps(t)
	if !good {
		e.errorf(expr.Range(), "Invalid reference", "A reference is %s.", refForms)
		return Ref{}, false
	}
	if !e.staticHead(t.RootName(), parts, dyn[1:]) {
		return Ref{}, false
	}
	ref, kind, ok := e.resolveTrav(t.RootName(), parts, expr.Range(), scope{})
	if !ok {
		return Ref{}, false
	}
	ref.Range = expr.Range()
	if kind != registry.KindMetrics {
		e.errorf(expr.Range(), "Not a metric",
			"%s is of kind %s; a table cell reads a key of a metrics output, such as stage.eval.metrics.avg.", exprText(e.m, expr), kind)
		return Ref{}, false
	}
	if len(ref.Path) == 0 {
		e.errorf(expr.Range(), "Missing metric key",
			"%s is the whole metrics object; name a key after it, such as %s.avg.", exprText(e.m, expr), exprText(e.m, expr))
		return Ref{}, false
	}
	return ref, true
}

// dynTraversal flattens a reference whose bracketed keys may be
// expressions into a static traversal, evaluating those keys; dyn marks the
// steps that were computed.
func (e *evaluator) dynTraversal(expr hcl.Expression) (hcl.Traversal, []bool, bool) {
	switch x := expr.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		return append(hcl.Traversal(nil), x.Traversal...), make([]bool, len(x.Traversal)), true
	case *hclsyntax.RelativeTraversalExpr:
		t, dyn, ok := e.dynTraversal(x.Source)
		if !ok {
			return nil, nil, false
		}
		return append(t, x.Traversal...), append(dyn, make([]bool, len(x.Traversal))...), true
	case *hclsyntax.IndexExpr:
		t, dyn, ok := e.dynTraversal(x.Collection)
		if !ok {
			return nil, nil, false
		}
		key, ok := e.indexKey(x.Key)
		if !ok {
			return nil, nil, false
		}
		return append(t, hcl.TraverseIndex{Key: key, SrcRange: x.BracketRange}), append(dyn, true), true
	}
	t, diags := hcl.AbsTraversalForExpr(expr)
	if diags.HasErrors() {
		e.errorf(expr.Range(), "Invalid reference",
			"A table cell reads a metric: stage.NAME.OUTPUT followed by keys written .name, [\"name\"] or [EXPRESSION], such as stage.eval.metrics[lower(each.key)].")
		return nil, nil, false
	}
	return t, make([]bool, len(t)), true
}

// indexKey evaluates a computed key: a string, or a whole number for
// repeat.NAME.round[N].
func (e *evaluator) indexKey(expr hcl.Expression) (cty.Value, bool) {
	if !e.checkVars(expr, "A metric key") {
		return cty.NilVal, false
	}
	v, diags := expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	if !v.IsWhollyKnown() {
		return cty.NilVal, false // depends on a value already reported as broken
	}
	if v.IsNull() || !(v.Type() == cty.String || v.Type() == cty.Number) {
		what := "null"
		if !v.IsNull() {
			what = v.Type().FriendlyName()
		}
		e.errorf(expr.Range(), "Invalid metric key",
			"%s does not resolve to a key: it is %s; a key in brackets is a string (or a whole number in round[N]).", exprText(e.m, expr), what)
		return cty.NilVal, false
	}
	return v, true
}

// staticHead reports computed steps where a reference names a stage, an
// output, a repeat block or a repeat value: those are DAG edges, known
// before anything is evaluated.
func (e *evaluator) staticHead(root string, parts []step, dyn []bool) bool {
	var static int                       // leading parts that must be literal
	inst := e.instanceKeyAt(root, parts) // stage.NAME[KEY].OUTPUT, repeat.NAME[KEY]: KEY may be computed (foreach.go)
	roundAt := -1                        // N in repeat.NAME.round[N]
	switch root {
	case "stage":
		static = 2 // NAME.OUTPUT
	case "module":
		static = 3 // NAME.STAGE.OUTPUT
		if len(parts) > 1 && e.isModuleOutput(parts[0].name, parts[1].name) {
			static = 2 // NAME.OUTPUT (an output block)
		}
	case "input":
		static = 1 // NAME
	case "repeat":
		static = 3 // NAME.last.X
		if j := max(inst, 0) + 1; len(parts) > j && parts[j].name == "round" && !parts[j].isIdx {
			static, roundAt = 4, j+1 // NAME.round[N].X, N may be computed
		}
	default:
		return true // not a reference: resolveTrav reports it
	}
	if inst >= 0 {
		static++
	}
	for i := 0; i < static && i < len(parts); i++ {
		if !dyn[i] || i == roundAt || i == inst {
			continue
		}
		e.errorf(parts[i].rng, "Invalid reference",
			"Only the metric keys after %s.NAME.OUTPUT (and N in round[N]) can be computed; write the names before them literally.", root)
		return false
	}
	return true
}
