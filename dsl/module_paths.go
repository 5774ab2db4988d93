package dsl

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Override paths into modules. A stage of a module block is addressed the
// way plan and graph name its instances, module.M.STAGE, followed by what
// stage.STAGE would be followed by in the module's own file:
//
//	--set module.open.filter.alpha=0.5               # a parameter (or seed, or an input)
//	--set 'module.open.generate["entail"].top_p=0.8'  # one instance of a for_each stage
//	--set module.open.filter.resources.cpus=2         # a resource
//	--set module.a.module.b.train.epochs=2            # a stage of module a's module b
//	vary = { "module.open.filter.alpha" = [0.5, 0.9] } # ablation axes and variant sets alike
//	--target module.open.filter                       # that instance and what it needs
//	--target module.open.generate                     # every instance of a for_each module stage
//
// The value is evaluated in the file that writes the path (the including
// file's var. and local.; an input's reference to its stages), exactly as a
// module block's argument is, then handed to the module's evaluation as the
// last override of that stage, above the module's own profile. So a --set
// into module "open" changes module.open.filter's key and the keys of what
// reads it, and nothing of module "in" that uses the same file.
//
// Diagnostics, at the path (the --set flag, the ablation key): a module the
// file does not declare (listing those it does), a stage the module does not
// declare at its top level (listing those it does), a path that stops at the
// module or at the stage, and every error stage.STAGE.ATTRIBUTE would get in
// the module's own file (an unknown attribute, `uses`, an instance key on a
// stage without for_each), with the path spelled as written. A module's
// variables and inputs are set by its module block (or a profile's module
// block), not by a path.

// targetModuleStage marks an override of a stage inside module block
// target.name; target.inner is the override in the module's own file (a
// targetStage or targetResource path, or another targetModuleStage for a
// module of the module).
const targetModuleStage targetKind = 102

// moduleTarget resolves an override path that starts with "module.".
func (d *decoder) moduleTarget(path string, rng hcl.Range) (target, bool) {
	bad := func(summary, format string, args ...any) (target, bool) {
		d.errorf(rng, summary, "%q: "+format, append([]any{path}, args...)...)
		return target{}, false
	}
	rest := strings.TrimPrefix(path, "module.")
	name, tail, _ := strings.Cut(rest, ".")
	if name == "" || strings.ContainsAny(name, "[]\"") {
		return bad("Invalid override path", "a stage of a module is module.NAME.STAGE.ATTRIBUTE, as plan names it (module.pretrained.bert).")
	}
	c, ok := d.m.calls[name]
	if !ok {
		return bad("Unknown module", "%s declares no module %q.%s Declared: %s.", d.m.filename, name,
			Suggest(name, d.m.callOrder), listOrNone(d.m.callOrder))
	}
	if c.child == nil {
		return target{}, false // the module's own failure was reported
	}
	stages := topStages(c.child)
	sname := tail
	if i := strings.IndexAny(tail, ".["); i >= 0 {
		sname = tail[:i]
	}
	if sname == "module" && strings.HasPrefix(tail, "module.") { // a module of the module
		inner, ok := d.intoModule(c, path, tail, rng)
		if !ok {
			return target{}, false
		}
		return target{kind: targetModuleStage, name: name, inner: &inner, path: "module." + name + "." + inner.path}, true
	}
	if sname == "" || tail == sname {
		what := "its stage and attribute"
		if sname != "" {
			what = "an attribute of the stage"
		}
		return bad("Invalid override path", "name %s: module.%s.STAGE.ATTRIBUTE (module %q's stages: %s). A module's variables and inputs are set in its module block.",
			what, name, name, listOrNone(stages))
	}
	if s, ok := c.child.stages[sname]; !ok || s.repeat != nil {
		return bad("Unknown module stage", "module %q (%s) has no top-level stage %q.%s Its stages: %s.", name, c.path, sname,
			Suggest(sname, stages), listOrNone(stages))
	}
	inner, ok := d.intoModule(c, path, "stage."+tail, rng)
	if !ok {
		return target{}, false
	}
	return target{kind: targetModuleStage, name: name, inner: &inner, path: "module." + name + "." + strings.TrimPrefix(inner.path, "stage.")}, true
}

