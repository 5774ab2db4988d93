package dsl

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// An ablation's table beside the paper's: optional `columns`, `paper` and
// `figure` attributes, checked when the ablation is expanded.
//
//	ablation "decoder_depth" {
//	  vary    = { "stage.train.decoder_layers" = [1, 2, 4, 6] }
//	  report  = [stage.eval.metrics.sts12_16, stage.eval.metrics.stsb]
//	  columns = ["STS12-16", "STS-B"]
//	  paper   = { "train.decoder_layers=1" = [75.1, 76.0], "6" = [76.2, 77.0] }
//	  figure  = { file = "figure4.png", x_label = "decoder layers", y_label = "avg. STS" }
//	}
//
// `paper` keys name variants of the DECLARED grid (its vary axes and
// variant blocks, not --set lists): exactly Variant.Name, that is an
// explicit variant's name, or "PATH=VALUE" with PATH the varied path less
// its "stage." or "repeat." prefix ("mask.top_k=1", "idc.rounds=2",
// "var.seed=3") and VALUE the evaluated value written as HCL without string
// quotes (0.10 is "0.1"), cells of several axes joined by ", " in axis
// order (vary axes as written, then the variant blocks). With a single vary
// axis and no variant blocks the bare VALUE ("1") is accepted too. Keys are
// normalised to the Variant.Name form in Ablation.Paper, so the CLI looks
// rows up by v.Name.

func (e *evaluator) ablationExtras(ab *ablationBlock, out *Ablation, n int) {
	out.Columns = e.columns(ab, out.Report, n)
	if ab.hasPaper() {
		names, alias := e.declaredNames(ab)
		out.Paper = e.ablationPaper(ab, names, alias, n)
	}
	if ab.figure != nil {
		out.Figure = e.figure(ab, out.Columns)
	}
	switch {
	case ab.resolution != nil:
		if !ab.hasPaper() {
			e.errorf(ab.resolution.NameRange, "paper_resolution without paper values",
				"Ablation %q declares no `paper` values; add them or remove paper_resolution.", ab.name)
			return
		}
		out.PaperResolution = e.paperResolution(ab.resolution, ab.name, len(out.Columns))
	case ab.hasPaper() && e.m.experiment != nil && e.m.experiment.attrs["paper_resolution"] != nil:
		// The experiment's, like min_agreement: for every ablation with
		// paper values that declares none of its own.
		out.PaperResolution = e.paperResolution(e.m.experiment.attrs["paper_resolution"], ab.name, len(out.Columns))
	}
}

// paperResolution evaluates a `paper_resolution` for ablation abl: one
// number for every column, or a list with one per column; each finite and
// not negative. Errors are reported and give nil.
func (e *evaluator) paperResolution(a *hcl.Attribute, abl string, columns int) []float64 {
	const what = "paper_resolution is the smallest difference between two of the paper's cells that counts as the paper ordering them: a number in the paper's units (such as 0.1), or a list with one per column"
	if !e.checkVars(a.Expr, "paper_resolution") {
		return nil
	}
	v, diags := a.Expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() {
		return nil
	}
	var vals []cty.Value
	switch {
	case v.Type() == cty.Number:
		vals = []cty.Value{v}
	case v.Type().IsTupleType() || v.Type().IsListType():
		vals = v.AsValueSlice()
		if len(vals) != columns {
			e.errorf(a.Expr.Range(), "Invalid paper_resolution",
				"%s; ablation %q has %d column(s), the list %d value(s).", what, abl, columns, len(vals))
			return nil
		}
	default:
		e.errorf(a.Expr.Range(), "Invalid paper_resolution", "%s; got %s.", what, v.Type().FriendlyName())
		return nil
	}
	var out []float64
	for _, x := range vals {
		n, err := convert.Convert(x, cty.Number)
		if err != nil || n.IsNull() {
			e.errorf(a.Expr.Range(), "Invalid paper_resolution", "%s; got %s.", what, x.Type().FriendlyName())
			return nil
		}
		f, _ := n.AsBigFloat().Float64()
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			e.errorf(a.Expr.Range(), "Invalid paper_resolution", "%s; got %v.", what, f)
			return nil
		}
		out = append(out, f)
	}
	return out
}

