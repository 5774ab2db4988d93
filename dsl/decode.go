package dsl

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// This file decodes a parsed file into the static model: blocks, names and
// unevaluated expressions (the shape of Terraform's configs package). Nothing
// here evaluates an expression that may depend on variables; that happens per
// variant in eval.go.

var rootSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "experiment", LabelNames: []string{"name"}},
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "locals"},
	{Type: "stage", LabelNames: []string{"name"}},
	{Type: "repeat", LabelNames: []string{"name"}},
	{Type: "expect", LabelNames: []string{"name"}},
	{Type: "profile", LabelNames: []string{"name"}},
	{Type: "ablation", LabelNames: []string{"name"}},
	{Type: "module", LabelNames: []string{"name"}},
	{Type: "deviation", LabelNames: []string{"name"}},
	{Type: "input", LabelNames: []string{"name"}},  // module_inputs.go
	{Type: "output", LabelNames: []string{"name"}}, // module_inputs.go
	{Type: "table", LabelNames: []string{"name"}},  // table.go
	slurmBlock,
}}

var experimentSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "title"}, {Name: "table"}, {Name: "paper"}, {Name: "seed"}, {Name: "min_agreement"},
	{Name: "paper_resolution"},
}}

var variableSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "default"}, {Name: "type"}, {Name: "description"},
}}

var repeatSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "rounds"}, {Name: "start"}, {Name: "next", Required: true}, {Name: "until"},
		{Name: "for_each"}, // repeat_foreach.go
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "stage", LabelNames: []string{"name"}}},
}

var expectSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "value"}, {Name: "paper"}, {Name: "tolerance"},
	{Name: "row"}, {Name: "column"}, {Name: "profile"},
	{Name: "for_each"}, {Name: "lower_is_better"}, {Name: "pending"},
	{Name: "count"}, {Name: "max_tolerance"},
}}

var profileSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "variables"}, {Name: "extends"}},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "stage", LabelNames: []string{"name"}},
		{Type: "repeat", LabelNames: []string{"name"}},
		{Type: "deviation", LabelNames: []string{"name"}},
		{Type: "module", LabelNames: []string{"name"}}, // module_inputs.go
		resourcesBlock,
		slurmBlock,
	},
}

// stageSchema is the block part of a stage body; the rest are attributes.
var stageSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{resourcesBlock}}

var profileRepeatSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "rounds"}}}

var ablationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "title"}, {Name: "vary"}, {Name: "report"},
		{Name: "paper"}, {Name: "figure"}, {Name: "columns"}, {Name: "min_agreement"},
		{Name: "paper_resolution"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "variant", LabelNames: []string{"name"}}},
}

var variantSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "set", Required: true}, {Name: "for_each"}, {Name: "paper"}}}

// module is the static model of one file.
type module struct {
	filename   string
	src        []byte
	experiment *experimentBlock
	variables  map[string]*variableBlock
	varOrder   []string
	locals     map[string]*hcl.Attribute
	localOrder []string
	items      []topItem               // stages and repeats in file order
	stages     map[string]*stageBlock  // every stage, top level and inside repeats
	repeats    map[string]*repeatBlock // by name
	expects    []*expectBlock
	profiles   map[string]*profileBlock
	profOrder  []string
	ablations  map[string]*ablationBlock
	ablOrder   []string
	calls      map[string]*moduleCall // module blocks (module.go)
	callOrder  []string
	slurm      *slurmDecl        // the file's slurm block (slurm.go)
	deviations []*deviationBlock // top-level deviation blocks (deviation.go)
	iface      moduleIface       // input and output blocks (module_inputs.go)
	tables     []*tableBlock     // table blocks (table.go)
}

// topItem is a top-level stage or repeat block.
type topItem struct {
	stage  *stageBlock
	repeat *repeatBlock
}

type experimentBlock struct {
	name  string
	attrs hcl.Attributes
	rng   hcl.Range
}

type variableBlock struct {
	name     string
	def      hcl.Expression // nil: required
	typeExpr hcl.Expression
	rng      hcl.Range
}

