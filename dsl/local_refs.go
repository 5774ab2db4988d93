package dsl

import (
	"fmt"
	"slices"
	"strings"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Local values that hold stage references:
//
//	locals {
//	  encoders = { bert = stage.train_bert.model, roberta = stage.train_roberta.model }
//	  trained  = merge(stage.train, { base = stage.base })   # instances and stages, as for_each lists them
//	  nli      = { data = stage.nli.triplets, dev = stage.stsb_dev.pairs }
//	}
//	stage "eval"  { for_each = local.encoders  encoder = each.value ... }
//	stage "probe" { encoder = local.encoders.bert ... }
//	stage "train" { params = [local.nli, local.settings] ... }   # inputs spread like parameters
//
// A local whose expression reads stage.*, module.*, repeat.* or input.*
// (or another such local) holds references: stage.S.OUT (and
// stage.S["KEY"].OUT, module.M.S.OUT, module.M.OUT, repeat.R.last.X,
// input.X) is that output, stage.S the object of S's outputs, and
// stage.S of a for_each stage the object of its instances, as `for_each`
// reads them (foreach.go). Such a local is evaluated after the variables,
// the value locals, the repeat blocks' rounds and -- on first use -- the
// modules and for_each expansions it reads, so an input that reads it,
// a for_each over it and a table cell's metric through it (value =
// local.encoders.bert... for a metrics output) name exactly the outputs
// the references name: the same edges, graph and keys as writing the
// references out. A parameter, a variable of a module block or any other
// value cannot read the references (they are artifacts, written when a
// stage runs): "Stage output in a value" at the read; a local holding
// references may still give values (length(local.encoders),
// keys(local.encoders)).
//
// Cycles: locals that read each other in a loop are reported at each
// local's expression ("Circular local value", with the chain), and a
// local that reads the instances of a stage whose for_each reads that
// local at the reference ("Circular reference"); a stage whose input
// reads a local that reads the stage's own output is a dependency cycle
// among the instances, reported at the input.

// localRefs is one evaluation's state of the locals that hold references.
type localRefs struct {
	refs  map[string]bool      // the locals that hold references (transitively)
	done  map[string]cty.Value // every local evaluated so far
	stack []string             // what is being evaluated: "local.NAME", and the for_each of a stage a local reads
	root  *hcl.EvalContext     // the file's context; its "local" is done
}

var refRoots = []string{"stage", "module", "repeat", "input"}

// valueLocals is the declared locals less those that hold references,
// which are left to refLocal; it sets up e.lr for those.
func (e *evaluator) valueLocals() []string {
	refs := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, name := range e.m.localOrder {
			if refs[name] {
				continue
			}
			for _, t := range e.m.locals[name].Expr.Variables() {
				root := t.RootName()
				dep, _ := traverseAttr(t)
				if slices.Contains(refRoots, root) || (root == "local" && refs[dep]) {
					refs[name], changed = true, true
					break
				}
			}
		}
	}
	e.lr = &localRefs{refs: refs}
	var out []string
	for _, name := range e.m.localOrder {
		if !refs[name] {
			out = append(out, name)
		}
	}
	return out
}

// refLocalsReady records the value locals (done) and the file's context.
func (e *evaluator) refLocalsReady(done map[string]cty.Value) {
	e.lr.done, e.lr.root = done, e.ctx
}

// allRefLocals evaluates every local that holds references, so that the
// file's context holds them all from here on and an unused one's errors
// are reported too.
func (e *evaluator) allRefLocals() {
	for _, name := range e.m.localOrder {
		if e.lr.refs[name] {
			e.refLocal(name)
		}
	}
}

// refLocal evaluates local NAME, which holds references, once; false when
// it failed (reported).
func (e *evaluator) refLocal(name string) bool {
	lr := e.lr
	if v, done := lr.done[name]; done {
		return v != cty.DynamicVal
	}
	a := e.m.locals[name]
	if i := slices.Index(lr.stack, "local."+name); i >= 0 {
		chain := append(append([]string(nil), lr.stack[i:]...), "local."+name)
		for _, n := range chain[:len(chain)-1] {
			if l, ok := strings.CutPrefix(n, "local."); ok {
				e.errorf(e.m.locals[l].Expr.Range(), "Circular local value",
					"local.%s depends on itself (through: %s).", l, strings.Join(chain, " -> "))
			}
		}
		return false
	}
	lr.stack = append(lr.stack, "local."+name)
	saved := e.ctx
	e.ctx = lr.root // a local is evaluated in the file's scope, never an instance's
	v, ok := e.refExprValue(a.Expr)
	e.ctx = saved
	lr.stack = lr.stack[:len(lr.stack)-1]
	if _, set := lr.done[name]; set {
		return false // a cycle through this local was reported meanwhile
	}
	if !ok {
		v = cty.DynamicVal
	}
	lr.done[name] = v
	lr.root.Variables["local"] = cty.ObjectVal(lr.done)
	return ok
}