// axisValue evaluates one declared axis value the way the variant
// evaluation labels it (converted to the parameter's type; an input's
// reference as its source text), for names and the figure check. ok is
// false when the value does not evaluate; its error is reported by the
// variant that uses it.
func (e *evaluator) axisValue(t target, expr hcl.Expression) (cty.Value, bool) {
	ty := cty.DynamicPseudoType
	t = *t.leaf() // a module stage's own attribute (module_paths.go)
	switch t.kind {
	case targetStage:
		s := t.stage
		if s.typ != nil {
			if _, isInput := s.typ.Input(t.attr); isInput {
				return cty.StringVal(exprText(e.m, expr)), true
			}
			if p, ok := s.params[t.attr]; ok {
				ty = p.Type
			}
		}
		if t.attr == "seed" {
			ty = cty.Number
		}
	case targetRounds:
		ty = cty.Number
	case targetVar:
		if v := e.m.variables[t.name]; v != nil && v.typeExpr != nil {
			if c, diags := typeexpr.TypeConstraint(v.typeExpr); !diags.HasErrors() {
				ty = c
			}
		}
	}
	v, diags := expr.Value(e.ctx)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return cty.NilVal, false
	}
	v, err := convert.Convert(v, ty)
	if err != nil {
		return cty.NilVal, false
	}
	return v, true
}

// declaredNames lists the Variant.Name of every cell of the declared grid
// (the same product order as Load) and, for a one-axis grid, the bare
// values as aliases of those names.
func (e *evaluator) declaredNames(ab *ablationBlock) ([]string, map[string]string) {
	var axes [][]string
	alias := map[string]string{}
	for _, ad := range ab.axes {
		short := strings.TrimPrefix(strings.TrimPrefix(ad.target.path, "stage."), "repeat.")
		var parts []string
		for _, x := range ad.values {
			text := exprText(e.m, x)
			if v, ok := e.axisValue(ad.target, x); ok {
				text = formatValue(v)
			}
			parts = append(parts, short+"="+text)
			if len(ab.axes) == 1 && len(ab.variants) == 0 {
				alias[text] = short + "=" + text
			}
		}
		axes = append(axes, parts)
	}
	if len(ab.variants) > 0 {
		var parts []string
		for _, v := range ab.variantList() {
			parts = append(parts, v.name)
		}
		axes = append(axes, parts)
	}
	names := []string{""}
	for _, parts := range axes {
		var next []string
		for _, n := range names {
			for _, p := range parts {
				if n == "" {
					next = append(next, p)
				} else {
					next = append(next, n+", "+p)
				}
			}
		}
		names = next
	}
	return names, alias
}

// keyString reads an object key written as a name, a string or a number.
func (e *evaluator) keyString(key hcl.Expression) (string, bool) {
	if kw := hcl.ExprAsKeyword(key); kw != "" {
		return kw, true
	}
	if !e.checkVars(key, "A key") {
		return "", false
	}
	v, diags := key.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return "", false
	}
	if !v.IsNull() {
		if s, err := convert.Convert(v, cty.String); err == nil {
			return s.AsString(), true
		}
	}
	e.errorf(key.Range(), "Invalid key", "A key here is a name, a string or a number.")
	return "", false
}

