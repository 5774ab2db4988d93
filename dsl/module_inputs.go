package dsl

import (
	"fmt"
	"slices"
	"strings"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Module inputs and outputs: a module file declares the artifacts it takes
// and, optionally, names what it gives back.
//
//	# synthesis.hcl, the module
//	input "generator" {
//	  kind        = "language_model"        # the artifact kind it takes
//	  description = "the model that writes the hypotheses"
//	  default     = stage.pretrained.model  # optional: used when the block leaves it unset
//	}
//	stage "generate" { uses = "generate.complete"  model = input.generator ... }
//	output "triplets" { value = stage.filter.triplets }
//
//	# the including file
//	module "open" {
//	  source    = "./synthesis.hcl"
//	  generator = stage.train_t5.model      # an input: any artifact reference
//	  template  = local.t_e                 # a variable: a value
//	}
//	stage "train" { uses = "train.t5_contrastive"  data = module.open.triplets }
//
// Inputs are blocks of their own, not variables of an artifact type:
// a variable is a value, known before any stage (it may set a parameter,
// be given by -var and enter a cache key as a value), while an input is a
// DAG edge, resolved like a stage's input to an instance's output; its
// value is never known at load time. Keeping them apart keeps both rules
// simple: var.X is a value everywhere, input.X is a reference wherever a
// stage input or a metric reference is accepted, and never in a parameter.
// `kind` is required so that the module's interface is checked on both
// sides: the module block's argument against it (at the argument), and
// every use inside the module against the stage port it feeds (at the use).
//
// Each module block evaluates its file once, with its own inputs, under the
// prefix "module.M.", so the same file used twice gives two independent sets
// of instances (module.A.S and module.B.S). A stage's key holds its type,
// parameters, seed and input digests, never its name: two blocks given the
// same inputs and variables give stages with the same keys, which run once.
//
// A profile's `module "M" { ARG = ... }` block replaces the block's
// arguments, inputs or variables, in that profile (the mini profile's
// smaller corpus); null gives an input its default back.
//
// module.M.NAME reads output NAME of the module (with keys after it for a
// metrics output); module.M.S.OUT still reads output OUT of stage S, so a
// module without output blocks works as before. An output and a top-level
// stage cannot share a name.
//
// Diagnostics: at the module block, a declared input without a default left
// unset; at the argument, an input given something that is not a
// reference, or an artifact of another kind, and an argument that names
// neither a variable nor an input; at an input block, an unknown kind; at a
// use, input.X of a file loaded on its own when X has no default. A cycle
// through a module -- a stage feeding a module whose output feeds the stage
// -- is a dependency cycle among the instances, reported at the reference
// that closes it; module blocks whose inputs read each other's outputs are
// a "Module cycle" at the reference.

var inputSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "kind", Required: true}, {Name: "default"}, {Name: "description"},
}}

var outputSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "value", Required: true}, {Name: "description"},
}}

// moduleIface holds a file's input and output blocks.
type moduleIface struct {
	inputs      map[string]*inputBlock
	inputOrder  []string
	outputs     map[string]*outputBlock
	outputOrder []string
}

// inputBlock is an `input` block: an artifact the file takes.
type inputBlock struct {
	name string
	kind registry.Kind  // "" when the kind was invalid (reported)
	def  hcl.Expression // nil: a module block must set it
	rng  hcl.Range
}

// outputBlock is an `output` block: an artifact the file gives back.
type outputBlock struct {
	name  string
	value hcl.Expression
	rng   hcl.Range
}

func (d *decoder) input(b *hcl.Block) {
	content, diags := b.Body.Content(inputSchema)
	d.diags = append(d.diags, diags...)
	if !d.label(b, "input") {
		return
	}
	name := b.Labels[0]
	io := &d.m.iface
	if prev, dup := io.inputs[name]; dup {
		d.duplicate("input", name, b.LabelRanges[0], prev.rng)
		return
	}
	if prev, dup := d.m.variables[name]; dup {
		d.errorf(b.LabelRanges[0], "Duplicate name",
			"%q already names the variable at %s; a module block sets variables and inputs by name, so they cannot share one.", name, prev.rng.String())
		return
	}
	in := &inputBlock{name: name, rng: b.DefRange}
	if io.inputs == nil {
		io.inputs = map[string]*inputBlock{}
	}
	io.inputs[name] = in
	io.inputOrder = append(io.inputOrder, name)
	if a, ok := content.Attributes["default"]; ok {
		in.def = a.Expr
	}
	if a, ok := content.Attributes["description"]; ok {
		if v, vd := a.Expr.Value(nil); vd.HasErrors() || v.IsNull() || !v.Type().Equals(cty.String) {
			d.errorf(a.Expr.Range(), "Invalid description", "An input's description is a literal string.")
		}
	}
	a, ok := content.Attributes["kind"]
	if !ok {
		return // reported by the schema
	}
	kinds := d.kinds()
	v, vd := a.Expr.Value(nil)
	if vd.HasErrors() || v.IsNull() || !v.IsKnown() || !v.Type().Equals(cty.String) {
		d.errorf(a.Expr.Range(), "Invalid input kind",
			"`kind` is a literal string naming an artifact kind, one of: %s.", strings.Join(kinds, ", "))
		return
	}
	k := v.AsString()
	if !slices.Contains(kinds, k) {
		d.errorf(a.Expr.Range(), "Unknown artifact kind",
			"No stage type takes or gives artifacts of kind %q.%s Kinds: %s.", k, Suggest(k, kinds), strings.Join(kinds, ", "))
		return
	}
	in.kind = registry.Kind(k)
}