type stageBlock struct {
	name     string
	repeat   *repeatBlock // nil at top level
	typ      *registry.StageType
	params   map[string]registry.Param
	intKinds map[string]reflect.Kind   // integer-typed parameters
	attrs    map[string]*hcl.Attribute // inputs and parameters ("uses" and "seed" removed)
	seed     hcl.Expression
	// resources holds the attributes of the stage's resources block.
	resources map[string]*hcl.Attribute
	defRange  hcl.Range
	order     int
	forEach   hcl.Expression // nil: one instance (foreach.go)
	inst      *instance      // set on a for_each block's per-key copies
}

type repeatBlock struct {
	name      string
	rounds    hcl.Expression // nil: 1 round
	start     map[string]hcl.Expression
	next      map[string]hcl.Expression
	nextOrder []string
	stages    []*stageBlock
	loop      *loopRule // nil: all rounds run
	defRange  hcl.Range
	forEach   hcl.Expression // nil: one instance (repeat_foreach.go)
	inst      *repeatInst    // set on a for_each repeat's per-key copies
}

type expectBlock struct {
	name  string
	attrs hcl.Attributes
	rng   hcl.Range
}

type profileBlock struct {
	name       string
	overrides  []override
	slurm      *slurmDecl
	deviations []*deviationBlock
	rng        hcl.Range
	// extends names the profile this one starts from (extends.go); the
	// parent's overrides, deviations and slurm settings are merged in by
	// resolveExtends once every profile is decoded.
	extends    string
	extendsRng hcl.Range
	resolved   bool
}

type ablationBlock struct {
	name     string
	title    hcl.Expression
	axes     []axisDecl
	variants []variantDecl
	report   []hcl.Expression
	// reportExpr is a `report` that is not a list literal (a local holding
	// metric references, ablation.go); report is then nil.
	reportExpr hcl.Expression
	// expanded is variants with each for_each block's elements in its
	// place, set by the Loader for the ablation being loaded (ablation.go).
	expanded []variantDecl
	// Evaluated only when the ablation is expanded (ablation.go): their
	// checks need the grid's evaluated values.
	paper, figure, columns, minAgreement, resolution *hcl.Attribute
	rng                                              hcl.Range
}

type axisDecl struct {
	target target
	values []hcl.Expression
	rng    hcl.Range
}

type variantDecl struct {
	name    string
	sets    []override
	rng     hcl.Range
	forEach *hcl.Attribute // one variant per element, named by its key (ablation.go)
	paper   hcl.Expression // its paper values, beside the ablation's `paper` (ablation.go)
}

type decoder struct {
	reg    *registry.Registry
	m      *module
	diags  hcl.Diagnostics
	order  int
	loader *Loader // reads module files; nil: module blocks are an error
}

func decodeModule(filename string, src []byte, body hcl.Body, reg *registry.Registry, l *Loader) (*module, hcl.Diagnostics) {
	d := &decoder{reg: reg, loader: l, m: &module{
		filename:  filename,
		src:       src,
		variables: map[string]*variableBlock{},
		locals:    map[string]*hcl.Attribute{},
		stages:    map[string]*stageBlock{},
		repeats:   map[string]*repeatBlock{},
		profiles:  map[string]*profileBlock{},
		ablations: map[string]*ablationBlock{},
		calls:     map[string]*moduleCall{},
	}}
	content, diags := body.Content(rootSchema)
	d.diags = append(d.diags, diags...)
	// Variables and locals before stages (a stage's `params` may spread
	// one), stages and repeats before what names them: profiles and
	// ablations.
	for _, b := range content.Blocks {
		switch b.Type {
		case "variable":
			d.variable(b)
		case "locals":
			d.localsBlock(b)
		}
	}
	for _, b := range content.Blocks {
		switch b.Type {
		case "experiment":
			d.experiment(b)
		case "stage":
			if s := d.stage(b, nil); s != nil {
				d.m.items = append(d.m.items, topItem{stage: s})
			}
		case "repeat":
			if r := d.repeat(b); r != nil {
				d.m.items = append(d.m.items, topItem{repeat: r})
			}
		case "module":
			d.moduleCall(b)
		case "input":
			d.input(b)
		case "slurm":
			d.m.slurm = d.slurmBody(b, d.m.slurm, "a file")
		}
	}
	for _, b := range content.Blocks {
		switch b.Type {
		case "expect":
			d.expect(b)
		case "profile":
			d.profile(b)
		case "ablation":
			d.ablation(b)
		case "deviation":
			d.deviation(b, nil)
		case "output":
			d.output(b)
		case "table":
			d.table(b)
		}
	}
	d.resolveExtends() // extends.go
	return d.m, d.diags
}