func (e *evaluator) ablationPaper(ab *ablationBlock, names []string, alias map[string]string, n int) map[string][]float64 {
	var pairs []hcl.KeyValuePair
	if ab.paper != nil {
		var diags hcl.Diagnostics
		pairs, diags = hcl.ExprMap(ab.paper.Expr)
		if diags.HasErrors() {
			e.errorf(ab.paper.Expr.Range(), "Invalid paper",
				"`paper` must be an object mapping variant names to lists of numbers aligned with report, such as { \"mask.top_k=1\" = [77.7, 79.3, 65.4] }.")
			return nil
		}
	}
	valid := map[string]bool{}
	for _, n := range names {
		valid[n] = true
	}
	out := map[string][]float64{}
	where := map[string]hcl.Range{}
	for _, p := range pairs {
		key, ok := e.keyString(p.Key)
		if !ok {
			continue
		}
		name := key
		if !valid[name] {
			if a, ok := alias[key]; ok {
				name = a
			} else {
				e.errorf(p.Key.Range(), "Unknown variant",
					"Ablation %q has no variant %q.%s Its variants: %s.", ab.name, key, Suggest(key, names), quoteList(names))
				continue
			}
		}
		if prev, dup := where[name]; dup {
			e.errorf(p.Key.Range(), "Duplicate key",
				"%q names variant %q, already given paper values at %s.", key, name, prev.String())
			continue
		}
		where[name] = p.Key.Range()
		vals, ok := e.numbers(p.Value, fmt.Sprintf("paper[%q]", key))
		if !ok {
			continue
		}
		if n >= 0 && len(vals) != n {
			e.errorf(p.Value.Range(), "Wrong number of paper values",
				"paper[%q] has %d values but report has %d columns; give one per report column, null where the paper has none.",
				key, len(vals), n)
			continue
		}
		out[name] = vals
	}
	e.variantPapers(ab, n, out, where)
	return out
}

// hasPaper reports whether the ablation gives paper values: its `paper`,
// or a variant block's.
func (ab *ablationBlock) hasPaper() bool {
	return ab.paper != nil || slices.ContainsFunc(ab.variants, func(v variantDecl) bool { return v.paper != nil })
}

// variantPapers adds the paper values variant blocks give (paper = [...]
// in the block, or each.value.paper beside the element's settings) to
// out; where records the ablation's `paper` keys, for duplicates.
func (e *evaluator) variantPapers(ab *ablationBlock, n int, out map[string][]float64, where map[string]hcl.Range) {
	for _, v := range ab.variantList() {
		if v.paper == nil {
			continue
		}
		if prev, dup := where[v.name]; dup {
			e.errorf(v.paper.Range(), "Duplicate paper values",
				"Variant %q is given paper values here and at %s; give them once.", v.name, prev.String())
			continue
		}
		where[v.name] = v.paper.Range()
		what := fmt.Sprintf("The paper values of variant %q", v.name)
		vals, ok := e.numbers(v.paper, what)
		if !ok {
			continue
		}
		if n >= 0 && len(vals) != n {
			e.errorf(v.paper.Range(), "Wrong number of paper values",
				"%s are %d but report has %d columns; give one per report column, null where the paper has none.", what, len(vals), n)
			continue
		}
		out[v.name] = vals
	}
}

// numbers evaluates a list of numbers; null elements are NaN.
func (e *evaluator) numbers(expr hcl.Expression, what string) ([]float64, bool) {
	if !e.checkVars(expr, what) {
		return nil, false
	}
	v, diags := expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return nil, false
	}
	bad := func() ([]float64, bool) {
		e.errorf(expr.Range(), "Invalid paper values",
			"%s must be a list of numbers, such as [77.7, 79.3] (null for a cell the paper leaves empty).", what)
		return nil, false
	}
	ty := v.Type()
	if v.IsNull() || !(ty.IsListType() || ty.IsTupleType()) {
		return bad()
	}
	var out []float64
	for it := v.ElementIterator(); it.Next(); {
		_, x := it.Element()
		if x.IsNull() {
			out = append(out, math.NaN())
			continue
		}
		n, err := convert.Convert(x, cty.Number)
		if err != nil {
			return bad()
		}
		f, _ := n.AsBigFloat().Float64()
		out = append(out, f)
	}
	return out, true
}