// kinds lists the artifact kinds the registry's stage types take or give.
func (d *decoder) kinds() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range d.reg.Names() {
		t, ok := d.reg.Lookup(n)
		if !ok {
			continue
		}
		for _, p := range append(append([]registry.Port(nil), t.Inputs...), t.Outputs...) {
			if !seen[string(p.Kind)] {
				seen[string(p.Kind)] = true
				out = append(out, string(p.Kind))
			}
		}
	}
	slices.Sort(out)
	return out
}

func (d *decoder) output(b *hcl.Block) {
	content, diags := b.Body.Content(outputSchema)
	d.diags = append(d.diags, diags...)
	if !d.label(b, "output") {
		return
	}
	name := b.Labels[0]
	io := &d.m.iface
	if prev, dup := io.outputs[name]; dup {
		d.duplicate("output", name, b.LabelRanges[0], prev.rng)
		return
	}
	if s, dup := d.m.stages[name]; dup && s.repeat == nil {
		d.errorf(b.LabelRanges[0], "Duplicate name",
			"%q already names the stage at %s; module.M.%s would mean both.", name, s.defRange.String(), name)
		return
	}
	a, ok := content.Attributes["value"]
	if !ok {
		return // reported by the schema
	}
	if io.outputs == nil {
		io.outputs = map[string]*outputBlock{}
	}
	io.outputs[name] = &outputBlock{name: name, value: a.Expr, rng: b.DefRange}
	io.outputOrder = append(io.outputOrder, name)
}

// inputExpr carries a module input's resolved reference from the module
// block into the module's evaluation, as the override "input.NAME". It is
// never evaluated as a value.
type inputExpr struct {
	ref  Ref
	kind registry.Kind
	rng  hcl.Range
}

func (x *inputExpr) Value(*hcl.EvalContext) (cty.Value, hcl.Diagnostics) { return cty.DynamicVal, nil }
func (x *inputExpr) Variables() []hcl.Traversal                          { return nil }
func (x *inputExpr) Range() hcl.Range                                    { return x.rng }
func (x *inputExpr) StartRange() hcl.Range                               { return x.rng }

// targetInput marks an override that sets a module input (its path is
// "input.NAME"); a distinct value outside override.go's iota list.
const targetInput targetKind = 100

// moduleInputs resolves the module block's input arguments in e's scope
// (checking each against the declared kind) into overrides for the
// module's evaluation, and reports declared inputs without a default that
// the block leaves unset.
func (e *evaluator) moduleInputs(c *moduleCall, args []*hcl.Attribute) []override {
	io := c.child.iface
	var ovrs []override
	set := map[string]bool{}
	for _, a := range args {
		in, ok := io.inputs[a.Name]
		if !ok {
			continue
		}
		if isNull(a.Expr) {
			continue // null: unset, so the input's default applies (a profile's way back to it)
		}
		set[a.Name] = true
		if len(a.Expr.Variables()) == 0 {
			e.errorf(a.Expr.Range(), "Invalid module input",
				"Input %q of module %q takes a reference to an artifact of kind %s, such as stage.NAME.OUTPUT or module.M.OUTPUT; %s is a value.",
				a.Name, c.name, in.kind, exprText(e.m, a.Expr))
			continue
		}
		ref, kind, ok := e.resolve(a.Expr, scope{}, false)
		if !ok || in.kind == "" {
			continue
		}
		if kind != in.kind {
			e.errorf(a.Expr.Range(), "Artifact kind mismatch",
				"Input %q of module %q takes artifacts of kind %s, but %s is of kind %s.",
				a.Name, c.name, in.kind, exprText(e.m, a.Expr), kind)
			continue
		}
		ovrs = append(ovrs, override{
			target: target{kind: targetInput, name: a.Name, path: "input." + a.Name},
			expr:   &inputExpr{ref: ref, kind: kind, rng: a.Expr.Range()}, rng: a.NameRange,
		})
	}
	for _, name := range io.inputOrder {
		if in := io.inputs[name]; !set[name] && in.def == nil && in.kind != "" {
			e.errorf(c.rng, "Missing module input",
				"Module %q (%s) needs input %q (kind %s), which has no default: set %s = stage.NAME.OUTPUT in this block.",
				c.name, c.path, name, in.kind, name)
		}
	}
	return ovrs
}

