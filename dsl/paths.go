package dsl

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Paths. A parameter that names something on disk (registry.Param.Path)
// resolves a relative value against the directory of the file that writes
// it, as a module's source does, so an experiment names its own fixtures
// the same way wherever repro is started; a value typed on the command line
// (-var, --set) resolves against the working directory, as a shell user
// expects. What it names must exist, and be the kind of thing the
// parameter reads (a file; a directory; a checkpoint directory with a
// config.json), or the load fails at the line that sets it: `repro
// validate` says what `repro run` would refuse, before anything runs.
//
// Where a value is written follows the value, not the attribute: a
// variable's strings carry their origin (a cty mark: the working directory
// for a -var, the declaring file's directory for a default, the profile's
// file for a profile's value), through locals, each.value and conditionals,
// so `path = each.value` over { a = var.a, b = "b.txt" } resolves a -var's
// relative a against the working directory and b against the file. A
// string that no variable's value begins (a literal, or one a conditional
// only chose by a variable) resolves against the file of the attribute
// that sets it, as a literal written there does. The marks live only in a
// second evaluation of the attribute (pathShadow): the values the stage
// sees, its key included, are evaluated as before.
//
// The resolved, absolute path is what the stage sees (and its parameters
// encode, so it is in the cache key, as a -var path always was); the
// content the path holds is in the key too, through the type's Externals.

// resolvePath resolves value, written by expr, and checks it.
// s is the stage (or for_each instance) whose parameter it is.
func (e *evaluator) resolvePath(s *stageBlock, expr hcl.Expression, kind registry.PathKind, value string) (string, error) {
	path, where := value, ""
	if !filepath.IsAbs(value) {
		base, what := e.pathBase(expr)
		if o, ok := e.valueOrigin(s, expr, value); ok {
			base, what = o.base, o.what
		}
		path = filepath.Join(base, value)
		where = fmt.Sprintf(" (a relative path resolves against %s)", what)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if err := registry.CheckPath(kind, path); err != nil {
		return "", fmt.Errorf("%v%s", err, where)
	}
	return path, nil
}

// pathBase is the directory a relative value written by expr resolves
// against, and its description. A var.NAME reference resolves where the
// variable's value is written: a -var on the command line, or the file
// that declares it.
func (e *evaluator) pathBase(expr hcl.Expression) (string, string) {
	if t, ok := expr.(*hclsyntax.ScopeTraversalExpr); ok && t.Traversal.RootName() == "var" && len(t.Traversal) == 2 {
		if a, ok := t.Traversal[1].(hcl.TraverseAttr); ok {
			if o, ok := e.ovr["var."+a.Name]; ok {
				return e.pathBase(o.expr)
			}
			if v, ok := e.m.variables[a.Name]; ok {
				return fileBase(v.rng.Filename)
			}
		}
	}
	return fileBase(expr.Range().Filename)
}

// valueRange is where the value of expr is written: for var.NAME set by
// an override (-var, a profile, a module argument) the override's value,
// else expr itself. A module argument passes it on, so a relative -var
// path handed to a module still resolves against the working directory.
func (e *evaluator) valueRange(expr hcl.Expression) hcl.Range {
	if t, ok := expr.(*hclsyntax.ScopeTraversalExpr); ok && t.Traversal.RootName() == "var" && len(t.Traversal) == 2 {
		if a, ok := t.Traversal[1].(hcl.TraverseAttr); ok {
			if o, ok := e.ovr["var."+a.Name]; ok {
				return e.valueRange(o.expr)
			}
		}
	}
	return expr.Range()
}

// fileBase is the directory of an HCL file, or the working directory for
// the synthetic files that hold command-line values.
func fileBase(filename string) (string, string) {
	if fi, err := os.Stat(filename); err == nil && !fi.IsDir() {
		dir := filepath.Dir(filename)
		return dir, "the directory of " + filename
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = "."
	}
	return wd, fmt.Sprintf("the working directory, %s, for a command-line value", wd)
}

// pathOrigin marks a string a variable's value holds (value) with where
// that value is written: base is the directory a relative path in it
// resolves against, what says so in a message.
type pathOrigin struct {
	value, base, what string
}

// pathShadow is the second evaluation that carries origins: the variables
// with their strings marked, and the value locals evaluated from them.
type pathShadow struct {
	ctx *hcl.EvalContext // var and local, marked
}

// varOrigin is where variable name's value is written: the override's
// value (a -var: the working directory; a profile or a module argument:
// its file), else the declaring file.
func (e *evaluator) varOrigin(name string) (string, string) {
	if o, ok := e.ovr["var."+name]; ok {
		return e.pathBase(o.expr)
	}
	return fileBase(e.m.variables[name].rng.Filename)
}

// markStrings marks every known string in v with its origin.
func markStrings(v cty.Value, base, what string) cty.Value {
	out, err := cty.Transform(v, func(_ cty.Path, x cty.Value) (cty.Value, error) {
		if x.IsMarked() {
			return x, nil
		}
		if x.IsKnown() && !x.IsNull() && x.Type() == cty.String {
			return x.Mark(pathOrigin{value: x.AsString(), base: base, what: what}), nil
		}
		return x, nil
	})
	if err != nil {
		return v
	}
	return out
}

// shadowCtx builds (once) the marked variables and locals.
func (e *evaluator) shadowCtx() *hcl.EvalContext {
	if e.shadow != nil {
		return e.shadow.ctx
	}
	vars := map[string]cty.Value{}
	for _, name := range e.m.varOrder {
		v, ok := e.vars[name]
		if !ok {
			continue
		}
		base, what := e.varOrigin(name)
		vars[name] = markStrings(v, base, what)
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(vars), "local": cty.EmptyObjectVal},
		Functions: functions(),
	}
	// The value locals in dependency order, as locals() does; one that
	// fails here keeps its unmarked value, and a local holding stage
	// references has none (its strings resolve as literals).
	done := map[string]cty.Value{}
	var pending []string
	for _, name := range e.m.localOrder {
		if e.lr == nil || !e.lr.refs[name] {
			pending = append(pending, name)
		}
	}
	for len(pending) > 0 {
		var still []string
		for _, name := range pending {
			ready := true
			for _, t := range e.m.locals[name].Expr.Variables() {
				dep, _ := traverseAttr(t)
				if _, declared := e.m.locals[dep]; t.RootName() == "local" && declared {
					if _, ok := done[dep]; !ok {
						ready = false
					}
				}
			}
			if !ready {
				still = append(still, name)
				continue
			}
			ctx.Variables["local"] = cty.ObjectVal(done)
			v, diags := e.m.locals[name].Expr.Value(ctx)
			if diags.HasErrors() {
				v = cty.DynamicVal
				if e.lr != nil {
					if plain, ok := e.lr.done[name]; ok {
						v = plain
					}
				}
			}
			done[name] = v
		}
		if len(still) == len(pending) {
			break // a cycle, reported by locals()
		}
		pending = still
	}
	ctx.Variables["local"] = cty.ObjectVal(done)
	e.shadow = &pathShadow{ctx: ctx}
	return ctx
}

