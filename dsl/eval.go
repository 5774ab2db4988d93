package dsl

import (
	"fmt"
	"maps"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"strings"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// evaluator evaluates the static model for one variant: one set of
// overrides. Parameters are evaluated once per stage block and shared by
// every round of a repeat block, so a parameter error is reported once.
type evaluator struct {
	m      *module
	ovr    map[string]override
	diags  hcl.Diagnostics
	vars   map[string]cty.Value
	ctx    *hcl.EvalContext
	seed   int64
	rounds map[*repeatBlock]int
	labels map[string]cty.Value

	params    map[*stageBlock]cty.Value
	paramsBad map[*stageBlock]bool
	seeds     map[*stageBlock]int64
	res       map[*stageBlock]registry.Resources
	reported  map[string]bool // source ranges already reported (resourcesOf)
	resolving map[string]bool
	stages    []*Stage
	stageIdx  map[string]int

	// Modules (module.go): the profile that propagates into them, the
	// prefix of this file's instance names ("" for the loaded file,
	// "module.M." inside module M), the evaluated module blocks, and the
	// module stage instances referenced from here.
	profile  string
	prefix   string
	children map[string]*evaluator
	modUsed  map[string]bool
	mods     *moduleState // resolved output blocks (module_inputs.go)

	fe   *forEachState // for_each instances (foreach.go)
	reps *repeatState  // for_each repeat instances (repeat_foreach.go)
	lr   *localRefs    // local values that hold stage references (local_refs.go)

	shadow *pathShadow // marked variables and locals, for path origins (paths.go)
}

// scope is where a reference is written: at top level (repeat nil), or in
// round `round` of a repeat block.
type scope struct {
	repeat *repeatBlock
	round  int
}

func (sc scope) instance(s *stageBlock) string {
	if s.repeat == nil {
		return s.instanceName() // NAME, or NAME["KEY"] for a for_each instance
	}
	return fmt.Sprintf("%s[%d].%s", s.repeat.instanceName(), sc.round, s.name) // R["KEY"][N].S in a for_each repeat
}

// evaluate evaluates m under ovrs; profile is the selected profile (for
// modules) and prefix goes before every instance name. The stages are in
// instantiation order until finish orders them.
func evaluate(m *module, ovrs []override, profile, prefix string) *evaluator {
	e := &evaluator{
		m: m, ovr: map[string]override{}, vars: map[string]cty.Value{},
		profile: profile, prefix: prefix, children: map[string]*evaluator{}, modUsed: map[string]bool{},
		rounds: map[*repeatBlock]int{}, labels: map[string]cty.Value{},
		params: map[*stageBlock]cty.Value{}, paramsBad: map[*stageBlock]bool{},
		seeds: map[*stageBlock]int64{}, res: map[*stageBlock]registry.Resources{}, reported: map[string]bool{}, resolving: map[string]bool{}, stageIdx: map[string]int{},
	}
	for _, o := range ovrs {
		e.ovr[o.target.path] = o // later overrides win
	}
	e.variables()
	e.locals()
	if m.experiment != nil {
		if a, ok := m.experiment.attrs["seed"]; ok {
			e.seed, _ = e.int(a.Expr, "experiment seed", false)
		}
	}
	for _, it := range m.items {
		if it.repeat != nil && it.repeat.forEach == nil {
			e.roundsFor(it.repeat)
		}
	}
	e.modules() // after rounds: a module input may read repeat.R.last.X
	e.allRefLocals()
	// for_each: the instances of every stage block that has one (foreach.go)
	e.expandAll()
	e.expandRepeats() // and of every repeat block (repeat_foreach.go)
	for _, it := range m.items {
		if it.stage != nil {
			e.instantiateTop(it.stage)
			continue
		}
		e.instantiateRepeat(it.repeat)
	}
	e.resolveOutputs()
	return e
}

func (e *evaluator) errorf(rng hcl.Range, summary, format string, args ...any) {
	r := rng
	e.diags = append(e.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: &r,
	})
}

// constCtx evaluates variable values: functions, but no references.
var constCtx = &hcl.EvalContext{Functions: functions()}