// columns evaluates `columns`, or derives labels from the report
// references: the metric key path, with the stage name in front when two
// paths would read the same.
func (e *evaluator) columns(ab *ablationBlock, report []Ref, n int) []string {
	if a := ab.columns; a != nil {
		if !e.checkVars(a.Expr, "columns") {
			return nil
		}
		v, diags := a.Expr.Value(e.ctx)
		e.diags = append(e.diags, diags...)
		if diags.HasErrors() || !v.IsWhollyKnown() {
			return nil
		}
		v, err := convert.Convert(v, cty.List(cty.String))
		if err != nil || v.IsNull() {
			e.errorf(a.Expr.Range(), "Invalid columns", "`columns` must be a list of strings, such as [\"STS12-16\", \"STS-B\"].")
			return nil
		}
		var out []string
		for it := v.ElementIterator(); it.Next(); {
			_, x := it.Element()
			if x.IsNull() {
				e.errorf(a.Expr.Range(), "Invalid columns", "A column label cannot be null.")
				return nil
			}
			out = append(out, x.AsString())
		}
		if n >= 0 && len(out) != n {
			e.errorf(a.Expr.Range(), "Wrong number of columns",
				"columns has %d labels but report has %d columns.", len(out), n)
			return nil
		}
		return out
	}
	out := make([]string, len(report))
	seen := map[string]bool{}
	clash := false
	for i, r := range report {
		out[i] = strings.Join(r.Path, ".")
		clash = clash || seen[out[i]]
		seen[out[i]] = true
	}
	if clash {
		for i, r := range report {
			out[i] = r.Stage + "." + out[i]
		}
	}
	return out
}

var figureKeys = []string{"file", "title", "x_label", "y_label"}

func (e *evaluator) figure(ab *ablationBlock, columns []string) *Figure {
	a := ab.figure
	switch {
	case len(ab.variants) > 0:
		e.errorf(a.NameRange, "Figure needs one numeric axis",
			"A figure plots the first report column against one varied number; ablation %q has variant blocks, which name cells rather than numbers.", ab.name)
		return nil
	case len(ab.axes) != 1:
		var paths []string
		for _, ad := range ab.axes {
			paths = append(paths, ad.target.path)
		}
		e.errorf(a.NameRange, "Figure needs one numeric axis",
			"A figure plots the first report column against one varied number; ablation %q varies %d paths (%s).",
			ab.name, len(ab.axes), strings.Join(paths, ", "))
		return nil
	}
	ad := ab.axes[0]
	for _, x := range ad.values {
		v, ok := e.axisValue(ad.target, x)
		if !ok {
			return nil // reported by the variant that uses it
		}
		if v.Type() != cty.Number {
			e.errorf(a.NameRange, "Figure needs one numeric axis",
				"%s takes the value %s, not a number; a figure's x axis is numeric.", ad.target.path, exprText(e.m, x))
			return nil
		}
	}
	f := &Figure{Axis: ad.target.path, Range: a.Range}
	pairs, diags := hcl.ExprMap(a.Expr)
	if diags.HasErrors() {
		e.errorf(a.Expr.Range(), "Invalid figure",
			"`figure` must be an object such as { file = \"figure4.png\", title = \"...\", x_label = \"...\", y_label = \"...\" }.")
		return nil
	}
	fields := map[string]*string{"file": &f.File, "title": &f.Title, "x_label": &f.XLabel, "y_label": &f.YLabel}
	ok := true
	for _, p := range pairs {
		key, good := e.keyString(p.Key)
		if !good {
			ok = false
			continue
		}
		dst, known := fields[key]
		if !known {
			e.errorf(p.Key.Range(), "Unsupported figure attribute",
				"A figure has no attribute %q.%s It takes: %s.", key, Suggest(key, figureKeys), strings.Join(figureKeys, ", "))
			ok = false
			continue
		}
		*dst = e.str(hcl.Attributes{key: {Name: key, Expr: p.Value}}, key)
	}
	if f.File == "" {
		e.errorf(a.Expr.Range(), "Missing figure file", "A figure needs file = \"NAME.png\", the image to write.")
		ok = false
	}
	if !ok {
		return nil
	}
	if f.XLabel == "" {
		f.XLabel = f.Axis
	}
	if f.YLabel == "" && len(columns) > 0 {
		f.YLabel = columns[0]
	}
	return f
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return listOrNone(q)
}

