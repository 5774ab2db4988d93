package dsl

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// DefaultTolerance is an expect block's tolerance (in the metric's units,
// e.g. Spearman x 100) when it gives none.
const DefaultTolerance = 1.0

// MaxVariants bounds a variant grid: each variant is a full evaluation, and
// a typo in a --set list must not exhaust memory.
const MaxVariants = 4096

// Loader loads configuration files against one registry and keeps every
// source it read (including synthetic files holding the command-line flags)
// so that Render can show snippets.
type Loader struct {
	Registry *registry.Registry
	files    map[string]*hcl.File
	// stack holds the absolute paths of the module files being decoded,
	// outermost first (stackNames as written), to report include cycles.
	stack, stackNames []string
}

// NewLoader returns a loader for stage types in reg.
func NewLoader(reg *registry.Registry) *Loader {
	return &Loader{Registry: reg, files: map[string]*hcl.File{}}
}

// Files returns the sources read so far, by file name, for Render.
func (l *Loader) Files() map[string]*hcl.File { return l.files }

// Load reads and evaluates the file at path. The Config is nil when the
// diagnostics hold an error.
func (l *Loader) Load(path string, opts Options) (*Config, hcl.Diagnostics) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError, Summary: "Cannot read configuration file",
			Detail: fmt.Sprintf("%s: %v.", path, err),
		}}
	}
	return l.LoadSource(path, src, opts)
}

// choice is one value of an axis: the overrides of one grid coordinate.
type choice struct {
	name      string // explicit variant name, else ""
	overrides []override
}

// axis is one dimension of the variant grid.
type axis struct {
	path     string // the varied path; "" for an axis of explicit variants
	explicit bool
	choices  []choice
}

// LoadSource parses src as filename and evaluates it. Syntax errors stop
// the load (a broken parse tree only yields confusing follow-up errors);
// past that point every error in the file is collected in one pass.
func (l *Loader) LoadSource(filename string, src []byte, opts Options) (*Config, hcl.Diagnostics) {
	f, diags := l.parse(filename, src)
	if diags.HasErrors() || f == nil {
		return nil, diags
	}
	if abs, err := filepath.Abs(filename); err == nil {
		l.stack, l.stackNames = []string{abs}, []string{filename}
		defer func() { l.stack, l.stackNames = nil, nil }()
	}
	m, dd := decodeModule(filename, src, f.Body, l.Registry, l)
	diags = append(diags, dd...)
	dec := &decoder{reg: l.Registry, m: m}
	if m.experiment == nil {
		rng := hcl.Range{Filename: filename, Start: hcl.InitialPos, End: hcl.InitialPos}
		dec.errorf(rng, "Missing experiment block", `A file declares its experiment: experiment "name" { title = "..." }.`)
	}
	base := l.baseOverrides(dec, filename, opts)
	axes, ablation := l.ablationAxes(dec, filename, opts)
	axes, fixed := l.setOverrides(dec, opts, axes)
	axes = l.expandVariants(dec, ablation, axes, append(append([]override(nil), base...), fixed...), opts.Profile)
	diags = append(diags, dec.diags...)
	if !gridFits(dec, filename, axes, ablation) {
		diags = append(diags, dec.diags[len(dec.diags)-1])
		axes = nil
	}

	cfg := &Config{File: filename, Profiles: m.profOrder, Ablations: m.ablOrder, mod: m}
	var evals []*evaluator
	var cellList [][]int
	for _, cell := range product(axes) {
		ovrs := append([]override(nil), base...)
		for i, a := range axes {
			ovrs = append(ovrs, a.choices[cell[i]].overrides...)
		}
		ovrs = append(ovrs, fixed...)
		e := evaluate(m, ovrs, opts.Profile, "")
		v := &Variant{Label: e.labels, Name: cellName(m, axes, cell, e.labels)}
		cfg.Variants = append(cfg.Variants, v)
		evals = append(evals, e)
		cellList = append(cellList, cell)
	}
	describe(cfg, m, evals[0], opts.Profile)
	cfg.Varied = varied(axes, ablation)
	if ablation != nil {
		cfg.Ablation = describeAblation(ablation, axes, evals, cellList, cfg.Experiment.MinAgreement)
	}
	diags = append(diags, finishVariants(cfg, evals, opts.Profile)...)
	diags = dedupe(diags)
	if diags.HasErrors() {
		return nil, diags
	}
	return cfg, diags
}