func (e *evaluator) variables() {
	for _, name := range e.m.varOrder {
		v := e.m.variables[name]
		expr := v.def
		o, overridden := e.ovr["var."+name]
		if overridden {
			expr = o.expr
		}
		if expr == nil {
			e.errorf(v.rng, "Missing value for variable",
				"Variable %q has no default; give one with -var %s=VALUE.", name, name)
			e.vars[name] = cty.DynamicVal
			continue
		}
		val, diags := expr.Value(constCtx)
		e.diags = append(e.diags, diags...)
		if diags.HasErrors() {
			e.vars[name] = cty.DynamicVal
			continue
		}
		if v.typeExpr != nil {
			ty, diags := typeexpr.TypeConstraint(v.typeExpr)
			e.diags = append(e.diags, diags...)
			if !diags.HasErrors() {
				conv, err := convert.Convert(val, ty)
				if err != nil {
					e.errorf(expr.Range(), "Invalid value for variable",
						"Variable %q must be %s: %s.", name, ty.FriendlyName(), err)
					conv = cty.UnknownVal(ty)
				}
				val = conv
			}
		}
		e.vars[name] = val
		if overridden && o.label {
			e.labels[o.target.path] = val
		}
	}
	e.ctx = &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(e.vars), "local": cty.EmptyObjectVal},
		Functions: functions(),
	}
}

// locals evaluates local values in dependency order; whatever is left when
// no progress is possible refers to itself in a cycle.
func (e *evaluator) locals() {
	done := map[string]cty.Value{}
	pending := e.valueLocals() // the locals that hold references wait (local_refs.go)
	for len(pending) > 0 {
		var still []string
		for _, name := range pending {
			a := e.m.locals[name]
			ready := true
			for _, t := range a.Expr.Variables() {
				if t.RootName() != "local" || len(t) < 2 {
					continue
				}
				if dep, ok := t[1].(hcl.TraverseAttr); ok {
					if _, declared := e.m.locals[dep.Name]; declared {
						if _, ok := done[dep.Name]; !ok {
							ready = false
						}
					}
				}
			}
			if !ready {
				still = append(still, name)
				continue
			}
			e.ctx.Variables["local"] = cty.ObjectVal(done)
			if !e.checkVars(a.Expr, "a local value") {
				done[name] = cty.DynamicVal
				continue
			}
			v, diags := a.Expr.Value(e.ctx)
			e.diags = append(e.diags, diags...)
			if diags.HasErrors() {
				v = cty.DynamicVal
			}
			done[name] = v
		}
		if len(still) == len(pending) {
			for _, name := range still {
				a := e.m.locals[name]
				e.errorf(a.Expr.Range(), "Circular local value",
					"local.%s depends on itself (through: %s).", name, strings.Join(still, ", "))
				done[name] = cty.DynamicVal
			}
			break
		}
		pending = still
	}
	e.ctx.Variables["local"] = cty.ObjectVal(done)
	e.refLocalsReady(done)
}

// checkVars reports references in a value expression that are not var.X or
// local.X of declared names; it returns false when there was one.
func (e *evaluator) checkVars(expr hcl.Expression, what string) bool {
	ok := true
	for _, t := range expr.Variables() {
		root := t.RootName()
		switch root {
		case "var", "local":
			if len(t) < 2 {
				e.errorf(t.SourceRange(), "Invalid reference", "%s alone is not a value; write %s.NAME.", root, root)
				ok = false
				continue
			}
			attr, isAttr := t[1].(hcl.TraverseAttr)
			if !isAttr {
				e.errorf(t.SourceRange(), "Invalid reference", "Write %s.NAME.", root)
				ok = false
				continue
			}
			if root == "var" {
				if _, declared := e.m.variables[attr.Name]; !declared {
					e.errorf(t.SourceRange(), "Undeclared variable",
						"There is no variable %q.%s", attr.Name, Suggest(attr.Name, e.m.varOrder))
					ok = false
				}
			} else if _, declared := e.m.locals[attr.Name]; !declared {
				e.errorf(t.SourceRange(), "Undeclared local value",
					"There is no local value %q.%s", attr.Name, Suggest(attr.Name, e.m.localOrder))
				ok = false
			} else if !e.localPlain(t, attr.Name, what) { // a local holding stage references (local_refs.go)
				ok = false
			}
		case "each":
			if _, inScope := e.ctx.Variables["each"]; !inScope {
				e.errorf(t.SourceRange(), "each outside for_each",
					"each.key and each.value are only defined in a block with for_each (a stage or an expect block).")
				ok = false
				continue
			}
			attr, isAttr := traverseAttr(t)
			if !isAttr || (attr != "key" && attr != "value") {
				e.errorf(t.SourceRange(), "Invalid reference", "Write each.key or each.value.")
				ok = false
			} else if !e.eachPlain(t) { // each.value holds stage outputs (foreach.go)
				ok = false
			}
		case "stage", "repeat", "previous", "module", "input":
			e.errorf(t.SourceRange(), "Reference not allowed here",
				"%s cannot refer to stage outputs; only a stage's inputs (and expect values) can.", what)
			ok = false
		}
	}
	return ok
}

