package dsl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Modules: one file uses the stages declared in another.
//
//	module "pretrained" {
//	  source = "./pretrained.hcl"   # relative to this file
//	  seed   = 42                   # sets the module's variable "seed"
//	}
//	stage "train" { uses = "train.simcse_unsup"  init = module.pretrained.bert.model }
//
// A module file is an ordinary experiment file (so it can be run on its
// own); when used as a module, only its variables, locals, stages, repeat
// blocks, profiles, deviations and own modules count; its expect and
// ablation blocks are checked but ignored; of its experiment block, the
// seed seeds its stages and the title names the module's tables in the
// including file's deviation list (below). module.M.S.OUT[.key...] names
// output OUT of the module's top-level stage S, like stage.S.OUT. Every
// stage is an output: a stage block is what there is to share, and naming
// it is what keeps one declaration from being copied.
//
// Only the module stages that the including file reaches (through stage
// inputs, expect values and ablation reports, and then their own inputs)
// become stage instances, named "module.M.S": a file that uses the mini BERT
// of a module declaring a BERT and a RoBERTa pretrains only the BERT, and a
// profile that does not reference the module runs none of it. Instance names
// never enter a stage's cache key, so two experiment files that use the same
// module stage with the same parameters share one cached result.
//
// Profiles propagate by name: loading the including file with profile P
// applies the module's own profile P, when it declares one; a module without
// P runs its stage blocks as written. The module block's other attributes set
// the module's variables (evaluated in the including file, with var. and
// local.), above the module profile's `variables`. -var sets the including
// file's variables only; --set, ablation paths and --target reach a module's
// stages as module.M.STAGE.ATTR (module_paths.go).
//
// A module's deviation blocks are about its stages, so they print in the
// reports of the file that runs them: after the file's own, those of each
// module instance whose stages the profile runs (in any variant), in
// module block order, a module's before those of the modules it uses; a
// module no stage reaches adds none. The profile filter is the file's: a
// deviation's profiles list is matched against the report's profile name,
// and a module's profile block adds its own when the module declares the
// report's profile (a module without profile P runs its stage blocks as
// written under P, yet its profiles = ["paper"] deviations do not print
// there: declare P and list it where they hold). Each carries its
// instances and file (a "from: module.chat (modules/syncse_chat.hcl)"
// line), and its tables, which are the module's, get the module's short
// name: its experiment title up to the first colon, "GenSE Table 2", "T5
// pretraining: held-out span corruption"; a name that already says whose
// ("DINO Table 1") is kept. A module file used twice prints a deviation
// once, naming both instances, unless its text differs between them (it
// reads the instance's variables): then one entry per instance, together.
// A module deviation's stand_ins declare what that instance's stages (and
// its submodules') read in the paper's place; the including file's cover
// every stage. deviation.go (moduleDeviations) holds the rules.
//
// Diagnostics inside a module point into the module's file. A source that
// cannot be read, a file that includes itself (directly or through other
// modules), an unknown module, stage or output, and an argument that names no
// variable of the module are reported at the spot in the including file.

// moduleCall is a module block.
type moduleCall struct {
	name   string
	path   string  // the module's file, as opened
	child  *module // nil when the file could not be loaded or decoded
	args   []*hcl.Attribute
	rng    hcl.Range
	srcRng hcl.Range
}

var moduleSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "source", Required: true}}}

// moduleCall decodes a module block and, through the loader, the file it
// names.
func (d *decoder) moduleCall(b *hcl.Block) {
	content, rest, diags := b.Body.PartialContent(moduleSchema)
	d.diags = append(d.diags, diags...)
	if !d.label(b, "module") {
		return
	}
	name := b.Labels[0]
	if prev, dup := d.m.calls[name]; dup {
		d.duplicate("module", name, b.LabelRanges[0], prev.rng)
		return
	}
	c := &moduleCall{name: name, rng: b.DefRange}
	d.m.calls[name] = c
	d.m.callOrder = append(d.m.callOrder, name)
	args, diags := rest.JustAttributes()
	d.diags = append(d.diags, diags...)
	c.args = sortedAttrs(args)
	src, ok := content.Attributes["source"]
	if !ok {
		return // reported by the schema
	}
	c.srcRng = src.Expr.Range()
	v, vd := src.Expr.Value(nil)
	if vd.HasErrors() || v.IsNull() || !v.IsKnown() || !v.Type().Equals(cty.String) || strings.TrimSpace(v.AsString()) == "" {
		d.errorf(src.Expr.Range(), "Invalid module source",
			"`source` must be a literal string naming an HCL file, relative to this file, such as \"./pretrained.hcl\".")
		return
	}
	c.path = filepath.Join(filepath.Dir(d.m.filename), filepath.FromSlash(v.AsString()))
	if d.loader == nil {
		d.errorf(src.Expr.Range(), "Modules not available", "This configuration was loaded without a file loader.")
		return
	}
	c.child = d.loader.decodeModuleFile(c.path, src.Expr.Range(), &d.diags)
	if c.child == nil {
		return
	}
	for _, a := range c.args {
		_, isVar := c.child.variables[a.Name]
		_, isInput := c.child.iface.inputs[a.Name]
		if !isVar && !isInput {
			d.errorf(a.NameRange, "Unsupported argument",
				"Module %q (%s) declares no variable or input %q.%s Its variables: %s; its inputs: %s.", name, c.path, a.Name,
				Suggest(a.Name, append(append([]string(nil), c.child.varOrder...), c.child.iface.inputOrder...)),
				listOrNone(c.child.varOrder), listOrNone(c.child.iface.inputOrder))
		}
	}
}