// parse checks src's nesting and parses it, keeping the file for
// diagnostics' snippets.
func (l *Loader) parse(filename string, src []byte) (*hcl.File, hcl.Diagnostics) {
	if diags := checkNesting(filename, src, hcl.InitialPos); diags.HasErrors() {
		l.files[filename] = &hcl.File{Bytes: src, Body: hcl.EmptyBody()}
		return nil, diags
	}
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	diags = unterminatedFirst(diags)
	if f != nil {
		l.files[filename] = f
	}
	return f, diags
}

// baseOverrides are the overrides every variant starts from: the
// profile's, then -var's.
func (l *Loader) baseOverrides(dec *decoder, filename string, opts Options) []override {
	m := dec.m
	var base []override
	if opts.Profile != "" {
		ff := &flagFile{name: "--profile"}
		pos := ff.add(opts.Profile)
		l.files[ff.name] = ff.file()
		if p, ok := m.profiles[opts.Profile]; ok {
			base = append(base, p.overrides...)
		} else {
			dec.errorf(span(ff.name, pos, opts.Profile, 0, len(opts.Profile)), "Unknown profile",
				"%s declares no profile %q.%s Declared: %s.", filename, opts.Profile,
				Suggest(opts.Profile, m.profOrder), listOrNone(m.profOrder))
		}
	}
	if len(opts.Vars) > 0 {
		ff := &flagFile{name: "-var"}
		for _, name := range slices.Sorted(maps.Keys(opts.Vars)) {
			text := name + "=" + opts.Vars[name]
			pos := ff.add(text)
			if t, ok := dec.target("var."+name, span(ff.name, pos, text, 0, len(name))); ok {
				vpos := span(ff.name, pos, text, len(name)+1, len(text)).Start
				base = append(base, override{target: t, expr: flagValue(ff.name, opts.Vars[name], vpos)})
			}
		}
		l.files[ff.name] = ff.file()
	}
	return base
}

// ablationAxes are the grid axes of the --ablation block: one per varied
// path, then one of its explicit variants.
func (l *Loader) ablationAxes(dec *decoder, filename string, opts Options) ([]axis, *ablationBlock) {
	if opts.Ablation == "" {
		return nil, nil
	}
	m := dec.m
	ff := &flagFile{name: "--ablation"}
	pos := ff.add(opts.Ablation)
	l.files[ff.name] = ff.file()
	ab, ok := m.ablations[opts.Ablation]
	if !ok {
		dec.errorf(span(ff.name, pos, opts.Ablation, 0, len(opts.Ablation)), "Unknown ablation",
			"%s declares no ablation %q.%s Declared: %s.", filename, opts.Ablation,
			Suggest(opts.Ablation, m.ablOrder), listOrNone(m.ablOrder))
		return nil, nil
	}
	var axes []axis
	for _, ad := range ab.axes {
		a := axis{path: ad.target.path}
		for _, v := range ad.values {
			a.choices = append(a.choices, choice{overrides: []override{{target: ad.target, expr: v, rng: v.Range(), label: true}}})
		}
		axes = append(axes, a)
	}
	if len(ab.variants) > 0 {
		axes = append(axes, axis{explicit: true}) // its choices: expandVariants (ablation.go)
	}
	return axes, ab
}

// setOverrides applies --set: a list of values replaces the ablation's
// axis of that path or adds an axis; a single value is a fixed override,
// applied last to every variant.
func (l *Loader) setOverrides(dec *decoder, opts Options, axes []axis) ([]axis, []override) {
	if len(opts.Sets) == 0 {
		return axes, nil
	}
	var fixed []override
	ff := &flagFile{name: "--set"}
	for _, text := range opts.Sets {
		ps, d := parseSet(ff, text)
		dec.diags = append(dec.diags, d...)
		if d.HasErrors() {
			continue
		}
		t, ok := dec.target(ps.path, ps.pathRng)
		if !ok {
			continue
		}
		var cs []choice
		for _, v := range ps.values {
			cs = append(cs, choice{overrides: []override{{target: t, expr: v, rng: v.Range(), label: true}}})
		}
		replaced := false
		for i := range axes {
			if axes[i].path == t.path {
				axes[i].choices = cs // the flag wins over the ablation's values
				replaced = true
			}
		}
		switch {
		case replaced:
		case len(cs) > 1:
			axes = append(axes, axis{path: t.path, choices: cs})
		default:
			o := cs[0].overrides[0]
			o.label = false
			fixed = append(fixed, o)
		}
	}
	l.files[ff.name] = ff.file()
	return axes, fixed
}