// intoModule resolves inner, a path of module c's own file, for the path
// written here; the module file's diagnostics name the path as written.
func (d *decoder) intoModule(c *moduleCall, path, inner string, rng hcl.Range) (target, bool) {
	cd := &decoder{reg: d.reg, m: c.child}
	t, ok := cd.target(inner, rng)
	for _, dg := range cd.diags {
		dg.Detail = strings.ReplaceAll(dg.Detail, fmt.Sprintf("%q", inner), fmt.Sprintf("%q", path))
		if s := strings.TrimPrefix(inner, "stage."); s != inner {
			// stage.S.ATTR in messages about the module's stage S
			stage := s
			if i := strings.IndexAny(s, ".["); i >= 0 {
				stage = s[:i]
			}
			dg.Detail = strings.ReplaceAll(dg.Detail, "stage."+stage, "module."+c.name+"."+stage)
		}
		dg.Detail = fmt.Sprintf("In module %q (%s): %s", c.name, c.path, dg.Detail)
	}
	d.diags = append(d.diags, cd.diags...)
	return t, ok
}

// leaf is the override of a stage's own attribute behind t, through any
// number of modules.
func (t *target) leaf() *target {
	for t.kind == targetModuleStage && t.inner != nil {
		t = t.inner
	}
	return t
}

// isInput reports whether t sets an input port of a stage (a reference,
// resolved where the path is written).
func (t *target) isInput() bool {
	l := t.leaf()
	if l.kind != targetStage || l.stage == nil || l.stage.typ == nil {
		return false
	}
	_, ok := l.stage.typ.Input(l.attr)
	return ok
}

// passedRef carries an input override's reference, resolved in the file
// that writes it, into a module's evaluation (resolve returns it as is).
type passedRef struct {
	ref  Ref
	kind registry.Kind
	rng  hcl.Range
}

func (x *passedRef) Value(*hcl.EvalContext) (cty.Value, hcl.Diagnostics) { return cty.DynamicVal, nil }
func (x *passedRef) Variables() []hcl.Traversal                          { return nil }
func (x *passedRef) Range() hcl.Range                                    { return x.rng }
func (x *passedRef) StartRange() hcl.Range                               { return x.rng }

// overridesInto returns the overrides of e that address a stage of module
// block name, rewritten for the module's evaluation: values evaluated here,
// references resolved here.
func (e *evaluator) overridesInto(name string) []override {
	var out []override
	for _, path := range slices.Sorted(maps.Keys(e.ovr)) {
		o := e.ovr[path]
		if o.target.kind != targetModuleStage || o.target.name != name || o.target.inner == nil {
			continue
		}
		in := o
		in.target = *o.target.inner
		if o.target.isInput() {
			if isNull(o.expr) {
				in.expr = o.expr
			} else {
				ref, kind, ok := e.resolve(o.expr, scope{}, false)
				if !ok {
					continue
				}
				in.expr = &passedRef{ref: ref, kind: kind, rng: o.expr.Range()}
			}
		} else if _, passed := o.expr.(*passedRef); !passed {
			if !e.checkVars(o.expr, "A value set in a module stage") {
				continue
			}
			v, diags := o.expr.Value(e.ctx)
			e.diags = append(e.diags, diags...)
			if diags.HasErrors() {
				continue
			}
			in.expr = hcl.StaticExpr(v, o.expr.Range())
		}
		out = append(out, in)
	}
	return out
}

// labelsFrom copies into e's labels what module block name's evaluation
// labelled for the overrides e passed it (the value a parameter took,
// converted to its type), under the paths written here, and spells those
// paths as written in the module's diagnostics about them.
func (e *evaluator) labelsFrom(name string, child *evaluator) {
	for path, o := range e.ovr {
		if o.target.kind != targetModuleStage || o.target.name != name || o.target.inner == nil || !o.label {
			continue
		}
		if o.target.isInput() {
			e.labels[path] = cty.StringVal(exprText(e.m, o.expr))
			continue
		}
		if v, ok := child.labels[o.target.inner.path]; ok {
			e.labels[path] = v
		}
	}
	// The module's diagnostics about a path written here (an instance
	// that does not exist) spell it as written.
	for _, o := range e.ovr {
		if o.target.kind == targetModuleStage && o.target.name == name && o.target.inner != nil {
			for _, d := range child.diags {
				if d.Subject != nil && *d.Subject == o.rng {
					d.Detail = strings.Replace(d.Detail, o.target.inner.path+":", o.target.path+":", 1)
				}
			}
		}
	}
}