// decodeModuleFile reads, parses and decodes a module's file. Errors go to
// diags: reading and cycles at `at` (the source attribute), the file's own
// errors in the file. It returns nil when the file cannot be used.
func (l *Loader) decodeModuleFile(path string, at hcl.Range, diags *hcl.Diagnostics) *module {
	fail := func(summary, format string, args ...any) *module {
		r := at
		*diags = append(*diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: &r})
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	for i, p := range l.stack {
		if p == abs {
			chain := append(append([]string(nil), l.stackNames[i:]...), path)
			return fail("Module cycle", "The module files include each other in a loop: %s.", strings.Join(chain, " -> "))
		}
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return fail("Cannot read module", "%v.", err)
	}
	f, pd := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	pd = unterminatedFirst(pd)
	if f != nil {
		l.files[path] = f
	}
	*diags = append(*diags, pd...)
	if pd.HasErrors() || f == nil {
		return nil
	}
	l.stack = append(l.stack, abs)
	l.stackNames = append(l.stackNames, path)
	m, dd := decodeModule(path, src, f.Body, l.Registry, l)
	l.stack = l.stack[:len(l.stack)-1]
	l.stackNames = l.stackNames[:len(l.stackNames)-1]
	*diags = append(*diags, dd...)
	return m
}

// modules evaluates every module block of e's file: the arguments in e's
// scope (variables as values, inputs as references: module_inputs.go), then
// the module's file with its own profile of the same name (if it declares
// one) and those arguments as overrides.
func (e *evaluator) modules() {
	for _, name := range e.m.callOrder {
		e.module(name)
	}
}

// module evaluates module block name once and returns its evaluation (nil
// when the module could not be loaded, evaluating while it is under way).
// Blocks are evaluated in file order, except that one whose inputs read
// another's output block evaluates that one first.
func (e *evaluator) module(name string) *evaluator {
	if child, done := e.children[name]; done {
		return child
	}
	c := e.m.calls[name]
	if c == nil || c.child == nil {
		e.children[name] = nil
		return nil
	}
	e.children[name] = evaluating
	var ovrs []override
	if p, ok := c.child.profiles[e.profile]; ok && e.profile != "" {
		ovrs = append(ovrs, p.overrides...)
	}
	args := e.moduleArgs(c) // the block's, under the profile's module block
	for _, a := range args {
		if _, ok := c.child.variables[a.Name]; !ok || !e.checkVars(a.Expr, "A module argument") {
			continue
		}
		v, diags := a.Expr.Value(e.ctx)
		e.diags = append(e.diags, diags...)
		if diags.HasErrors() || !v.IsWhollyKnown() {
			continue
		}
		ovrs = append(ovrs, override{
			target: target{kind: targetVar, name: a.Name, path: "var." + a.Name},
			expr:   hcl.StaticExpr(v, e.valueRange(a.Expr)), rng: a.NameRange,
		})
	}
	ovrs = append(ovrs, e.moduleInputs(c, args)...)
	ovrs = append(ovrs, e.overridesInto(name)...) // --set module.M.STAGE.ATTR (module_paths.go)
	child := evaluate(c.child, ovrs, e.profile, e.prefix+"module."+name+".")
	e.labelsFrom(name, child)
	e.diags = append(e.diags, child.diags...)
	child.diags = nil
	e.children[name] = child
	return child
}