// traverseAttr returns the name after a traversal's root (each.NAME).
func traverseAttr(t hcl.Traversal) (string, bool) {
	if len(t) < 2 {
		return "", false
	}
	a, ok := t[1].(hcl.TraverseAttr)
	return a.Name, ok
}

// int evaluates a whole number.
func (e *evaluator) int(expr hcl.Expression, what string, positive bool) (int64, bool) {
	if !e.checkVars(expr, what) {
		return 0, false
	}
	v, diags := expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return 0, false
	}
	v, err := convert.Convert(v, cty.Number)
	if err != nil || v.IsNull() {
		e.errorf(expr.Range(), "Invalid "+what, "The %s must be a whole number.", what)
		return 0, false
	}
	i, acc := v.AsBigFloat().Int64()
	if acc != big.Exact || (positive && i < 1) {
		e.errorf(expr.Range(), "Invalid "+what, "The %s must be a whole number%s; got %s.",
			what, map[bool]string{true: " of at least 1", false: ""}[positive], v.AsBigFloat().Text('g', -1))
		return 0, false
	}
	return i, true
}

func (e *evaluator) roundsOf(r *repeatBlock) {
	expr := r.rounds
	o, overridden := e.roundsOvr(r) // the instance's own, else the block's
	if overridden {
		expr = o.expr
	}
	if expr == nil {
		e.errorf(r.defRange, "Missing rounds", "Repeat %q needs `rounds = N`.", r.name)
		return
	}
	n, ok := e.int(expr, "number of rounds", true)
	if !ok {
		return
	}
	const maxRounds = 1000 // a typo like 1e9 must not exhaust memory
	if n > maxRounds {
		e.errorf(expr.Range(), "Invalid number of rounds", "At most %d rounds; got %d.", maxRounds, n)
		return
	}
	e.rounds[r] = int(n)
	if overridden && o.label {
		e.labels[o.target.path] = cty.NumberIntVal(n)
	}
}

// attrExpr returns the expression for a stage attribute: an override, else
// what the block says, else nil.
func (e *evaluator) attrExpr(s *stageBlock, name string) (hcl.Expression, *override) {
	if o, ok := e.stageOvr(s, name); ok { // an instance's own, else the block's
		return o.expr, &o
	}
	if a, ok := s.attrs[name]; ok {
		return a.Expr, nil
	}
	return nil, nil
}