func (d *decoder) errorf(rng hcl.Range, summary, format string, args ...any) {
	r := rng
	d.diags = append(d.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: &r,
	})
}

// label checks that a block label can be used in references.
func (d *decoder) label(b *hcl.Block, what string) bool {
	name := b.Labels[0]
	if !hclsyntax.ValidIdentifier(name) {
		d.errorf(b.LabelRanges[0], "Invalid "+what+" name",
			"%q is not a valid name: a name starts with a letter and holds only letters, digits, underscores and dashes.", name)
		return false
	}
	return true
}

func (d *decoder) duplicate(kind, name string, rng, prev hcl.Range) {
	d.errorf(rng, "Duplicate "+kind+" "+fmt.Sprintf("%q", name),
		"A %s named %q was already declared at %s.", kind, name, prev.String())
}

func (d *decoder) experiment(b *hcl.Block) {
	if d.m.experiment != nil {
		d.errorf(b.DefRange, "Duplicate experiment block",
			"A file declares one experiment; the first is at %s.", d.m.experiment.rng.String())
		return
	}
	content, diags := b.Body.Content(experimentSchema)
	d.diags = append(d.diags, diags...)
	// The experiment's and profiles' names become file names (reports,
	// results/<experiment>.<profile>.json): identifiers only, so that no
	// name can point outside the cache or the results folder.
	d.label(b, "experiment") // an error; the block still counts as declared
	d.m.experiment = &experimentBlock{name: b.Labels[0], attrs: content.Attributes, rng: b.DefRange}
}

func (d *decoder) variable(b *hcl.Block) {
	content, diags := b.Body.Content(variableSchema)
	d.diags = append(d.diags, diags...)
	if !d.label(b, "variable") {
		return
	}
	name := b.Labels[0]
	if prev, dup := d.m.variables[name]; dup {
		d.duplicate("variable", name, b.LabelRanges[0], prev.rng)
		return
	}
	v := &variableBlock{name: name, rng: b.DefRange}
	if a, ok := content.Attributes["default"]; ok {
		v.def = a.Expr
	}
	if a, ok := content.Attributes["type"]; ok {
		v.typeExpr = a.Expr
	}
	d.m.variables[name] = v
	d.m.varOrder = append(d.m.varOrder, name)
}

func (d *decoder) localsBlock(b *hcl.Block) {
	attrs, diags := b.Body.JustAttributes()
	d.diags = append(d.diags, diags...)
	for _, a := range sortedAttrs(attrs) {
		if prev, dup := d.m.locals[a.Name]; dup {
			d.duplicate("local value", a.Name, a.NameRange, prev.NameRange)
			continue
		}
		d.m.locals[a.Name] = a
		d.m.localOrder = append(d.m.localOrder, a.Name)
	}
}

// sortedAttrs returns attributes in source order, so that diagnostics and
// evaluation order never depend on map iteration.
func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Range.Start.Byte < out[j].Range.Start.Byte })
	return out
}