// gridFits reports whether the axes expand into at most MaxVariants
// cells; if not, it records the error last in dec.diags.
func gridFits(dec *decoder, filename string, axes []axis, ablation *ablationBlock) bool {
	cells := 1
	for _, a := range axes {
		cells *= len(a.choices)
		if cells > MaxVariants {
			rng := hcl.Range{Filename: filename, Start: hcl.InitialPos, End: hcl.InitialPos}
			if ablation != nil {
				rng = ablation.rng
			}
			dec.errorf(rng, "Too many variants",
				"The ablation and --set lists expand into more than %d variants; split the grid.", MaxVariants)
			return false
		}
	}
	return true
}

// describe fills what every variant shares from the first one's
// evaluation: variables, slurm settings, repeats, the experiment block,
// expectations and deviations.
func describe(cfg *Config, m *module, e0 *evaluator, profile string) {
	cfg.Variables = e0.vars
	cfg.Slurm = e0.slurm(m, profile)
	for _, it := range m.items {
		if it.repeat != nil {
			for _, r := range e0.repeatList(it.repeat) { // each instance of a for_each repeat
				cfg.Repeats = append(cfg.Repeats, &Repeat{Name: r.instanceName(), Rounds: e0.rounds[r], Outputs: r.nextOrder, Range: r.defRange})
			}
		}
	}
	if x := m.experiment; x != nil {
		cfg.Experiment = Experiment{Name: x.name, Title: e0.str(x.attrs, "title"), Table: e0.str(x.attrs, "table"), Paper: e0.str(x.attrs, "paper"),
			MinAgreement: e0.share(x.attrs["min_agreement"])}
	}
	seenExpect := map[string]hcl.Range{}
	for _, x := range m.cellSources() { // expect and table blocks in file order (table.go)
		for _, ex := range e0.cells(x) {
			if prev, dup := seenExpect[ex.Name]; dup {
				e0.errorf(ex.Range, "Duplicate expect "+fmt.Sprintf("%q", ex.Name),
					"An expectation named %q was already declared at %s.", ex.Name, prev.String())
				continue
			}
			seenExpect[ex.Name] = ex.Range
			cfg.Expects = append(cfg.Expects, ex)
		}
	}
	cfg.Deviations = e0.deviations(m.deviations, m.profiles[profile], profileName(profile))
}

// describeAblation is the ablation's table: its title, reported metrics,
// and each varied path's values in grid order.
func describeAblation(ablation *ablationBlock, axes []axis, evals []*evaluator, cellList [][]int, minAgreement float64) *Ablation {
	e0 := evals[0]
	out := &Ablation{Name: ablation.name, Range: ablation.rng}
	if ablation.title != nil {
		out.Title = e0.str(hcl.Attributes{"title": {Name: "title", Expr: ablation.title}}, "title")
	}
	var n int // report's columns, whether or not each resolved
	out.Report, n = e0.ablationReport(ablation)
	for i, a := range axes {
		if a.explicit {
			continue
		}
		ax := Axis{Path: a.path}
		for j := range a.choices {
			for k, cell := range cellList {
				if cell[i] == j {
					ax.Values = append(ax.Values, evals[k].labels[a.path])
					break
				}
			}
		}
		out.Vary = append(out.Vary, ax)
	}
	e0.ablationExtras(ablation, out, n)
	e0.minAgreement(ablation, out, minAgreement)
	return out
}