func (e *evaluator) paramsOf(s *stageBlock) (cty.Value, bool) {
	if v, ok := e.params[s]; ok {
		return v, true
	}
	if e.paramsBad[s] {
		return cty.NilVal, false
	}
	ps, _ := s.typ.ParamSchema()
	obj := map[string]cty.Value{}
	ok := true
	for _, p := range ps {
		expr, o := e.attrExpr(s, p.Name)
		if expr == nil {
			if p.Required {
				e.errorf(s.defRange, "Missing required parameter",
					"Stage %q (%s) needs parameter %q (%s).", s.name, s.typ.Name, p.Name, p.Type.FriendlyName())
				ok = false
			}
			obj[p.Name] = p.Default
			continue
		}
		if !e.checkVars(expr, "A parameter") {
			ok = false
			continue
		}
		v, diags := expr.Value(e.ctx)
		e.diags = append(e.diags, diags...)
		if diags.HasErrors() {
			ok = false
			continue
		}
		if !v.IsWhollyKnown() {
			ok = false // depends on a value already reported as broken
			continue
		}
		if v.IsNull() {
			// null means "not set": the default applies.
			if p.Required {
				e.errorf(expr.Range(), "Missing required parameter",
					"Parameter %q of %s is required and cannot be null.", p.Name, s.typ.Name)
				ok = false
			}
			obj[p.Name] = p.Default
			continue
		}
		conv, err := convert.Convert(v, p.Type)
		if err != nil {
			e.errorf(expr.Range(), "Invalid value for parameter",
				"Parameter %q of %s must be %s: %s.", p.Name, s.typ.Name, p.Type.FriendlyName(), err)
			ok = false
			continue
		}
		if p.Type == cty.Number {
			if want, good := s.wholeOK(p.Name, conv); !good {
				e.errorf(expr.Range(), "Invalid value for parameter",
					"Parameter %q of %s must be %s; got %s.", p.Name, s.typ.Name, want, conv.AsBigFloat().Text('g', -1))
				ok = false
				continue
			}
		}
		if p.Path != "" && conv.AsString() != "" {
			abs, err := e.resolvePath(s, expr, p.Path, conv.AsString())
			if err != nil {
				e.errorf(expr.Range(), "Invalid path", "Parameter %q of %s: %v.", p.Name, s.typ.Name, err)
				ok = false
				continue
			}
			conv = cty.StringVal(abs)
		}
		obj[p.Name] = conv
		if o != nil && o.label {
			e.labels[o.target.path] = conv
		}
	}
	if !ok {
		e.paramsBad[s] = true
		return cty.NilVal, false
	}
	v := cty.EmptyObjectVal
	if len(obj) > 0 {
		v = cty.ObjectVal(obj)
	}
	// Decoding here is what the stage will do at run time; a failure the
	// checks above missed is still reported before anything runs.
	decoded, err := s.typ.DecodeParams(v)
	if err == nil && decoded != nil {
		// Canonical form: the values the stage will actually see. HCL
		// numbers are 512-bit decimals while Go defaults are float64; going
		// through the Go struct makes `lr = 3e-5` and the omitted default
		// 3e-5 the same value (and the same cache key).
		v, err = s.typ.EncodeParams(decoded)
	}
	if err != nil {
		e.errorf(s.defRange, "Invalid parameters", "Stage %q: %v.", s.name, err)
		e.paramsBad[s] = true
		return cty.NilVal, false
	}
	if !e.validateParams(s, decoded) {
		e.paramsBad[s] = true
		return cty.NilVal, false
	}
	e.params[s] = v
	return v, true
}

// wholeOK reports whether number v fits the Go field behind parameter name:
// cty has one number type, so 2.5 converts for an int field and would only
// fail when the stage decodes its parameters, far from the HCL line.
func (s *stageBlock) wholeOK(name string, v cty.Value) (string, bool) {
	k, ok := s.intKinds[name]
	if !ok {
		return "", true
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		return "a whole number", false
	}
	switch k {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if bf.Sign() < 0 {
			return "a whole number of at least 0", false
		}
	}
	if _, acc := bf.Int64(); acc != big.Exact && bf.Sign() < 0 {
		return "a whole number in range", false
	}
	if _, acc := bf.Uint64(); acc != big.Exact && bf.Sign() >= 0 {
		return "a whole number in range", false
	}
	return "", true
}

func (e *evaluator) seedOf(s *stageBlock) int64 {
	if v, ok := e.seeds[s]; ok {
		return v
	}
	seed := e.seed
	expr := s.seed
	if o, ok := e.stageOvr(s, "seed"); ok {
		expr = o.expr
		if v, ok := e.int(expr, "seed", false); ok && o.label {
			e.labels[o.target.path] = cty.NumberIntVal(v)
		}
	}
	if expr != nil {
		if v, ok := e.int(expr, "seed", false); ok {
			seed = v
		}
	}
	e.seeds[s] = seed
	return seed
}