// refsHidden leaves the reference roots out of an expression's Variables,
// so that checkVars checks the rest (var., local., functions).
type refsHidden struct{ hcl.Expression }

func (x refsHidden) Variables() []hcl.Traversal {
	var out []hcl.Traversal
	for _, t := range x.Expression.Variables() {
		if !slices.Contains(refRoots, t.RootName()) {
			out = append(out, t)
		}
	}
	return out
}

// refExprValue evaluates a local's expression with each reference in it
// bound to the output (or the object of outputs) it names.
func (e *evaluator) refExprValue(expr hcl.Expression) (cty.Value, bool) {
	roots := map[string]*refTree{}
	ok := true
	for _, t := range expr.Variables() {
		if !slices.Contains(refRoots, t.RootName()) {
			continue
		}
		parts, good := steps(t)
		if !good {
			e.errorf(t.SourceRange(), "Invalid reference", "A reference is %s.", refForms)
			ok = false
			continue
		}
		v, good := e.refValue(t.RootName(), parts, t.SourceRange())
		if !good {
			ok = false
			continue
		}
		tree := roots[t.RootName()]
		if tree == nil {
			tree = &refTree{}
			roots[t.RootName()] = tree
		}
		for _, p := range parts {
			tree = tree.child(p)
		}
		tree.leaf = &v
	}
	if !e.checkVars(refsHidden{expr}, "a local value") || !ok {
		return cty.NilVal, false
	}
	ctx := e.ctx.NewChild()
	ctx.Variables = map[string]cty.Value{}
	for root, tree := range roots {
		ctx.Variables[root] = tree.value()
	}
	v, diags := expr.Value(ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsKnown() {
		return cty.NilVal, false
	}
	return v, true
}

// refValue is the value of a reference in a local: an output, or a whole
// stage (the object of its outputs), or a whole for_each stage (the
// object of its instances).
func (e *evaluator) refValue(root string, parts []step, rng hcl.Range) (cty.Value, bool) {
	if root == "stage" && len(parts) >= 1 && !parts[0].isIdx {
		if s := e.m.stages[parts[0].name]; s != nil && s.repeat == nil {
			if s.typ == nil {
				return cty.NilVal, false // reported
			}
			whole := len(parts) == 1 || (len(parts) == 2 && parts[1].key && s.forEach != nil)
			if s.forEach != nil && e.fe != nil && slices.Contains(e.fe.expanding, s) {
				e.errorf(rng, "Circular reference",
					"%s reads the instances of stage %q while its for_each is being evaluated, and that for_each reads %s.",
					traversalString(stepsTrav(root, parts)), s.name, strings.Join(e.lr.stack, " -> "))
				return cty.NilVal, false
			}
			if s.forEach != nil { // the chain a cycle through the for_each reports
				e.lr.stack = append(e.lr.stack, fmt.Sprintf("the for_each of stage %q", s.name))
				defer func() { e.lr.stack = e.lr.stack[:len(e.lr.stack)-1] }()
			}
			switch {
			case whole && s.forEach == nil:
				return e.outputsOf(s), true
			case whole && len(parts) == 1:
				insts, ok := e.expand(s)
				if !ok {
					return cty.NilVal, false
				}
				m := map[string]cty.Value{}
				for _, c := range insts {
					m[c.inst.key] = e.outputsOf(c)
				}
				return cty.ObjectVal(m), true
			case whole:
				c, _, ok := e.pickInstance(s, append(parts, step{name: "x"}), rng, e)
				if !ok {
					return cty.NilVal, false
				}
				return e.outputsOf(c), true
			}
		}
	}
	if root == "module" && len(parts) == 2 && !parts[0].isIdx && !parts[1].isIdx && !e.isModuleOutput(parts[0].name, parts[1].name) {
		if c := e.m.calls[parts[0].name]; c != nil && c.child != nil {
			if s := c.child.stages[parts[1].name]; s != nil && s.typ != nil && s.repeat == nil && s.forEach == nil {
				m := map[string]cty.Value{}
				for _, p := range s.typ.Outputs {
					ref, kind, ok := e.resolveModule(append(append([]step(nil), parts...), step{name: p.Name}), rng)
					if !ok {
						return cty.NilVal, false
					}
					m[p.Name] = cty.CapsuleVal(outputType, &instOutput{ref: ref, kind: kind})
				}
				return cty.ObjectVal(m), true
			}
		}
	}
	ref, kind, ok := e.resolveTrav(root, parts, rng, scope{})
	if !ok {
		return cty.NilVal, false
	}
	return cty.CapsuleVal(outputType, &instOutput{ref: ref, kind: kind}), true
}

func stepsTrav(root string, parts []step) hcl.Traversal {
	t := hcl.Traversal{hcl.TraverseRoot{Name: root}}
	for _, p := range parts {
		switch {
		case p.isIdx:
			t = append(t, hcl.TraverseIndex{Key: cty.NumberIntVal(p.index)})
		case p.key:
			t = append(t, hcl.TraverseIndex{Key: cty.StringVal(p.name)})
		default:
			t = append(t, hcl.TraverseAttr{Name: p.name})
		}
	}
	return t
}

// localPlain checks a value's read of local NAME (t): evaluated first when
// it holds references, and refused when what it reads is a stage output
// (for_each and other locals may read them).
func (e *evaluator) localPlain(t hcl.Traversal, name, what string) bool {
	if e.lr == nil || !e.lr.refs[name] {
		return true
	}
	if !e.refLocal(name) {
		return false
	}
	if what == "for_each" || what == "a local value" {
		return true
	}
	v, diags := t.TraverseAbs(e.lr.root)
	if diags.HasErrors() || !v.IsKnown() || !holdsOutput(v) {
		return true // HCL reports a bad traversal where the value is evaluated
	}
	e.errorf(t.SourceRange(), "Stage output in a value",
		"%s holds stage outputs (artifacts, written when a stage runs): an input reads it (encoder = local.%s...), a for_each iterates over it; %s cannot.",
		traversalString(t), name, strings.ToLower(what[:1])+what[1:])
	return false
}

// resolveLocal resolves local.NAME[.key...] as an input or a metric: the
// stage output the local holds there, with the keys after it as the path.
func (e *evaluator) resolveLocal(parts []step, rng hcl.Range) (Ref, registry.Kind, bool) {
	if len(parts) < 1 || parts[0].isIdx {
		return e.refFail(rng, "Invalid reference", "Write local.NAME.")
	}
	name := parts[0].name
	if _, ok := e.m.locals[name]; !ok {
		return e.refFail(rng, "Undeclared local value", "There is no local value %q.%s", name, Suggest(name, e.m.localOrder))
	}
	if e.lr != nil && e.lr.refs[name] && !e.refLocal(name) {
		return Ref{}, "", false
	}
	var v cty.Value
	if e.lr != nil && e.lr.done != nil {
		v = e.lr.done[name]
	}
	for i := 1; ; i++ {
		if v == cty.NilVal || !v.IsKnown() {
			return Ref{}, "", false // reported where the local is evaluated
		}
		if v.Type().Equals(outputType) && !v.IsNull() {
			o := v.EncapsulatedValue().(*instOutput)
			path, ok := pathOf(parts[i:])
			if !ok {
				return e.refFail(rng, "Invalid reference", "Keys after an output are names, such as local.%s.metrics.avg.", name)
			}
			ref := o.ref
			ref.Path = append(append([]string(nil), o.ref.Path...), path...)
			return ref, o.kind, true
		}
		if i >= len(parts) || v.IsNull() {
			break
		}
		key := cty.StringVal(parts[i].name)
		if parts[i].isIdx {
			key = cty.NumberIntVal(parts[i].index)
		}
		ty := v.Type()
		switch {
		case ty.IsObjectType() && !parts[i].isIdx && ty.HasAttribute(parts[i].name):
			v = v.GetAttr(parts[i].name)
		case (ty.IsMapType() || ty.IsListType() || ty.IsTupleType()) && v.HasIndex(key).True():
			v = v.Index(key)
		default:
			el := fmt.Sprintf("%q", parts[i].name)
			if parts[i].isIdx {
				el = fmt.Sprint(parts[i].index)
			}
			return e.refFail(parts[i].rng, "Invalid reference", "%s has no element %s.", traversalString(stepsTrav("local", parts[:i])), el)
		}
	}
	return e.refFail(rng, "Not a stage output",
		"%s is not a stage output but a value of type %s: an input reads stage.NAME.OUTPUT, or a local value that holds one (local.NAME = stage.S.OUTPUT, or a map of them).",
		traversalString(stepsTrav("local", parts)), v.Type().FriendlyName())
}