// finishVariants orders each variant's stages into its graph. Module
// stages reached only from the table (expect values, ablation reports)
// run too.
func finishVariants(cfg *Config, evals []*evaluator, profile string) hcl.Diagnostics {
	var extra []string
	for _, x := range cfg.Expects {
		extra = append(extra, x.Value.Stage)
	}
	if cfg.Ablation != nil {
		for _, r := range cfg.Ablation.Report {
			extra = append(extra, r.Stage)
		}
	}
	for _, e := range evals {
		e.finish(extra)
		e.warnUnreached() // a --set or ablation path into a module stage nothing reads (module_paths.go)
	}
	// The deviations of the module instances the variants run (deviation.go).
	cfg.Deviations = append(cfg.Deviations, moduleDeviations(cfg.File, evals, profile)...)
	var diags hcl.Diagnostics
	for i, e := range evals {
		if profile == "" {
			e.checkStandIns(cfg.Deviations)
		}
		cfg.Variants[i].Stages = e.stages
		cfg.Variants[i].Graph = e.graph() // stages and until loops (loop.go)
		diags = append(diags, e.diags...)
	}
	return diags
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// product enumerates the grid cells, the first axis varying slowest; no
// axes gives one empty cell (the default pipeline).
func product(axes []axis) [][]int {
	cells := [][]int{{}}
	for _, a := range axes {
		var next [][]int
		for _, c := range cells {
			for j := range a.choices {
				next = append(next, append(append([]int(nil), c...), j))
			}
		}
		cells = next
	}
	return cells
}

// varied lists the label paths in axis order.
func varied(axes []axis, ab *ablationBlock) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, a := range axes {
		if !a.explicit {
			add(a.path)
			continue
		}
		for _, c := range a.choices {
			for _, o := range c.overrides {
				add(o.target.path)
			}
		}
	}
	return out
}

func cellName(m *module, axes []axis, cell []int, labels map[string]cty.Value) string {
	var parts []string
	for i, a := range axes {
		c := a.choices[cell[i]]
		if a.explicit {
			parts = append(parts, c.name)
			continue
		}
		short := strings.TrimPrefix(a.path, "stage.")
		short = strings.TrimPrefix(short, "repeat.")
		if v, ok := labels[a.path]; ok {
			parts = append(parts, short+"="+formatValue(v))
		} else {
			parts = append(parts, short+"="+exprText(m, c.overrides[0].expr))
		}
	}
	return strings.Join(parts, ", ")
}

// formatValue writes a value as HCL source (3, 0.1, "rake", [1, 2]).
func formatValue(v cty.Value) string {
	if v == cty.NilVal || !v.IsWhollyKnown() {
		return "?"
	}
	if v.Type() == cty.String && !v.IsNull() {
		return v.AsString()
	}
	return hclValue(v)
}

// hclValue writes a known value in HCL syntax.
func hclValue(v cty.Value) string {
	ty := v.Type()
	switch {
	case v.IsNull():
		return "null"
	case ty == cty.String:
		return strconv.Quote(v.AsString())
	case ty == cty.Number:
		return v.AsBigFloat().Text('g', -1)
	case ty == cty.Bool:
		return strconv.FormatBool(v.True())
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		var parts []string
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			parts = append(parts, hclValue(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case ty.IsMapType() || ty.IsObjectType():
		var parts []string
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			parts = append(parts, k.AsString()+" = "+hclValue(e))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return v.GoString()
}

// dedupe drops repeated diagnostics (every variant and every round
// re-evaluates the same expressions) and sorts them by position.
func dedupe(diags hcl.Diagnostics) hcl.Diagnostics {
	seen := map[string]bool{}
	var out hcl.Diagnostics
	for _, d := range diags {
		key := d.Summary
		if d.Subject != nil {
			key += "@" + d.Subject.String() + fmt.Sprint(d.Subject.Start.Byte, d.Subject.End.Byte)
		} else {
			key += "|" + d.Detail
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Subject, out[j].Subject
		switch {
		case a == nil || b == nil:
			return a == nil && b != nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		case a.Start.Byte != b.Start.Byte:
			return a.Start.Byte < b.Start.Byte
		}
		return false
	})
	return out
}

// Validate loads the file at path with opts, then once more under each
// declared profile and each declared ablation, so that a value that is
// wrong only under some profile or grid cell is reported too (`repro
// validate`). The diagnostics are merged and deduplicated.
func (l *Loader) Validate(path string, opts Options) hcl.Diagnostics {
	cfg, diags := l.Load(path, opts)
	if cfg == nil {
		return diags
	}
	for _, p := range cfg.Profiles {
		o := opts
		o.Profile = p
		_, d := l.Load(path, o)
		diags = append(diags, d...)
	}
	for _, a := range cfg.Ablations {
		o := opts
		o.Ablation = a
		_, d := l.Load(path, o)
		diags = append(diags, d...)
	}
	return dedupe(diags)
}