// share evaluates an optional `min_agreement`: a share in (0, 1]; 0 when
// absent or wrong (reported).
func (e *evaluator) share(a *hcl.Attribute) float64 {
	if a == nil {
		return 0
	}
	v := e.num(hcl.Attributes{"min_agreement": a}, "min_agreement", math.NaN())
	if math.IsNaN(v) {
		return 0
	}
	if !(v > 0 && v <= 1) {
		e.errorf(a.Expr.Range(), "Invalid min_agreement",
			"min_agreement is the share of the paper's pairwise orderings that must agree: a number in (0, 1], such as 0.8; got %v.", v)
		return 0
	}
	return v
}

// minAgreement sets out.MinAgreement: the ablation's own, else the
// experiment's, which applies only to ablations with paper values.
func (e *evaluator) minAgreement(ab *ablationBlock, out *Ablation, experiment float64) {
	if ab.minAgreement == nil {
		if len(out.Paper) > 0 {
			out.MinAgreement = experiment
		}
		return
	}
	out.MinAgreement = e.share(ab.minAgreement)
	if out.MinAgreement > 0 && !ab.hasPaper() {
		e.errorf(ab.minAgreement.NameRange, "min_agreement without paper values",
			"Ablation %q declares no `paper` values to agree with; add them or remove min_agreement.", ab.name)
	}
}

// ---- variant blocks with for_each ----
//
//	variant "rake" {
//	  for_each = {
//	    "RAKE (top1)" = { top_k = 1, paper = [73.5, 73.9, 62.4] }
//	    "RAKE (top2)" = { top_k = 2, paper = [76.8, 77.6, 63.6] }
//	  }
//	  set   = { stage.mask.method = "rake", stage.mask.top_k = each.value.top_k }
//	  paper = each.value.paper
//	}
//
// is one variant per element, named by its key ("RAKE (top1)", ...), in
// the order for_each writes them (as for stages, foreach.go), in the place
// of the block among the other variants; the block's label names the block
// only (in messages). each.key and each.value are in scope in `set`'s
// values, which are otherwise evaluated as written in each cell (as a
// variant's set always is), and in `paper`: a variant block's own paper
// values (with or without for_each), one per report column, as the
// ablation's `paper` map gives them by name (a variant given values by
// both is an error). The for_each itself is evaluated once, before
// the grid is built, with the profile's, -var's and single --set values:
// values only (var., local., functions), not stage outputs. Errors at the
// line: a key that is not a string, a key given twice (or a variant's name
// taken already), each in a variant without for_each, each in the value of
// an input (an input is set to a reference written out), an ablation whose
// variants are all empty for_each blocks, paper values given twice.

// eachExpr is a variant's set value with its for_each element bound to
// each; it shadows a for_each stage's own each where it is evaluated.
type eachExpr struct {
	hcl.Expression
	each cty.Value
}

func (x *eachExpr) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	vars := map[string]cty.Value{"each": x.each}
	if ctx == nil {
		return x.Expression.Value(&hcl.EvalContext{Variables: vars, Functions: functions()})
	}
	child := ctx.NewChild()
	child.Variables = vars
	return x.Expression.Value(child)
}

// Variables leaves out each.*, which the element binds.
func (x *eachExpr) Variables() []hcl.Traversal {
	var out []hcl.Traversal
	for _, t := range x.Expression.Variables() {
		if t.RootName() != "each" {
			out = append(out, t)
		}
	}
	return out
}

func readsEach(expr hcl.Expression) (hcl.Traversal, bool) {
	if expr == nil {
		return nil, false
	}
	for _, t := range expr.Variables() {
		if t.RootName() == "each" {
			return t, true
		}
	}
	return nil, false
}