func (d *decoder) stage(b *hcl.Block, rep *repeatBlock) *stageBlock {
	attrs, blocks, diags := attrsBesideBlocks(b.Body, stageSchema)
	d.diags = append(d.diags, diags...)
	d.spreadParams(attrs)
	forEach := d.takeForEach(attrs, rep)
	if !d.label(b, "stage") {
		return nil
	}
	name := b.Labels[0]
	if prev, dup := d.m.stages[name]; dup {
		d.duplicate("stage", name, b.LabelRanges[0], prev.defRange)
		return nil
	}
	if prev, dup := d.m.repeats[name]; dup {
		d.errorf(b.LabelRanges[0], "Duplicate name", "%q already names the repeat block at %s.", name, prev.defRange.String())
		return nil
	}
	s := &stageBlock{name: name, repeat: rep, attrs: map[string]*hcl.Attribute{}, defRange: b.DefRange, order: d.order, forEach: forEach}
	for _, rb := range blocks {
		s.resources = d.resources(rb, s.resources)
	}
	d.order++
	d.m.stages[name] = s
	uses, ok := attrs["uses"]
	if !ok {
		d.errorf(b.DefRange, "Missing required argument",
			"Stage %q needs `uses = \"family.type\"` naming a registered stage type.", name)
	} else {
		d.resolveType(s, uses)
	}
	for _, a := range sortedAttrs(attrs) {
		switch a.Name {
		case "uses":
			continue
		case "seed":
			s.seed = a.Expr
			continue
		}
		if s.typ != nil && !s.hasAttr(a.Name) {
			d.unknownAttr(s, a.Name, a.NameRange)
			continue
		}
		s.attrs[a.Name] = a
	}
	return s
}

func (d *decoder) resolveType(s *stageBlock, uses *hcl.Attribute) {
	v, diags := uses.Expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || !v.Type().Equals(cty.String) {
		d.errorf(uses.Expr.Range(), "Invalid stage type",
			"`uses` must be a literal string naming a registered stage type, such as \"data.sts\".")
		return
	}
	tn := v.AsString()
	t, ok := d.reg.Lookup(tn)
	if !ok {
		d.errorf(uses.Expr.Range(), "Unknown stage type",
			"No stage type %q is registered.%s", tn, Suggest(tn, d.reg.Names()))
		return
	}
	ps, err := t.ParamSchema()
	if err != nil {
		d.errorf(uses.Expr.Range(), "Broken stage type", "Stage type %s: %v.", tn, err)
		return
	}
	s.typ = t
	s.params = map[string]registry.Param{}
	for _, p := range ps {
		s.params[p.Name] = p
	}
	s.intKinds = intKinds(ps)
}

// intKinds finds the integer-typed parameters of a schema.
func intKinds(ps []registry.Param) map[string]reflect.Kind {
	out := map[string]reflect.Kind{}
	for _, p := range ps {
		switch k := p.GoKind; k {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			out[p.Name] = k
		}
	}
	return out
}

func (s *stageBlock) hasAttr(name string) bool {
	if name == "seed" {
		return true
	}
	if _, ok := s.typ.Input(name); ok {
		return true
	}
	_, ok := s.params[name]
	return ok
}

// attrNames lists what a stage block of s's type accepts.
func (s *stageBlock) attrNames() []string {
	var names []string
	for _, p := range s.typ.Inputs {
		names = append(names, p.Name)
	}
	ps, _ := s.typ.ParamSchema()
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names
}

func (d *decoder) unknownAttr(s *stageBlock, name string, rng hcl.Range) {
	valid := s.attrNames()
	list := "none"
	if len(valid) > 0 {
		list = strings.Join(valid, ", ")
	}
	d.errorf(rng, "Unsupported argument",
		"Stage type %s has no input or parameter named %q.%s Valid names: %s (and seed, params).",
		s.typ.Name, name, Suggest(name, append(valid, "seed")), list)
}