func (e *evaluator) instantiate(s *stageBlock, sc scope) {
	if s.typ == nil {
		return
	}
	params, ok := e.paramsOf(s)
	res, seen := e.res[s]
	if !seen {
		res = e.resourcesOf(s)
		e.res[s] = res
	}
	st := &Stage{
		Name: e.prefix + sc.instance(s), Type: s.typ, Params: params, Inputs: map[string]Ref{},
		Seed: e.seedOf(s), Range: s.defRange, Block: s.name, Round: sc.round, Resources: res,
	}
	if s.repeat != nil {
		st.Repeat = s.repeat.name
		if s.repeat.inst != nil {
			st.Key = s.repeat.inst.key
		}
	}
	for _, p := range s.typ.Inputs {
		expr, o := e.attrExpr(s, p.Name)
		if o != nil && o.label {
			e.labels[o.target.path] = cty.StringVal(exprText(e.m, expr))
		}
		if expr != nil && isNull(expr) {
			expr = nil // `init = null` disconnects an optional input
		}
		if expr == nil {
			if !p.Optional {
				e.errorf(s.defRange, "Missing required input",
					"Stage %q (%s) needs input %q (kind %s), such as %s = stage.NAME.OUTPUT.",
					s.name, s.typ.Name, p.Name, p.Kind, p.Name)
				ok = false
			}
			continue
		}
		ref, kind, good := e.resolve(expr, sc, false)
		if !good {
			ok = false
			continue
		}
		if kind != p.Kind {
			e.errorf(expr.Range(), "Artifact kind mismatch",
				"Input %q of %s takes artifacts of kind %s, but %s is of kind %s.",
				p.Name, s.typ.Name, p.Kind, exprText(e.m, expr), kind)
			ok = false
			continue
		}
		st.Inputs[p.Name] = ref
	}
	if !ok && st.Params == cty.NilVal {
		st.Params = cty.DynamicVal
	}
	e.stageIdx[st.Name] = len(e.stages)
	e.stages = append(e.stages, st)
}

func isNull(expr hcl.Expression) bool {
	if len(expr.Variables()) > 0 {
		return false
	}
	v, diags := expr.Value(nil)
	return !diags.HasErrors() && v.IsNull()
}

// exprText is the source text of an expression, for messages.
func exprText(m *module, expr hcl.Expression) string {
	r := expr.Range()
	if r.Filename == m.filename && r.Start.Byte >= 0 && r.End.Byte <= len(m.src) && r.Start.Byte <= r.End.Byte {
		return string(m.src[r.Start.Byte:r.End.Byte])
	}
	if t, diags := hcl.AbsTraversalForExpr(expr); !diags.HasErrors() {
		return traversalString(t)
	}
	return "the value"
}

func traversalString(t hcl.Traversal) string {
	var b strings.Builder
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			b.WriteString("[" + formatValue(s.Key) + "]")
		}
	}
	return b.String()
}

// step is one part of a reference after its root.
type step struct {
	name  string
	index int64
	isIdx bool
	key   bool // written ["name"]: an instance key after stage.NAME
	rng   hcl.Range
}