// ---- --target ----

// TargetProblem explains why --target name selects nothing in v, for a
// name that addresses a module stage (module.M.STAGE...): the module or the
// stage is not declared (listing those that are), or the stage is declared
// but this pipeline does not use it. "" when name is not such a path or
// selects something.
func (c *Config) TargetProblem(v *Variant, name string) string {
	if c.mod == nil || !strings.HasPrefix(name, "module.") || len(v.Instances(name)) > 0 {
		return ""
	}
	m := c.mod
	rest := name
	var prefix []string
	for strings.HasPrefix(rest, "module.") {
		mod, tail, _ := strings.Cut(strings.TrimPrefix(rest, "module."), ".")
		call, ok := m.calls[mod]
		where := m.filename
		if !ok {
			return fmt.Sprintf("%s declares no module %q.%s Declared: %s.", where, mod, Suggest(mod, m.callOrder), listOrNone(m.callOrder))
		}
		if call.child == nil {
			return fmt.Sprintf("module %q (%s) could not be loaded.", mod, call.path)
		}
		prefix = append(prefix, "module."+mod)
		m, rest = call.child, tail
		if rest == "" {
			return fmt.Sprintf("name a stage of module %q: %s.STAGE (its stages: %s).", mod, strings.Join(prefix, "."), listOrNone(topStages(m)))
		}
		if !strings.HasPrefix(rest, "module.") {
			sname := rest
			if i := strings.IndexAny(rest, ".["); i >= 0 {
				sname = rest[:i]
			}
			s, ok := m.stages[sname]
			if !ok || s.repeat != nil {
				return fmt.Sprintf("module %q (%s) has no top-level stage %q.%s Its stages: %s.", mod, call.path, sname,
					Suggest(sname, topStages(m)), listOrNone(topStages(m)))
			}
			full := strings.Join(prefix, ".") + "." + sname
			if sname != rest && !strings.HasPrefix(rest[len(sname):], "[") {
				return fmt.Sprintf("a --target names a stage instance (%s), not an attribute.", full)
			}
			if insts := v.Instances(full); len(insts) > 0 {
				return fmt.Sprintf("%s has no instance %s; its instances: %s.", full, strconv.Quote(strings.Trim(rest[len(sname):], `[]"`)), strings.Join(insts, ", "))
			}
			return fmt.Sprintf("stage %q of module %q is not part of this pipeline: nothing here reads it (module stages run only when the including file reaches them), or it has no such instance.", sname, mod)
		}
	}
	return ""
}

// warnUnreached warns, for each override of e's (the loaded file's) that
// addresses a module stage no instance of which is part of the pipeline
// (nothing here reads it), that it changes nothing.
func (e *evaluator) warnUnreached() {
	names := map[string]bool{}
	for _, s := range e.stages {
		names[s.Name] = true
	}
	for _, path := range slices.Sorted(maps.Keys(e.ovr)) {
		o := e.ovr[path]
		if o.target.kind != targetModuleStage || o.target.inner == nil {
			continue
		}
		prefix := ""
		t := &o.target
		for t.kind == targetModuleStage && t.inner != nil {
			prefix += "module." + t.name + "."
			t = t.inner
		}
		if t.stage == nil {
			continue
		}
		inst := prefix + t.stage.name
		found := names[inst]
		for n := range names { // any instance of a for_each stage (a missing key is an error of its own)
			found = found || strings.HasPrefix(n, inst+"[")
		}
		if !found {
			r := o.rng
			e.diags = append(e.diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Module stage not in the pipeline",
				Detail: fmt.Sprintf("%s: nothing this file runs reads %s, so this changes nothing.", path, inst), Subject: &r})
		}
	}
}