// resolveInput resolves input.NAME[.key...]: what the module block passed,
// else the input's default (in this file's scope).
func (e *evaluator) resolveInput(parts []step, rng hcl.Range) (Ref, registry.Kind, bool) {
	io := e.m.iface
	if len(parts) < 1 || parts[0].isIdx {
		e.errorf(rng, "Invalid reference", "Write input.NAME.")
		return Ref{}, "", false
	}
	name := parts[0].name
	in, ok := io.inputs[name]
	if !ok {
		e.errorf(rng, "Reference to undeclared input",
			"There is no input %q.%s Declared: %s. A file declares what it takes with input \"NAME\" { kind = \"...\" }.",
			name, Suggest(name, io.inputOrder), listOrNone(io.inputOrder))
		return Ref{}, "", false
	}
	path, good := pathOf(parts[1:])
	if !good {
		e.errorf(rng, "Invalid reference", "Keys after an input are names, such as input.scores.avg.")
		return Ref{}, "", false
	}
	if in.kind == "" {
		return Ref{}, "", false // the kind was reported
	}
	var ref Ref
	var kind registry.Kind
	if o, set := e.ovr["input."+name]; set {
		x := o.expr.(*inputExpr)
		ref, kind = x.ref, x.kind
	} else {
		switch {
		case in.def != nil:
			key := "input/" + name
			if e.resolving[key] {
				e.errorf(in.def.Range(), "Circular reference", "The default of input %q refers to itself.", name)
				return Ref{}, "", false
			}
			e.resolving[key] = true
			r, k, ok := e.resolve(in.def, scope{}, false)
			delete(e.resolving, key)
			if !ok {
				return Ref{}, "", false
			}
			if k != in.kind {
				e.errorf(in.def.Range(), "Artifact kind mismatch",
					"Input %q takes artifacts of kind %s, but its default %s is of kind %s.", name, in.kind, exprText(e.m, in.def), k)
				return Ref{}, "", false
			}
			ref, kind = r, k
		case e.prefix == "":
			e.errorf(in.rng, "Missing value for input",
				"Input %q has no default, so this file runs only as a module whose block sets it (%s = stage.NAME.OUTPUT); input.%s is read at %s.",
				name, name, name, rng.String())
			return Ref{}, "", false
		default:
			return Ref{}, "", false // the module block's omission was reported there
		}
	}
	ref.Path = append(append([]string(nil), ref.Path...), path...)
	return ref, kind, true
}

// outputRef is a resolved output block.
type outputRef struct {
	ref  Ref
	kind registry.Kind
	ok   bool
}

// moduleState is what an evaluator keeps about module interfaces: its
// resolved output blocks.
type moduleState struct {
	outputs map[string]outputRef
}

// resolveOutputs resolves every output block of e's file once, so that a
// wrong output is reported whether the file is loaded on its own or as a
// module, and an including file reads the result.
func (e *evaluator) resolveOutputs() {
	io := e.m.iface
	if len(io.outputOrder) == 0 {
		return
	}
	if e.mods == nil {
		e.mods = &moduleState{}
	}
	e.mods.outputs = map[string]outputRef{}
	for _, name := range io.outputOrder {
		o := io.outputs[name]
		ref, kind, ok := e.resolve(o.value, scope{}, true)
		e.mods.outputs[name] = outputRef{ref: ref, kind: kind, ok: ok}
	}
}

// evaluating marks a module block whose evaluation is in progress.
var evaluating = &evaluator{}