func (d *decoder) repeat(b *hcl.Block) *repeatBlock {
	content, diags := b.Body.Content(repeatSchema)
	d.diags = append(d.diags, diags...)
	if !d.label(b, "repeat") {
		return nil
	}
	name := b.Labels[0]
	if prev, dup := d.m.repeats[name]; dup {
		d.duplicate("repeat block", name, b.LabelRanges[0], prev.defRange)
		return nil
	}
	if prev, dup := d.m.stages[name]; dup {
		d.errorf(b.LabelRanges[0], "Duplicate name", "%q already names the stage at %s.", name, prev.defRange.String())
		return nil
	}
	r := &repeatBlock{name: name, defRange: b.DefRange, start: map[string]hcl.Expression{}, next: map[string]hcl.Expression{}}
	d.m.repeats[name] = r
	if a, ok := content.Attributes["rounds"]; ok {
		r.rounds = a.Expr
	}
	if a, ok := content.Attributes["until"]; ok {
		r.loop = d.loopRule(a) // loop.go
	}
	if a, ok := content.Attributes["for_each"]; ok {
		r.forEach = a.Expr
	}
	if a, ok := content.Attributes["start"]; ok {
		r.start, _ = d.objectKeys(a, "start")
	}
	if a, ok := content.Attributes["next"]; ok {
		r.next, r.nextOrder = d.objectKeys(a, "next")
		for k, e := range r.start {
			if _, ok := r.next[k]; !ok {
				d.errorf(e.Range(), "Missing next value",
					"start.%s has no counterpart in next: rounds after the first would have no previous.%s.", k, k)
			}
		}
	}
	for _, sb := range content.Blocks {
		if s := d.stage(sb, r); s != nil {
			r.stages = append(r.stages, s)
		}
	}
	return r
}

// objectKeys reads `{ key = expr, ... }` without evaluating the values.
func (d *decoder) objectKeys(a *hcl.Attribute, what string) (map[string]hcl.Expression, []string) {
	out := map[string]hcl.Expression{}
	var order []string
	pairs, diags := hcl.ExprMap(a.Expr)
	if diags.HasErrors() {
		d.errorf(a.Expr.Range(), "Invalid "+what, "`%s` must be an object such as { model = stage.init.model }.", what)
		return out, nil
	}
	for _, p := range pairs {
		key := hcl.ExprAsKeyword(p.Key)
		if key == "" {
			v, diags := p.Key.Value(nil)
			if diags.HasErrors() || !v.Type().Equals(cty.String) || v.IsNull() {
				d.errorf(p.Key.Range(), "Invalid key", "Keys of `%s` must be names.", what)
				continue
			}
			key = v.AsString()
		}
		if _, dup := out[key]; dup {
			d.errorf(p.Key.Range(), "Duplicate key", "%s.%s is set twice.", what, key)
			continue
		}
		out[key] = p.Value
		order = append(order, key)
	}
	return out, order
}

func (d *decoder) expect(b *hcl.Block) {
	content, diags := b.Body.Content(expectSchema)
	d.diags = append(d.diags, diags...)
	name := b.Labels[0]
	for _, e := range d.m.expects {
		if e.name == name {
			d.duplicate("expect block", name, b.LabelRanges[0], e.rng)
			return
		}
	}
	d.m.expects = append(d.m.expects, &expectBlock{name: name, attrs: content.Attributes, rng: b.DefRange})
}