func steps(t hcl.Traversal) ([]step, bool) {
	var out []step
	for _, s := range t[1:] {
		switch s := s.(type) {
		case hcl.TraverseAttr:
			out = append(out, step{name: s.Name, rng: s.SrcRange})
		case hcl.TraverseIndex:
			switch {
			case s.Key.Type() == cty.String && !s.Key.IsNull():
				out = append(out, step{name: s.Key.AsString(), rng: s.SrcRange, key: true})
			case s.Key.Type() == cty.Number && !s.Key.IsNull():
				i, acc := s.Key.AsBigFloat().Int64()
				if acc != big.Exact {
					return nil, false
				}
				out = append(out, step{index: i, isIdx: true, rng: s.SrcRange})
			default:
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return out, true
}

const refForms = "stage.NAME.OUTPUT, previous.NAME, repeat.NAME.last.NAME, repeat.NAME.round[N].NAME or module.NAME.STAGE.OUTPUT"

// resolve turns a reference expression into the instance output it names
// in scope sc, with that output's kind. allowPath permits keys after the
// output (metrics). ok is false when it reported an error, or when the
// reference leads to a stage whose own error was already reported.
func (e *evaluator) resolve(expr hcl.Expression, sc scope, allowPath bool) (Ref, registry.Kind, bool) {
	if x, ok := expr.(*passedRef); ok { // resolved where the override is written (module_paths.go)
		return x.ref, x.kind, true
	}
	t, ok := e.refTraversal(expr) // an instance key may be computed (foreach.go)
	if !ok {
		return Ref{}, "", false
	}
	parts, good := steps(t)
	if !good {
		e.errorf(expr.Range(), "Invalid reference", "A reference is %s.", refForms)
		return Ref{}, "", false
	}
	ref, kind, ok := e.resolveTrav(t.RootName(), parts, expr.Range(), sc)
	if !ok {
		return Ref{}, "", false
	}
	if len(ref.Path) > 0 && !allowPath {
		e.errorf(expr.Range(), "Invalid reference",
			"An input takes a whole artifact; remove .%s.", strings.Join(ref.Path, "."))
		return Ref{}, "", false
	}
	ref.Range = expr.Range()
	return ref, kind, true
}

func names(ps []registry.Port) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

func pathOf(parts []step) ([]string, bool) {
	var out []string
	for _, p := range parts {
		if p.isIdx {
			return nil, false
		}
		out = append(out, p.name)
	}
	return out, true
}

// resolveTrav resolves a traversal's root (stage, module, each, input,
// previous, repeat) to the output it names; each root has its own method.
func (e *evaluator) resolveTrav(root string, parts []step, rng hcl.Range, sc scope) (Ref, registry.Kind, bool) {
	switch root {
	case "stage":
		return e.resolveStage(parts, rng, sc)
	case "module":
		return e.resolveModule(parts, rng)
	case "each":
		return e.resolveEach(parts, rng) // each.value.OUTPUT (foreach.go)
	case "input":
		return e.resolveInput(parts, rng) // module_inputs.go
	case "local":
		return e.resolveLocal(parts, rng) // a local holding stage references (local_refs.go)
	case "previous":
		return e.resolvePrevious(parts, rng, sc)
	case "repeat":
		return e.resolveRepeat(parts, rng, sc)
	}
	return e.refFail(rng, "Invalid reference", "A reference is %s; %q is none of these.", refForms, root)
}

// refFail reports a diagnostic and returns resolveTrav's failure.
func (e *evaluator) refFail(r hcl.Range, summary, format string, args ...any) (Ref, registry.Kind, bool) {
	e.errorf(r, summary, format, args...)
	return Ref{}, "", false
}

// resolveStage resolves stage.NAME[["KEY"]].OUTPUT[.key...].
func (e *evaluator) resolveStage(parts []step, rng hcl.Range, sc scope) (Ref, registry.Kind, bool) {
	fail := e.refFail
	if len(parts) < 1 || parts[0].isIdx {
		return fail(rng, "Invalid reference", "Write stage.NAME.OUTPUT.")
	}
	s, ok := e.m.stages[parts[0].name]
	if !ok {
		return fail(rng, "Reference to undeclared stage",
			"There is no stage %q.%s", parts[0].name, Suggest(parts[0].name, e.visibleStages(sc)))
	}
	if s.repeat != nil && sc.repeat != nil && s.repeat == sc.repeat.origin() {
		s = sc.repeat.stage(s.name) // this instance's copy (repeat_foreach.go)
	}
	if s.repeat != nil && s.repeat != sc.repeat {
		return fail(rng, "Reference into a repeat block",
			"Stage %q runs once per round of repeat %q; %s.", s.name, s.repeat.name, intoRepeat(s.repeat))
	}
	if s.typ == nil {
		return Ref{}, "", false
	}
	if s, parts, ok = e.pickInstance(s, parts, rng, e); !ok { // stage.NAME["KEY"] (foreach.go)
		return Ref{}, "", false
	}
	if len(parts) < 2 || parts[1].isIdx {
		return fail(rng, "Missing output name",
			"Name one of the outputs of stage %q (%s): %s.", s.name, s.typ.Name, strings.Join(names(s.typ.Outputs), ", "))
	}
	port, ok := s.typ.Output(parts[1].name)
	if !ok {
		return fail(parts[1].rng, "Unknown output",
			"Stage %q (%s) has no output %q.%s Its outputs: %s.", s.name, s.typ.Name, parts[1].name,
			Suggest(parts[1].name, names(s.typ.Outputs)), strings.Join(names(s.typ.Outputs), ", "))
	}
	path, ok := pathOf(parts[2:])
	if !ok {
		return fail(rng, "Invalid reference", "Keys after an output are names, such as stage.eval.metrics.stsb.")
	}
	return Ref{Stage: e.prefix + sc.instance(s), Output: port.Name, Path: path}, port.Kind, true
}

// resolvePrevious resolves previous.NAME[.key...] inside a repeat block:
// the start value in round 1, else the previous round's next value.
func (e *evaluator) resolvePrevious(parts []step, rng hcl.Range, sc scope) (Ref, registry.Kind, bool) {
	fail := e.refFail
	r := sc.repeat
	if r == nil {
		return fail(rng, "Invalid reference", "previous.NAME is only defined inside a repeat block's stages.")
	}
	if len(parts) < 1 || parts[0].isIdx {
		return fail(rng, "Invalid reference", "Write previous.NAME, NAME one of: %s.", strings.Join(r.nextOrder, ", "))
	}
	x := parts[0].name
	if _, ok := r.next[x]; !ok {
		return fail(rng, "Unknown previous value",
			"Repeat %q carries no value %q from round to round.%s Its start and next define: %s.",
			r.name, x, Suggest(x, r.nextOrder), strings.Join(r.nextOrder, ", "))
	}
	var ref Ref
	var kind registry.Kind
	var ok bool
	if sc.round <= 1 {
		expr, has := r.start[x]
		if !has {
			// next values without a start value are per-round results
			// (metrics), read as repeat.R.round[N].X, not carried.
			return fail(rng, "No start value",
				"previous.%s in round 1 needs start = { %s = ... } in repeat %q.", x, x, r.name)
		}
		ref, kind, ok = e.carried("start", r, 0, x, expr, scope{})
	} else {
		ref, kind, ok = e.carried("next", r, sc.round-1, x, r.next[x], scope{repeat: r, round: sc.round - 1})
	}
	if !ok {
		return Ref{}, "", false
	}
	path, good := pathOf(parts[1:])
	if !good {
		return fail(rng, "Invalid reference", "Keys after a value are names.")
	}
	ref.Path = append(append([]string(nil), ref.Path...), path...)
	return ref, kind, true
}

// resolveRepeat resolves repeat.NAME.last.VALUE or
// repeat.NAME.round[N].VALUE, then keys.
func (e *evaluator) resolveRepeat(parts []step, rng hcl.Range, sc scope) (Ref, registry.Kind, bool) {
	fail := e.refFail
	if len(parts) < 2 || parts[0].isIdx || parts[1].isIdx {
		return fail(rng, "Invalid reference", "Write repeat.NAME.last.VALUE or repeat.NAME.round[N].VALUE.")
	}
	r, ok := e.m.repeats[parts[0].name]
	if !ok {
		return fail(rng, "Reference to undeclared repeat block",
			"There is no repeat block %q.%s", parts[0].name, Suggest(parts[0].name, slices.Sorted(maps.Keys(e.m.repeats))))
	}
	if r, parts, ok = e.pickRepeat(r, parts, rng); !ok { // repeat.R["KEY"] (repeat_foreach.go)
		return Ref{}, "", false
	}
	if len(parts) < 2 || parts[1].isIdx {
		return fail(rng, "Invalid reference", "Write repeat.%s.last.VALUE or repeat.%s.round[N].VALUE.", r.instanceName(), r.instanceName())
	}
	if sc.repeat != nil && r.origin() == sc.repeat.origin() {
		return fail(rng, "Invalid reference",
			"Inside repeat %q, refer to the previous round with previous.NAME.", r.name)
	}
	n := e.roundsFor(r)
	if n == 0 {
		return Ref{}, "", false // the rounds expression was already reported
	}
	rest := parts[2:]
	var round int
	switch parts[1].name {
	case "last":
		round = n
	case "round":
		if r.loop != nil {
			return fail(parts[1].rng, "Round of a repeat with until",
				"Repeat %s stops by `until`, so which of its rounds run is known only at run time; read its selected round with repeat.%s.last.NAME.", r.quoted(), r.instanceName())
		}
		if len(rest) < 1 || !rest[0].isIdx {
			return fail(rng, "Invalid reference", "Write repeat.%s.round[N].VALUE with N from 1 to %d.", r.instanceName(), n)
		}
		if rest[0].index < 1 || rest[0].index > int64(n) {
			return fail(rest[0].rng, "Round out of range",
				"Repeat %s has %d rounds; round[%d] does not exist.", r.quoted(), n, rest[0].index)
		}
		round = int(rest[0].index)
		rest = rest[1:]
	default:
		return fail(parts[1].rng, "Invalid reference",
			"After repeat.%s comes last or round[N], not %q.", r.instanceName(), parts[1].name)
	}
	if len(rest) < 1 || rest[0].isIdx {
		return fail(rng, "Invalid reference", "Name a value of repeat %q: %s.", r.name, strings.Join(r.nextOrder, ", "))
	}
	x := rest[0].name
	expr, ok := r.next[x]
	if !ok {
		return fail(rest[0].rng, "Unknown repeat value",
			"Repeat %q's next has no value %q.%s It defines: %s.", r.name, x, Suggest(x, r.nextOrder), strings.Join(r.nextOrder, ", "))
	}
	ref, kind, good := e.carried("next", r, round, x, expr, scope{repeat: r, round: round})
	if !good {
		return Ref{}, "", false
	}
	path, good := pathOf(rest[1:])
	if !good {
		return fail(rng, "Invalid reference", "Keys after a value are names.")
	}
	ref.Path = append(append([]string(nil), ref.Path...), path...)
	return ref, kind, true
}

// carried resolves a start or next value of repeat r, guarding against
// repeat blocks whose start values refer to each other in a loop.
func (e *evaluator) carried(which string, r *repeatBlock, round int, x string, expr hcl.Expression, sc scope) (Ref, registry.Kind, bool) {
	key := fmt.Sprintf("%s/%s/%d/%s", which, r.instanceName(), round, x)
	if e.resolving[key] {
		e.errorf(expr.Range(), "Circular reference", "%s.%s of repeat %s depends on itself.", which, x, r.quoted())
		return Ref{}, "", false
	}
	e.resolving[key] = true
	defer delete(e.resolving, key)
	defer e.enterRepeat(r)() // each of r's key, if any (repeat_foreach.go)
	return e.resolve(expr, sc, false)
}

// checkCarry checks once per repeat block that each start value and its
// next value are artifacts of the same kind.
func (e *evaluator) checkCarry(r *repeatBlock) {
	if e.roundsFor(r) == 0 {
		return
	}
	for _, x := range r.nextOrder {
		startExpr, ok := r.start[x]
		if !ok {
			continue
		}
		_, k1, ok1 := e.carried("start", r, 0, x, startExpr, scope{})
		_, k2, ok2 := e.carried("next", r, 1, x, r.next[x], scope{repeat: r, round: 1})
		if ok1 && ok2 && k1 != k2 {
			e.errorf(r.next[x].Range(), "Artifact kind mismatch",
				"next.%s is of kind %s but start.%s is of kind %s; both feed previous.%s.", x, k2, x, k1, x)
		}
	}
}

func (e *evaluator) visibleStages(sc scope) []string {
	var out []string
	for name, s := range e.m.stages {
		if s.repeat == nil || (sc.repeat != nil && s.repeat == sc.repeat.origin()) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// str evaluates an optional string attribute.
func (e *evaluator) str(attrs hcl.Attributes, name string) string {
	a, ok := attrs[name]
	if !ok || !e.checkVars(a.Expr, "This attribute") {
		return ""
	}
	v, diags := a.Expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() {
		return ""
	}
	v, err := convert.Convert(v, cty.String)
	if err != nil {
		e.errorf(a.Expr.Range(), "Invalid "+name, "%s must be a string.", name)
		return ""
	}
	return v.AsString()
}

// num evaluates an optional number attribute.
func (e *evaluator) num(attrs hcl.Attributes, name string, def float64) float64 {
	a, ok := attrs[name]
	if !ok || !e.checkVars(a.Expr, "This attribute") {
		return def
	}
	v, diags := a.Expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() {
		return def
	}
	v, err := convert.Convert(v, cty.Number)
	if err != nil {
		e.errorf(a.Expr.Range(), "Invalid "+name, "%s must be a number.", name)
		return def
	}
	f, _ := v.AsBigFloat().Float64()
	return f
}

// validateParams runs the stage type's value checks (registry.Validator)
// and reports each bad parameter at the expression that set it: the
// override (profile, --set, grid cell) or the stage block's attribute; a
// default that the checks refuse is reported at the stage block.
func (e *evaluator) validateParams(s *stageBlock, decoded any) bool {
	err := s.typ.ValidateParams(decoded)
	if err == nil {
		return true
	}
	params, other := registry.ParamErrors(err)
	for _, pe := range params {
		rng := s.defRange
		how := "its default"
		if expr, _ := e.attrExpr(s, pe.Param); expr != nil {
			rng, how = expr.Range(), ""
		}
		detail := fmt.Sprintf("Parameter %q of %s: %s.", pe.Param, s.typ.Name, pe.Msg)
		if how != "" {
			detail = fmt.Sprintf("Parameter %q of %s (%s): %s.", pe.Param, s.typ.Name, how, pe.Msg)
		}
		e.diags = append(e.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for parameter", Detail: detail, Subject: rng.Ptr()})
	}
	for _, o := range other {
		e.errorf(s.defRange, "Invalid parameters", "Stage %q (%s): %v.", s.name, s.typ.Name, o)
	}
	return false
}