// resolveModuleOutput resolves module.M.NAME[.key...] for an output block
// NAME of module call c.
func (e *evaluator) resolveModuleOutput(c *moduleCall, parts []step, rng hcl.Range) (Ref, registry.Kind, bool) {
	child := e.module(c.name)
	if child == evaluating {
		e.errorf(rng, "Module cycle",
			"module.%s.%s cannot be read here: module %q is still resolving its own inputs, which lead back to this one (module blocks whose inputs read each other's outputs form a loop).",
			c.name, parts[1].name, c.name)
		return Ref{}, "", false
	}
	if child == nil || child.mods == nil {
		return Ref{}, "", false
	}
	out, ok := child.mods.outputs[parts[1].name]
	if !ok || !out.ok {
		return Ref{}, "", false // reported in the module's file
	}
	path, good := pathOf(parts[2:])
	if !good {
		e.errorf(rng, "Invalid reference", "Keys after a module output are names, such as module.m.scores.avg.")
		return Ref{}, "", false
	}
	ref := out.ref
	ref.Path = append(append([]string(nil), ref.Path...), path...)
	return ref, out.kind, true
}

// moduleNames lists what module.M.NAME may name: top-level stages, then
// outputs.
func moduleNames(m *module) []string {
	return append(topStages(m), m.iface.outputOrder...)
}

// outputsNote is " Its outputs: a, b." when the module declares outputs.
func outputsNote(m *module) string {
	if len(m.iface.outputOrder) == 0 {
		return ""
	}
	return fmt.Sprintf(" Its outputs: %s.", strings.Join(m.iface.outputOrder, ", "))
}

// isModuleOutput reports whether module.M.NAME names an output block.
func (e *evaluator) isModuleOutput(m, name string) bool {
	c, ok := e.m.calls[m]
	if !ok || c.child == nil {
		return false
	}
	_, ok = c.child.iface.outputs[name]
	return ok
}

// targetModuleArg marks a profile's setting of a module block's argument
// (its path is "module.M.ARG").
const targetModuleArg targetKind = 101

// profileModule decodes a profile's `module "M" { ARG = ... }` block: the
// arguments (inputs or variables) it sets replace the module block's in
// that profile, so a profile can pass the module other artifacts (the mini
// profile's smaller corpus) or values.
func (d *decoder) profileModule(p *profileBlock, b *hcl.Block) {
	name := b.Labels[0]
	c, ok := d.m.calls[name]
	if !ok {
		d.errorf(b.LabelRanges[0], "Unknown module",
			"Profile %q changes module %q, which is not declared.%s Declared: %s.", p.name, name,
			Suggest(name, d.m.callOrder), listOrNone(d.m.callOrder))
		return
	}
	attrs, diags := b.Body.JustAttributes()
	d.diags = append(d.diags, diags...)
	for _, a := range sortedAttrs(attrs) {
		if a.Name == "source" {
			d.errorf(a.NameRange, "Invalid override", "A profile cannot change a module's source; declare another module block.")
			continue
		}
		if c.child != nil {
			_, isVar := c.child.variables[a.Name]
			_, isInput := c.child.iface.inputs[a.Name]
			if !isVar && !isInput {
				d.errorf(a.NameRange, "Unsupported argument",
					"Module %q (%s) declares no variable or input %q.%s Its variables: %s; its inputs: %s.", name, c.path, a.Name,
					Suggest(a.Name, append(append([]string(nil), c.child.varOrder...), c.child.iface.inputOrder...)),
					listOrNone(c.child.varOrder), listOrNone(c.child.iface.inputOrder))
				continue
			}
		}
		p.overrides = append(p.overrides, override{
			target: target{kind: targetModuleArg, name: a.Name, path: "module." + name + "." + a.Name},
			expr:   a.Expr, rng: a.NameRange,
		})
	}
}

// moduleArgs returns module block c's arguments under the selected
// profile: the block's own, each replaced by the profile's where its
// module block sets it, then those only the profile sets (in name order).
func (e *evaluator) moduleArgs(c *moduleCall) []*hcl.Attribute {
	prefix := "module." + c.name + "."
	var out []*hcl.Attribute
	seen := map[string]bool{}
	for _, a := range c.args {
		seen[a.Name] = true
		if o, ok := e.ovr[prefix+a.Name]; ok {
			a = &hcl.Attribute{Name: a.Name, Expr: o.expr, Range: o.expr.Range(), NameRange: o.rng}
		}
		out = append(out, a)
	}
	var extra []string
	for path, o := range e.ovr {
		if o.target.kind == targetModuleArg && strings.HasPrefix(path, prefix) && !seen[o.target.name] {
			extra = append(extra, o.target.name)
		}
	}
	slices.Sort(extra)
	for _, name := range extra {
		o := e.ovr[prefix+name]
		out = append(out, &hcl.Attribute{Name: name, Expr: o.expr, Range: o.expr.Range(), NameRange: o.rng})
	}
	return out
}