// resolveModule resolves module.M.S.OUT[.key...] and module.M.NAME[.key...]
// (an output block) in e.
func (e *evaluator) resolveModule(parts []step, rng hcl.Range) (Ref, registry.Kind, bool) {
	if len(parts) < 2 || parts[0].isIdx || parts[1].isIdx {
		e.errorf(rng, "Invalid reference", "Write module.NAME.STAGE.OUTPUT or module.NAME.OUTPUT.")
		return Ref{}, "", false
	}
	c, ok := e.m.calls[parts[0].name]
	if !ok {
		e.errorf(rng, "Reference to undeclared module",
			"There is no module %q.%s Declared: %s.", parts[0].name, Suggest(parts[0].name, e.m.callOrder), listOrNone(e.m.callOrder))
		return Ref{}, "", false
	}
	if c.child == nil {
		return Ref{}, "", false // the module's own failure was reported
	}
	if _, ok := c.child.iface.outputs[parts[1].name]; ok {
		return e.resolveModuleOutput(c, parts, rng)
	}
	s, ok := c.child.stages[parts[1].name]
	if !ok || s.repeat != nil {
		e.errorf(parts[1].rng, "Unknown module stage",
			"Module %q (%s) has no top-level stage %q.%s Its stages: %s.%s", c.name, c.path, parts[1].name,
			Suggest(parts[1].name, moduleNames(c.child)), listOrNone(topStages(c.child)), outputsNote(c.child))
		return Ref{}, "", false
	}
	if s.typ == nil {
		return Ref{}, "", false
	}
	if s.forEach != nil { // foreach.go
		e.errorf(parts[1].rng, "Module stage with for_each",
			"Stage %q of module %q has for_each; give the instance the including file reads an output block in the module: output \"NAME\" { value = stage.%s[\"KEY\"].OUTPUT }.", s.name, c.name, s.name)
		return Ref{}, "", false
	}
	if len(parts) < 3 || parts[2].isIdx {
		e.errorf(rng, "Missing output name",
			"Name one of the outputs of module stage %s.%s (%s): %s.", c.name, s.name, s.typ.Name, strings.Join(names(s.typ.Outputs), ", "))
		return Ref{}, "", false
	}
	port, ok := s.typ.Output(parts[2].name)
	if !ok {
		e.errorf(parts[2].rng, "Unknown output",
			"Module stage %s.%s (%s) has no output %q.%s Its outputs: %s.", c.name, s.name, s.typ.Name, parts[2].name,
			Suggest(parts[2].name, names(s.typ.Outputs)), strings.Join(names(s.typ.Outputs), ", "))
		return Ref{}, "", false
	}
	path, ok := pathOf(parts[3:])
	if !ok {
		e.errorf(rng, "Invalid reference", "Keys after an output are names, such as module.m.eval.metrics.stsb.")
		return Ref{}, "", false
	}
	// The instance name is static, so a module block's inputs may read
	// another module's stages in any order.
	inst := e.prefix + "module." + c.name + "." + s.name
	e.modUsed[inst] = true
	return Ref{Stage: inst, Output: port.Name, Path: path}, port.Kind, true
}

func topStages(m *module) []string {
	var out []string
	for _, it := range m.items {
		if it.stage != nil {
			out = append(out, it.stage.name)
		}
	}
	return out
}

// finish adds the module stage instances that e's own stages reach (and
// those named in extra: expect values and ablation reports) and orders
// everything topologically.
func (e *evaluator) finish(extra []string) {
	avail := map[string]*Stage{}
	var order []string
	var collect func(c *evaluator)
	collect = func(c *evaluator) {
		for _, name := range c.m.callOrder {
			if k := c.children[name]; k != nil {
				for _, s := range k.stages {
					avail[s.Name] = s
					order = append(order, s.Name)
				}
				collect(k)
			}
		}
	}
	collect(e)
	if len(avail) > 0 {
		need := map[string]bool{}
		var queue []string
		add := func(name string) {
			if _, ok := avail[name]; ok && !need[name] {
				need[name] = true
				queue = append(queue, name)
			}
		}
		for _, s := range e.stages {
			for _, in := range sortedInputs(s) {
				add(s.Inputs[in].Stage)
			}
		}
		for _, name := range extra {
			add(name)
		}
		for len(queue) > 0 {
			s := avail[queue[0]]
			queue = queue[1:]
			for _, in := range sortedInputs(s) {
				add(s.Inputs[in].Stage)
			}
		}
		for _, name := range order {
			if need[name] {
				e.stageIdx[name] = len(e.stages)
				e.stages = append(e.stages, avail[name])
			}
		}
	}
	e.stages = e.toposort()
}