// variantEach checks a variant block's use of each: only a block with
// for_each has it, and it gives values, not the references an input takes.
func (d *decoder) variantEach(v variantDecl) {
	if t, reads := readsEach(v.paper); reads && v.forEach == nil {
		d.errorf(t.SourceRange(), "each outside for_each",
			"each.key and each.value are defined in a variant block with for_each (variant %q has none); write the paper values.", v.name)
	}
	for _, o := range v.sets {
		t, reads := readsEach(o.expr)
		switch {
		case !reads:
		case v.forEach == nil:
			d.errorf(t.SourceRange(), "each outside for_each",
				"each.key and each.value are defined in a variant block with for_each (variant %q has none); write the value, or give the block for_each = { NAME = VALUE, ... }.", v.name)
		case o.target.isInput():
			d.errorf(t.SourceRange(), "each in an input",
				"%s is an input: it is set to a reference written out (stage.NAME.OUTPUT, or a local holding one); each.key and each.value in variant %q give values, for parameters.", o.target.path, v.name)
		}
	}
}

// expandVariants fills the explicit axis (explicit, ab's variant blocks)
// with one choice per variant, each for_each block expanded in its place,
// and records the names in ab.expanded for the paper and figure checks.
// ovrs are the overrides every cell starts from (profile, -var, single
// --set values): a for_each is evaluated under them.
func (l *Loader) expandVariants(dec *decoder, ab *ablationBlock, axes []axis, ovrs []override, profile string) []axis {
	if ab == nil || len(ab.variants) == 0 {
		return axes
	}
	var e *evaluator // only a for_each needs one
	var list []variantDecl
	seen := map[string]int{}
	add := func(v variantDecl, at hcl.Range, from *variantDecl) {
		if j, dup := seen[v.name]; dup {
			prev := list[j]
			if from == nil && prev.forEach == nil { // two plain blocks: reported by decode, both kept
				list = append(list, v)
				return
			}
			d := prev.rng
			if prev.forEach != nil {
				d = prev.forEach.Expr.Range()
			}
			dec.errorf(at, "Duplicate variant "+fmt.Sprintf("%q", v.name),
				"Ablation %q has two variants named %q (the other at %s); a variant's name names its cell.", ab.name, v.name, d.String())
			return
		}
		if from != nil {
			v.forEach = from.forEach // where it came from, for messages
		}
		seen[v.name] = len(list)
		list = append(list, v)
	}
	empty := 0
	for _, v := range ab.variants {
		if v.forEach == nil {
			add(v, v.rng, nil)
			continue
		}
		if e == nil {
			e = evaluate(dec.m, ovrs, profile, "")
		}
		n := len(e.diags)
		insts := e.variantInstances(ab, v)
		dec.diags = append(dec.diags, e.diags[n:]...)
		if len(insts) == 0 {
			empty++
		}
		for _, inst := range insts {
			add(inst, v.forEach.Expr.Range(), &v)
		}
	}
	i := slices.IndexFunc(axes, func(a axis) bool { return a.explicit })
	if i < 0 {
		return axes
	}
	if len(list) == 0 {
		if empty > 0 && len(ab.axes) == 0 {
			dec.errorf(ab.rng, "Empty ablation",
				"Ablation %q has no variant: its variant blocks' for_each give no element.", ab.name)
		}
		return slices.Delete(axes, i, i+1) // an empty axis would leave no cell
	}
	ab.expanded = list
	for _, v := range list {
		c := choice{name: v.name}
		for _, o := range v.sets {
			o.label = true
			c.overrides = append(c.overrides, o)
		}
		axes[i].choices = append(axes[i].choices, c)
	}
	return axes
}