func (d *decoder) profile(b *hcl.Block) {
	body, shared := sharedStageBlocks(b.Body) // stage "A" "B" { ... } (profile_shared.go)
	content, diags := body.Content(profileSchema)
	d.diags = append(d.diags, diags...)
	if !d.label(b, "profile") {
		return
	}
	name := b.Labels[0]
	if prev, dup := d.m.profiles[name]; dup {
		d.duplicate("profile", name, b.LabelRanges[0], prev.rng)
		return
	}
	p := &profileBlock{name: name, rng: b.DefRange}
	d.m.profiles[name] = p
	d.m.profOrder = append(d.m.profOrder, name)
	if a, ok := content.Attributes["extends"]; ok {
		d.extendsAttr(p, a) // extends.go
	}
	if a, ok := content.Attributes["variables"]; ok {
		vals, order := d.objectKeys(a, "variables")
		for _, k := range order {
			t, ok := d.target("var."+k, vals[k].Range())
			if ok {
				p.overrides = append(p.overrides, override{target: t, expr: vals[k], rng: vals[k].Range()})
			}
		}
	}
	var prof map[string]*hcl.Attribute // the profile's own resources block
	for _, sb := range content.Blocks {
		switch sb.Type {
		case "stage":
			p.overrides = append(p.overrides, d.profileStageOverrides(name, sb)...)
		case "resources":
			if prof != nil {
				d.errorf(sb.DefRange, "Duplicate resources block", "Only one resources block is allowed in a profile.")
				continue
			}
			prof = d.resources(sb, nil)
			for _, a := range sortedAttrs(prof) {
				if t, ok := d.resourceTarget(nil, a.Name, a.NameRange); ok {
					p.overrides = append(p.overrides, override{target: t, expr: a.Expr, rng: a.NameRange})
				}
			}
		case "slurm":
			p.slurm = d.slurmBody(sb, p.slurm, "a profile")
		case "deviation":
			d.deviation(sb, p)
		case "module":
			d.profileModule(p, sb) // module_inputs.go
		case "repeat":
			r, key, ok := d.profileRepeat(name, sb) // NAME or NAME["KEY"] (repeat_foreach.go)
			if !ok {
				continue
			}
			c, diags := sb.Body.Content(profileRepeatSchema)
			d.diags = append(d.diags, diags...)
			if a, ok := c.Attributes["rounds"]; ok {
				path := "repeat." + r.name + ".rounds"
				if key != "" {
					path = "repeat." + instName(r.name, key) + ".rounds"
				}
				if t, ok := d.target(path, a.NameRange); ok {
					p.overrides = append(p.overrides, override{target: t, expr: a.Expr, rng: a.NameRange})
				}
			}
		}
	}
	// A stage's own block wins over a shared one: the shared go first.
	p.overrides = append(d.sharedOverrides(name, shared), p.overrides...)
}

// profileStageOverrides decodes a profile's stage block (one label, NAME or
// NAME["KEY"]) into its overrides.
func (d *decoder) profileStageOverrides(profile string, sb *hcl.Block) []override {
	s, key, ok := d.profileStage(profile, sb) // NAME or NAME["KEY"] (foreach.go)
	if !ok {
		return nil
	}
	var out []override
	attrs, blocks, diags := attrsBesideBlocks(sb.Body, stageSchema)
	d.diags = append(d.diags, diags...)
	d.spreadParams(attrs)
	for _, a := range sortedAttrs(attrs) {
		t, ok := d.stageTarget(s, a.Name, a.NameRange)
		if ok && key != "" {
			t, ok = d.onInstance(t, key, a.NameRange)
		}
		if ok {
			out = append(out, override{target: t, expr: a.Expr, rng: a.NameRange})
		}
	}
	var res map[string]*hcl.Attribute
	for _, rb := range blocks {
		res = d.resources(rb, res)
	}
	for _, a := range sortedAttrs(res) {
		t, ok := d.resourceTarget(s, a.Name, a.NameRange)
		if ok && key != "" {
			t, ok = d.onInstance(t, key, a.NameRange)
		}
		if ok {
			out = append(out, override{target: t, expr: a.Expr, rng: a.NameRange})
		}
	}
	return out
}