// shadowEach is each for instance s with the strings of its element
// marked: s's for_each evaluated again over the marked values. ok is false
// when it cannot be (a for_each over stage instances: no strings of a
// variable there).
func (e *evaluator) shadowEach(s *stageBlock, ctx *hcl.EvalContext) (cty.Value, bool) {
	if s.inst == nil || s.inst.block == nil {
		return cty.NilVal, false
	}
	expr := s.inst.block.forEach
	if o, ok := e.stageOvr(s.inst.block, "for_each"); ok {
		expr = o.expr
	}
	if expr == nil {
		return cty.NilVal, false
	}
	v, diags := expr.Value(ctx)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() {
		return cty.NilVal, false
	}
	v, marks := v.Unmark()
	ty := v.Type()
	if !(ty.IsListType() || ty.IsSetType() || ty.IsTupleType() || ty.IsMapType() || ty.IsObjectType()) {
		return cty.NilVal, false
	}
	list := !(ty.IsMapType() || ty.IsObjectType())
	for it := v.ElementIterator(); it.Next(); {
		k, el := it.Element()
		if list {
			k, _ = el.Unmark()
		}
		if !k.IsKnown() || k.IsNull() || k.Type() != cty.String || k.AsString() != s.inst.key {
			continue
		}
		return cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(s.inst.key), "value": el.WithMarks(marks)}), true
	}
	return cty.NilVal, false
}

// valueOrigin is the origin of value, the string expr gives in stage s:
// expr evaluated over the marked variables, the origin of the longest
// variable string value is or begins (VALUE, VALUE/...). ok is false for a
// string no variable's value begins.
func (e *evaluator) valueOrigin(s *stageBlock, expr hcl.Expression, value string) (pathOrigin, bool) {
	if e.m == nil || e.ctx == nil {
		return pathOrigin{}, false
	}
	ctx := e.ctx.NewChild()
	ctx.Variables = maps.Clone(e.shadowCtx().Variables)
	if s != nil {
		if each, ok := e.shadowEach(s, ctx); ok {
			ctx.Variables["each"] = each
		}
	}
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return pathOrigin{}, false
	}
	_, marks := v.UnmarkDeep()
	var best pathOrigin
	found := false
	for m := range marks {
		o, ok := m.(pathOrigin)
		if !ok || o.value == "" || len(o.value) <= len(best.value) {
			continue
		}
		if value == o.value || strings.HasPrefix(value, strings.TrimSuffix(o.value, "/")+"/") {
			best, found = o, true
		}
	}
	return best, found
}
