package dsl

import (
	"fmt"
	"math"
	"strings"

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

func (e *evaluator) ablationExtras(ab *ablationBlock, out *Ablation) {
	out.Columns = e.columns(ab, out.Report)
	if ab.paper != nil {
		names, alias := e.declaredNames(ab)
		out.Paper = e.ablationPaper(ab, names, alias)
	}
	if ab.figure != nil {
		out.Figure = e.figure(ab, out.Columns)
	}
	switch {
	case ab.resolution != nil:
		if ab.paper == nil {
			e.errorf(ab.resolution.NameRange, "paper_resolution without paper values",
				"Ablation %q declares no `paper` values; add them or remove paper_resolution.", ab.name)
			return
		}
		out.PaperResolution = e.paperResolution(ab.resolution, ab.name, len(out.Columns))
	case ab.paper != nil && e.m.experiment != nil && e.m.experiment.attrs["paper_resolution"] != nil:
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
		for _, v := range ab.variants {
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

func (e *evaluator) ablationPaper(ab *ablationBlock, names []string, alias map[string]string) map[string][]float64 {
	pairs, diags := hcl.ExprMap(ab.paper.Expr)
	if diags.HasErrors() {
		e.errorf(ab.paper.Expr.Range(), "Invalid paper",
			"`paper` must be an object mapping variant names to lists of numbers aligned with report, such as { \"mask.top_k=1\" = [77.7, 79.3, 65.4] }.")
		return nil
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
		if len(vals) != len(ab.report) {
			e.errorf(p.Value.Range(), "Wrong number of paper values",
				"paper[%q] has %d values but report has %d columns; give one per report column, null where the paper has none.",
				key, len(vals), len(ab.report))
			continue
		}
		out[name] = vals
	}
	return out
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
func (e *evaluator) columns(ab *ablationBlock, report []Ref) []string {
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
		if len(out) != len(ab.report) {
			e.errorf(a.Expr.Range(), "Wrong number of columns",
				"columns has %d labels but report has %d columns.", len(out), len(ab.report))
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
	if out.MinAgreement > 0 && ab.paper == nil {
		e.errorf(ab.minAgreement.NameRange, "min_agreement without paper values",
			"Ablation %q declares no `paper` values to agree with; add them or remove min_agreement.", ab.name)
	}
}