// variantInstances evaluates variant block v's for_each into one variant
// per element, named by its key, each set value with the element bound.
func (e *evaluator) variantInstances(ab *ablationBlock, v variantDecl) []variantDecl {
	fe := v.forEach.Expr
	val, ok := e.forEachValue(fe)
	if !ok {
		return nil
	}
	if holdsOutput(val) {
		e.errorf(fe.Range(), "Stage output in a variant's for_each",
			"The for_each of variant %q in ablation %q holds stage outputs; a variant's for_each gives values for its set (a list or set of strings, a map), known when the grid is built.", v.name, ab.name)
		return nil
	}
	keys, vals, ok := e.forEachKeys(fe, val)
	if !ok {
		return nil
	}
	var out []variantDecl
	for _, k := range keys {
		each := cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(k), "value": vals[k]})
		inst := variantDecl{name: k, rng: v.rng}
		for _, o := range v.sets {
			if _, reads := readsEach(o.expr); reads {
				if o.target.isInput() {
					continue // reported by decode (variantEach)
				}
				o.expr = &eachExpr{Expression: o.expr, each: each}
			}
			inst.sets = append(inst.sets, o)
		}
		if v.paper != nil {
			inst.paper = &eachExpr{Expression: v.paper, each: each}
		}
		out = append(out, inst)
	}
	return out
}

// variantList is the ablation's variants as the grid has them: the
// for_each blocks expanded once the ablation is loaded.
func (ab *ablationBlock) variantList() []variantDecl {
	if ab.expanded != nil {
		return ab.expanded
	}
	return ab.variants
}

// ---- report read from a local ----
//
//	locals { table4 = [stage.eval.metrics.sts12_16, stage.eval.metrics.stsb] }
//	ablation "a" { report = local.table4 ... }
//
// A `report` that is not a list literal is evaluated as an expression over
// locals that hold metric references (local_refs.go), var. and functions
// (concat(local.table4, [stage.eval.metrics.sickr])): a list whose every
// element is a key of a metrics output, the same references as writing
// them out. A list literal's elements are metric references each, as
// before (local.NAME.metrics.KEY among them).

// ablationReport resolves the ablation's report references; n is the
// number of columns report declares (-1 when that is unknown: reported).
func (e *evaluator) ablationReport(ab *ablationBlock) ([]Ref, int) {
	if ab.reportExpr == nil {
		var out []Ref
		for _, r := range ab.report {
			if ref, ok := e.metric(r); ok {
				out = append(out, ref)
			}
		}
		return out, len(ab.report)
	}
	const want = "`report` is a list of metric references, such as [stage.eval.metrics.avg], or a local holding one (report = local.columns with locals { columns = [stage.eval.metrics.avg] })"
	expr := ab.reportExpr
	v, ok := e.refExprValue(expr)
	if !ok {
		return nil, -1
	}
	ty := v.Type()
	if v.IsNull() || !(ty.IsListType() || ty.IsTupleType()) {
		e.errorf(expr.Range(), "Invalid report", "%s; %s is %s.", want, exprText(e.m, expr), friendly(v))
		return nil, -1
	}
	var out []Ref
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, x := it.Element()
		if x.IsNull() || !x.Type().Equals(outputType) {
			e.errorf(expr.Range(), "Invalid report", "%s; element %d of %s is %s.", want, i, exprText(e.m, expr), friendly(x))
			continue
		}
		o := x.EncapsulatedValue().(*instOutput)
		ref := o.ref
		ref.Range = expr.Range()
		switch {
		case o.kind != registry.KindMetrics:
			e.errorf(expr.Range(), "Not a metric",
				"Element %d of %s is an output of kind %s; a report column reads a key of a metrics output, such as stage.eval.metrics.avg.", i, exprText(e.m, expr), o.kind)
		case len(ref.Path) == 0:
			e.errorf(expr.Range(), "Missing metric key",
				"Element %d of %s is a whole metrics object (of stage %s); name a key after it, such as .avg.", i, exprText(e.m, expr), ref.Stage)
		default:
			out = append(out, ref)
		}
	}
	return out, i
}