func (d *decoder) ablation(b *hcl.Block) {
	content, diags := b.Body.Content(ablationSchema)
	d.diags = append(d.diags, diags...)
	if !d.label(b, "ablation") {
		return
	}
	name := b.Labels[0]
	if prev, dup := d.m.ablations[name]; dup {
		d.duplicate("ablation", name, b.LabelRanges[0], prev.rng)
		return
	}
	ab := &ablationBlock{name: name, rng: b.DefRange}
	d.m.ablations[name] = ab
	d.m.ablOrder = append(d.m.ablOrder, name)
	if a, ok := content.Attributes["title"]; ok {
		ab.title = a.Expr
	}
	if a, ok := content.Attributes["vary"]; ok {
		pairs, diags := hcl.ExprMap(a.Expr)
		if diags.HasErrors() {
			d.errorf(a.Expr.Range(), "Invalid vary",
				"`vary` must be an object mapping paths to lists of values, such as { \"stage.mask.top_k\" = [1, 2, 3] }.")
		}
		seen := map[string]bool{}
		for _, p := range pairs {
			path, ok := d.pathKey(p.Key)
			if !ok {
				continue
			}
			t, ok := d.target(path, p.Key.Range())
			if !ok {
				continue
			}
			if seen[t.path] {
				d.errorf(p.Key.Range(), "Duplicate key", "%s is varied twice.", t.path)
				continue
			}
			seen[t.path] = true
			vals, diags := hcl.ExprList(p.Value)
			if diags.HasErrors() || len(vals) == 0 {
				d.errorf(p.Value.Range(), "Invalid vary values", "%s must be varied over a non-empty list literal, such as [1, 2, 3].", t.path)
				continue
			}
			ab.axes = append(ab.axes, axisDecl{target: t, values: vals, rng: p.Key.Range()})
		}
	}
	for _, vb := range content.Blocks {
		vc, diags := vb.Body.Content(variantSchema)
		d.diags = append(d.diags, diags...)
		v := variantDecl{name: vb.Labels[0], rng: vb.DefRange, forEach: vc.Attributes["for_each"]}
		if a, ok := vc.Attributes["paper"]; ok {
			v.paper = a.Expr
		}
		for _, prev := range ab.variants {
			if prev.name == v.name {
				d.duplicate("variant", v.name, vb.LabelRanges[0], prev.rng)
			}
		}
		if a, ok := vc.Attributes["set"]; ok {
			pairs, diags := hcl.ExprMap(a.Expr)
			if diags.HasErrors() {
				d.errorf(a.Expr.Range(), "Invalid set", "`set` must be an object mapping paths to values, such as { \"stage.eda.random_deletion\" = 0.1 }.")
			}
			for _, p := range pairs {
				path, ok := d.pathKey(p.Key)
				if !ok {
					continue
				}
				if t, ok := d.target(path, p.Key.Range()); ok {
					v.sets = append(v.sets, override{target: t, expr: p.Value, rng: p.Key.Range()})
				}
			}
		}
		d.variantEach(v)
		ab.variants = append(ab.variants, v)
	}
	if len(ab.axes) == 0 && len(ab.variants) == 0 {
		d.errorf(b.DefRange, "Empty ablation", "Ablation %q needs `vary` or at least one `variant` block.", name)
	}
	if a, ok := content.Attributes["report"]; ok {
		if exprs, diags := hcl.ExprList(a.Expr); !diags.HasErrors() {
			ab.report = exprs
		} else {
			ab.reportExpr = a.Expr // evaluated when the ablation is expanded (ablation.go)
		}
	}
	ab.paper = content.Attributes["paper"]
	ab.figure = content.Attributes["figure"]
	ab.columns = content.Attributes["columns"]
	ab.minAgreement = content.Attributes["min_agreement"]
	ab.resolution = content.Attributes["paper_resolution"]
}

// pathKey reads an override path written as a string ("stage.a.b") or as a
// bare traversal (stage.a.b).
func (d *decoder) pathKey(key hcl.Expression) (string, bool) {
	if t, diags := hcl.AbsTraversalForExpr(key); !diags.HasErrors() {
		var parts []string
		for _, step := range t {
			switch s := step.(type) {
			case hcl.TraverseRoot:
				parts = append(parts, s.Name)
			case hcl.TraverseAttr:
				parts = append(parts, s.Name)
			case hcl.TraverseIndex:
				var ok bool
				if parts, ok = pathIndex(parts, s); !ok { // stage.NAME["KEY"] (foreach.go)
					d.errorf(key.Range(), "Invalid path", "A path is written stage.NAME.ATTRIBUTE, stage.NAME[\"KEY\"].ATTRIBUTE, repeat.NAME.rounds or var.NAME.")
					return "", false
				}
			default:
				d.errorf(key.Range(), "Invalid path", "A path is written stage.NAME.ATTRIBUTE, repeat.NAME.rounds or var.NAME.")
				return "", false
			}
		}
		return strings.Join(parts, "."), true
	}
	v, diags := key.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.Type().Equals(cty.String) {
		d.errorf(key.Range(), "Invalid path", "A path is a string such as \"stage.mask.top_k\".")
		return "", false
	}
	return v.AsString(), true
}

func (d *decoder) stageNames() []string { return slices.Sorted(maps.Keys(d.m.stages)) }
