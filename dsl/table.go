package dsl

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Table blocks. A table states a paper's table as rows x columns: the
// columns once (with the metric key behind each), then one row block per
// row of the paper, naming the stage whose metrics fill it and the paper's
// values in column order:
//
//	table "Table 2" {
//	  columns   = { STS12 = "sts12", STS13 = "sts13", "STS-B" = "stsb", Avg = "avg" }
//	  tolerance = 1.0                           # every cell's default
//
//	  row "gense" {
//	    title = "GenSE (Table 2)"               # the row as printed (default: the label)
//	    stage = stage.eval                      # its metrics output; or any metrics reference
//	    paper = [80.72, 87.43, 87.65, 84.78]    # one per column; null: no paper value
//	  }
//	  row "simcse_not_here" {                   # a row only the paper reports
//	    title   = "SimCSE-RoBERTa-Base (Table 2)"
//	    columns = ["STS-B", "Avg"]              # the columns it has, of the table's
//	    paper   = [85.83, 82.52]
//	    pending = "trained and reported by experiments/simcse.hcl"
//	  }
//	}
//
// A table is only a way of writing expect cells: it lowers to exactly the
// Expects that one expect block per row would give (expect.go), so
// agreement, tolerances, baselines and the report treat them alike. A row
// is the expect block of its label: with several cells it is a for_each
// row, its cells named ROW[COLUMN] (Block ROW, Key COLUMN); a row of one
// cell is named ROW. Cells come in file order, tables and expect blocks
// interleaved as written.
//
// `columns` is a list of labels (each label is also the metric key) or an
// object of label = key, in the order written (directly or as local.NAME);
// a key is a string or a list of strings (a path of keys, such as
// ["levels", "0-1", "mean"]). A row's cell reads the row's `stage` followed
// by the column's key: `stage` is stage.NAME or stage.NAME["KEY"] (a
// for_each instance; its one metrics output), module.M.STAGE, or any
// metrics reference (stage.S.metrics,
// stage.S.metrics.mean, repeat.R.last.metrics, repeat.R.round[2].metrics,
// module.M.OUTPUT, input.NAME), whose keys go before the column's.
//
// The per-cell attributes -- paper, tolerance, max_tolerance,
// lower_is_better, count, pending -- take a single value (every cell of the
// row), a list with one value per column (the row's columns, or the table's
// at table level), or an object of column = value; a null, whole or as an
// element, leaves the default. At table level they are every row's
// defaults (not paper or pending); a row's own win. `profile` (table or
// row) restricts the cells to one profile. A row without `stage` needs a
// pending reason for every cell; a row with one computes every cell its
// `pending` does not name.
//
// Rows from keys, and rows under a condition:
//
//	row "released" {
//	  for_each = local.models                   # a row per key (a list, set, map, or stage.NAME)
//	  enabled  = each.value.released != ""      # present only when its -var is set
//	  name     = "released_${each.key}"         # its cells: released_KEY[COLUMN]
//	  title    = "${each.value.title} (released)"
//	  stage    = stage.eval_released[each.key]
//	  paper    = each.value.paper
//	}
//
// `for_each` on a row gives one row per element, in the order for_each
// writes them (as for stages, foreach.go: an object constructor's or a
// list's order, a stage's instance order, the branch a conditional takes),
// with each.key and each.value in every attribute. Each row is named by
// `name` (the label of a row without for_each), else LABEL[KEY]: with one
// column its cell is LABEL[KEY] (Block LABEL, Key KEY), as an expect block
// with for_each over rows gives; with several, LABEL[KEY][COLUMN]. Its
// title defaults to each.key. `stage = each.value` reads the one metrics
// output of a stage listed in for_each (for_each = stage.eval). `enabled =
// false` (a row's, or one element's) leaves the row out before anything
// else of it is evaluated, so it may name a stage instance that exists only
// when it is enabled; for_each over an empty map (var.x == "" ? {} : ...)
// gives no row either, as in Terraform.

var tableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "columns", Required: true}, {Name: "tolerance"}, {Name: "max_tolerance"},
		{Name: "lower_is_better"}, {Name: "count"}, {Name: "profile"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "row", LabelNames: []string{"name"}}},
}

var rowSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "title"}, {Name: "stage"}, {Name: "columns"}, {Name: "paper"}, {Name: "tolerance"},
	{Name: "max_tolerance"}, {Name: "lower_is_better"}, {Name: "count"}, {Name: "pending"}, {Name: "profile"},
	{Name: "for_each"}, {Name: "name"}, {Name: "enabled"},
}}

type tableBlock struct {
	name  string
	attrs hcl.Attributes
	rows  []*tableRow
	rng   hcl.Range
}

type tableRow struct {
	name  string
	attrs hcl.Attributes
	rng   hcl.Range
}

func (d *decoder) table(b *hcl.Block) {
	content, diags := b.Body.Content(tableSchema)
	d.diags = append(d.diags, diags...)
	name := b.Labels[0]
	for _, t := range d.m.tables {
		if t.name == name {
			d.duplicate("table", name, b.LabelRanges[0], t.rng)
			return
		}
	}
	t := &tableBlock{name: name, attrs: content.Attributes, rng: b.DefRange}
	for _, rb := range content.Blocks {
		rc, diags := rb.Body.Content(rowSchema)
		d.diags = append(d.diags, diags...)
		r := &tableRow{name: rb.Labels[0], attrs: rc.Attributes, rng: rb.DefRange}
		if strings.TrimSpace(r.name) == "" {
			d.errorf(rb.LabelRanges[0], "Invalid row name", "A row's label names its cells (ROW[COLUMN]); it cannot be empty.")
			continue
		}
		dup := false
		for _, prev := range t.rows {
			if prev.name == r.name {
				d.duplicate("row", r.name, rb.LabelRanges[0], prev.rng)
				dup = true
			}
		}
		if !dup {
			t.rows = append(t.rows, r)
		}
	}
	if len(content.Blocks) == 0 {
		d.errorf(b.DefRange, "Empty table", "Table %q needs at least one row \"NAME\" { ... } block.", name)
	}
	d.m.tables = append(d.m.tables, t)
}

// cellSource is an expect block or a table block.
type cellSource struct {
	expect *expectBlock
	table  *tableBlock
}

// cellSources lists m's expect and table blocks in file order.
func (m *module) cellSources() []cellSource {
	out := make([]cellSource, 0, len(m.expects)+len(m.tables))
	for _, x := range m.expects {
		out = append(out, cellSource{expect: x})
	}
	for _, t := range m.tables {
		out = append(out, cellSource{table: t})
	}
	at := func(c cellSource) int {
		if c.table != nil {
			return c.table.rng.Start.Byte
		}
		return c.expect.rng.Start.Byte
	}
	sort.SliceStable(out, func(i, j int) bool { return at(out[i]) < at(out[j]) })
	return out
}

// cells evaluates one expect or table block into its cells.
func (e *evaluator) cells(c cellSource) []*Expect {
	if c.table != nil {
		return e.tableCells(c.table)
	}
	return e.expects(c.expect)
}

// column is one column of a table: its label and the metric keys behind it.
type column struct {
	label string
	path  []string
}

// tableCells lowers a table block to its cells.
func (e *evaluator) tableCells(t *tableBlock) []*Expect {
	cols, ok := e.tableColumns(t)
	if !ok {
		return nil
	}
	labels := make([]string, len(cols))
	byLabel := map[string]column{}
	for i, c := range cols {
		labels[i] = c.label
		byLabel[c.label] = c
	}
	where := fmt.Sprintf("table %q", t.name)
	defaults := map[string]map[string]cty.Value{}
	for _, ca := range cellAttrs {
		if ca.rowOnly {
			continue
		}
		defaults[ca.name] = e.perCell(t.attrs, ca, labels, labels, where)
	}
	profile := e.profileAttr(t.attrs)
	var out []*Expect
	named := map[string]hcl.Range{} // row names given so far, for duplicates
	saved := e.ctx
	for _, r := range t.rows {
		for _, inst := range e.rowInstances(r, named) {
			n := len(e.diags)
			if inst.ctx != nil {
				e.ctx = inst.ctx
			}
			out = append(out, e.rowCells(t, r, inst, byLabel, labels, defaults, profile)...)
			e.ctx = saved
			e.inInstance(r, inst.forKey, n)
		}
	}
	return out
}

// rowInstance is one row a row block gives: the block itself, or one
// element of its for_each.
type rowInstance struct {
	name   string           // the row's name: its cells are NAME[COLUMN], or NAME
	block  string           // Block and Key of a one-column cell: NAME and "", or
	key    string           // LABEL and KEY for a for_each row without name
	title  string           // the title when the row gives none
	ctx    *hcl.EvalContext // with each in scope; nil without for_each
	forKey string           // the for_each key, for messages
}

// rowInstances evaluates a row block's for_each, name and enabled into the
// rows it gives. A row with for_each gives one row per element, in the
// order for_each writes them (as for stages: an object constructor's or a
// list's order, a stage's instance order, the branch a conditional takes),
// with each.key and each.value in every attribute; each is named by
// `name`, else LABEL[KEY]. `enabled = false` leaves a row (an element) out,
// and nothing else of it is evaluated, so it may read a stage instance that
// exists only when it is enabled.
func (e *evaluator) rowInstances(r *tableRow, named map[string]hcl.Range) []rowInstance {
	fe, hasForEach := r.attrs["for_each"]
	if !hasForEach {
		if a, ok := r.attrs["name"]; ok {
			e.errorf(a.NameRange, "Name without for_each",
				"name gives each row of a row block with for_each its name (name = \"released_${each.key}\"); a row without for_each is named by its label, here %q.", r.name)
		}
		if !e.rowEnabled(r) {
			return nil
		}
		if prev, dup := named[r.name]; dup { // a for_each row's name; labels are unique (decode)
			e.errorf(r.rng, "Duplicate row name",
				"This row is named %q, as is the row at %s; a row's name names its cells (NAME[COLUMN]), so it names one row.", r.name, prev.String())
			return nil
		}
		named[r.name] = r.rng
		return []rowInstance{{name: r.name, block: r.name, title: r.name}}
	}
	v, ok := e.forEachValue(fe.Expr) // lists, maps, a stage's instances (foreach.go)
	if !ok {
		return nil
	}
	keys, vals, ok := e.forEachKeys(fe.Expr, v)
	if !ok {
		return nil
	}
	var out []rowInstance
	saved := e.ctx
	defer func() { e.ctx = saved }()
	for _, k := range keys {
		vars := make(map[string]cty.Value, len(saved.Variables)+1)
		for n, v := range saved.Variables {
			vars[n] = v
		}
		vars["each"] = cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(k), "value": vals[k]})
		e.ctx = &hcl.EvalContext{Variables: vars, Functions: saved.Functions}
		n := len(e.diags)
		inst := rowInstance{name: r.name + "[" + k + "]", block: r.name, key: k, title: k, ctx: e.ctx, forKey: k}
		ok := e.rowEnabled(r)
		rng := r.rng
		if a, has := r.attrs["name"]; ok && has {
			rng = a.Expr.Range()
			inst.name, ok = e.rowName(a)
			inst.block, inst.key = inst.name, ""
		}
		if ok {
			if prev, dup := named[inst.name]; dup {
				e.errorf(rng, "Duplicate row name",
					"This row is named %q, as is the row at %s; a row's name names its cells (NAME[COLUMN]), so it names one row.", inst.name, prev.String())
				ok = false
			} else {
				named[inst.name] = rng
			}
		}
		e.inInstance(r, k, n)
		if ok {
			out = append(out, inst)
		}
	}
	return out
}

// inInstance names the for_each element of row r (key; "" for a row
// without for_each) in the diagnostics raised since n: every element's
// share the row's source range.
func (e *evaluator) inInstance(r *tableRow, key string, n int) {
	if _, ok := r.attrs["for_each"]; !ok {
		return
	}
	for _, d := range e.diags[n:] {
		if !strings.HasPrefix(d.Detail, "In row ") {
			d.Detail = fmt.Sprintf("In row %s[%s]: %s", r.name, key, d.Detail)
		}
	}
}

// rowEnabled evaluates a row's enabled: true or false, true when absent.
// An invalid value is reported, and the row left out.
func (e *evaluator) rowEnabled(r *tableRow) bool {
	a, ok := r.attrs["enabled"]
	if !ok {
		return true
	}
	if !e.checkVars(a.Expr, "enabled") {
		return false
	}
	v, diags := a.Expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return false
	}
	b, err := convert.Convert(v, cty.Bool)
	if err != nil || b.IsNull() {
		e.errorf(a.Expr.Range(), "Invalid enabled",
			"enabled is true or false, such as var.released != \"\" (the row is there only when the variable is set); got %s.", friendly(v))
		return false
	}
	return b.True()
}

// rowName evaluates the name of one row of a for_each row block: a
// non-empty string.
func (e *evaluator) rowName(a *hcl.Attribute) (string, bool) {
	if !e.checkVars(a.Expr, "name") {
		return "", false
	}
	v, diags := a.Expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return "", false
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil || s.IsNull() || strings.TrimSpace(s.AsString()) == "" {
		what := friendly(v)
		if err == nil && !s.IsNull() {
			what = "an empty string"
		}
		e.errorf(a.Expr.Range(), "Invalid row name",
			"A row's name names its cells (NAME[COLUMN]): a non-empty string, such as \"released_${each.key}\"; got %s.", what)
		return "", false
	}
	return s.AsString(), true
}

// tableColumns evaluates a table's columns: a list of labels, or an object
// of label = metric key (a string or a list of strings).
func (e *evaluator) tableColumns(t *tableBlock) ([]column, bool) {
	a, ok := t.attrs["columns"]
	if !ok {
		return nil, false // reported by the schema
	}
	if !e.checkVars(a.Expr, "columns") {
		return nil, false
	}
	v, diags := a.Expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return nil, false
	}
	bad := func(format string, args ...any) ([]column, bool) {
		e.errorf(a.Expr.Range(), "Invalid columns", format, args...)
		return nil, false
	}
	const shape = `columns is a list of labels, such as ["STS12", "Avg"], or an object of label = metric key, such as { STS12 = "sts12", Avg = "avg" }`
	ty := v.Type()
	var cols []column
	switch {
	case v.IsNull():
		return bad("%s; got null.", shape)
	case ty.IsListType() || ty.IsTupleType():
		seen := map[string]bool{}
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			s, err := convert.Convert(ev, cty.String)
			if err != nil || s.IsNull() {
				return bad("%s; an element is %s.", shape, friendly(ev))
			}
			if seen[s.AsString()] {
				return bad("Column %q is listed twice.", s.AsString())
			}
			seen[s.AsString()] = true
			cols = append(cols, column{label: s.AsString(), path: []string{s.AsString()}})
		}
	case ty.IsMapType() || ty.IsObjectType():
		vals := map[string]cty.Value{}
		var keys []string
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			vals[k.AsString()] = ev
			keys = append(keys, k.AsString())
		}
		sort.Strings(keys)
		if order, ok := e.sourceOrder(a.Expr); ok && len(order) == len(keys) {
			keys = order
		}
		for _, k := range keys {
			path, ok := keyPath(vals[k])
			if !ok {
				return bad("The metric key of column %q must be a string or a list of strings (a path of keys); got %s.", k, friendly(vals[k]))
			}
			cols = append(cols, column{label: k, path: path})
		}
	default:
		return bad("%s; got %s.", shape, ty.FriendlyName())
	}
	if len(cols) == 0 {
		return bad("A table needs at least one column.")
	}
	return cols, true
}

// keyPath reads a column's metric key: a string, or a list of strings.
func keyPath(v cty.Value) ([]string, bool) {
	if v.IsNull() || !v.IsWhollyKnown() {
		return nil, false
	}
	ty := v.Type()
	if ty == cty.String {
		return []string{v.AsString()}, v.AsString() != ""
	}
	if !(ty.IsListType() || ty.IsTupleType()) || v.LengthInt() == 0 {
		return nil, false
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if ev.IsNull() || ev.Type() != cty.String || ev.AsString() == "" {
			return nil, false
		}
		out = append(out, ev.AsString())
	}
	return out, true
}

func friendly(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	return v.Type().FriendlyName()
}

// cellAttr is an attribute that can differ from cell to cell.
type cellAttr struct {
	name    string
	typ     cty.Type
	rowOnly bool // not a table-level default
}

var cellAttrs = []cellAttr{
	{name: "paper", typ: cty.Number, rowOnly: true},
	{name: "tolerance", typ: cty.Number},
	{name: "max_tolerance", typ: cty.Number},
	{name: "lower_is_better", typ: cty.Bool},
	{name: "count", typ: cty.Bool},
	{name: "pending", typ: cty.String, rowOnly: true},
}

// perCell evaluates a per-cell attribute for the columns cols (labels): a
// single value for every column, a list with one value per column, or an
// object of column = value. all are the table's columns; where names the
// block for messages. It returns the values set, by column.
func (e *evaluator) perCell(attrs hcl.Attributes, ca cellAttr, cols, all []string, where string) map[string]cty.Value {
	out := map[string]cty.Value{}
	a, ok := attrs[ca.name]
	if !ok || !e.checkVars(a.Expr, "This attribute") {
		return out
	}
	v, diags := a.Expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() {
		return out
	}
	want := map[cty.Type]string{cty.Number: "numbers", cty.Bool: "true or false", cty.String: "strings"}[ca.typ]
	set := func(col string, ev cty.Value, rng hcl.Range) {
		if ev.IsNull() {
			return
		}
		c, err := convert.Convert(ev, ca.typ)
		if err != nil {
			e.errorf(rng, "Invalid "+ca.name, "%s values are %s; the value for column %q is %s.", ca.name, want, col, friendly(ev))
			return
		}
		out[col] = c
	}
	ty := v.Type()
	switch {
	case ty.IsListType() || ty.IsTupleType():
		n := v.LengthInt()
		if n != len(cols) {
			e.errorf(a.Expr.Range(), "Wrong number of values",
				"%s gives %d %s value%s for its %d column%s (%s): one per column, null where there is none.",
				upperFirst(where), n, ca.name, plural(n), len(cols), plural(len(cols)), strings.Join(cols, ", "))
			return out
		}
		elems := elementRanges(a.Expr, n)
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			_, ev := it.Element()
			set(cols[i], ev, elems[i])
		}
	case ty.IsMapType() || ty.IsObjectType():
		keys := elementKeyRanges(a.Expr)
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			col := k.AsString()
			rng, ok := keys[col]
			if !ok {
				rng = a.Expr.Range()
			}
			if !slices.Contains(cols, col) {
				e.unknownColumn(rng, where, col, cols, all)
				continue
			}
			set(col, ev, rng)
		}
	default:
		for _, col := range cols {
			set(col, v, a.Expr.Range())
		}
	}
	if ca.name == "tolerance" || ca.name == "max_tolerance" {
		reported := false
		for _, col := range cols { // in column order: one message, the first column
			c, ok := out[col]
			if !ok {
				continue
			}
			if f, _ := c.AsBigFloat().Float64(); f < 0 {
				if !reported {
					e.errorf(a.Expr.Range(), "Invalid "+ca.name, "A %s is at least 0; column %q has %v.", ca.name, col, f)
					reported = true
				}
				delete(out, col)
			}
		}
	}
	return out
}

func (e *evaluator) unknownColumn(rng hcl.Range, where, col string, cols, all []string) {
	if slices.Contains(all, col) {
		e.errorf(rng, "Unknown column", "Column %q is not one of the columns of %s: %s.", col, where, strings.Join(cols, ", "))
		return
	}
	e.errorf(rng, "Unknown column", "%s has no column %q.%s Its columns: %s.", upperFirst(where), col, Suggest(col, all), strings.Join(all, ", "))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// elementRanges returns the ranges of a list constructor's n elements,
// else n copies of the whole expression's range.
func elementRanges(expr hcl.Expression, n int) []hcl.Range {
	out := make([]hcl.Range, n)
	tc, ok := expr.(*hclsyntax.TupleConsExpr)
	for i := range out {
		if ok && len(tc.Exprs) == n {
			out[i] = tc.Exprs[i].Range()
		} else {
			out[i] = expr.Range()
		}
	}
	return out
}

// elementKeyRanges maps an object constructor's literal keys to their
// ranges.
func elementKeyRanges(expr hcl.Expression) map[string]hcl.Range {
	out := map[string]hcl.Range{}
	oc, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return out
	}
	for _, item := range oc.Items {
		if k := hcl.ExprAsKeyword(item.KeyExpr); k != "" {
			out[k] = item.KeyExpr.Range()
			continue
		}
		if v, diags := item.KeyExpr.Value(nil); !diags.HasErrors() && v.Type() == cty.String && !v.IsNull() {
			out[v.AsString()] = item.KeyExpr.Range()
		}
	}
	return out
}

// profileAttr evaluates an optional profile attribute and checks that the
// profile exists.
func (e *evaluator) profileAttr(attrs hcl.Attributes) string {
	p := e.str(attrs, "profile")
	if p != "" {
		if _, ok := e.m.profiles[p]; !ok {
			e.errorf(attrs["profile"].Expr.Range(), "Unknown profile",
				"There is no profile %q.%s Declared: %s.", p, Suggest(p, e.m.profOrder), listOrNone(e.m.profOrder))
		}
	}
	return p
}

// rowCells lowers one row to its cells.
func (e *evaluator) rowCells(t *tableBlock, r *tableRow, inst rowInstance, byLabel map[string]column, all []string,
	defaults map[string]map[string]cty.Value, profile string) []*Expect {
	where := fmt.Sprintf("row %q", inst.name)
	cols := all
	if a, ok := r.attrs["columns"]; ok {
		var ok bool
		if cols, ok = e.rowColumns(a, t, all); !ok {
			return nil
		}
	}
	vals := map[string]map[string]cty.Value{}
	for _, ca := range cellAttrs {
		own := e.perCell(r.attrs, ca, cols, all, where)
		merged := map[string]cty.Value{}
		for k, v := range defaults[ca.name] {
			merged[k] = v
		}
		for k, v := range own {
			merged[k] = v
		}
		vals[ca.name] = merged
	}
	if _, ok := r.attrs["profile"]; ok {
		profile = e.profileAttr(r.attrs) // the row's own wins, "" (every profile) too
	}
	title := inst.title
	if _, ok := r.attrs["title"]; ok {
		title = e.str(r.attrs, "title")
	}

	var head Ref
	headOK := false
	sa, hasStage := r.attrs["stage"]
	if hasStage {
		head, headOK = e.rowStage(sa.Expr)
	}
	if pa, ok := r.attrs["pending"]; ok && hasStage && len(vals["pending"]) == len(cols) {
		e.errorf(pa.Expr.Range(), "Pending row with a stage",
			"pending marks cells we do not compute, and it names every cell of row %q: remove stage, or give pending only for the cells the stage does not fill.", inst.name)
	}
	var missing []string
	out := make([]*Expect, 0, len(cols))
	for _, label := range cols {
		c := byLabel[label]
		x := &Expect{Name: inst.name, Block: inst.block, Key: inst.key, Row: title, Column: label, Range: r.rng,
			Paper: math.NaN(), Tolerance: DefaultTolerance, Profile: profile}
		if len(cols) > 1 {
			x.Name, x.Block, x.Key = inst.name+"["+label+"]", inst.name, label
		}
		if v, ok := vals["paper"][label]; ok {
			x.Paper, _ = v.AsBigFloat().Float64()
		}
		if v, ok := vals["tolerance"][label]; ok {
			x.Tolerance, _ = v.AsBigFloat().Float64()
		}
		if v, ok := vals["max_tolerance"][label]; ok {
			x.MaxTolerance, _ = v.AsBigFloat().Float64()
		}
		if v, ok := vals["lower_is_better"][label]; ok {
			x.LowerIsBetter = v.True()
		}
		if v, ok := vals["count"][label]; ok {
			x.Count = v.True()
		}
		if v, ok := vals["pending"][label]; ok {
			x.Pending = v.AsString()
		}
		switch {
		case x.Pending != "":
		case !hasStage:
			missing = append(missing, label)
		case headOK:
			x.Value = Ref{Stage: head.Stage, Output: head.Output, Range: head.Range,
				Path: append(append([]string(nil), head.Path...), c.path...)}
		}
		out = append(out, x)
	}
	switch {
	case len(missing) == len(cols):
		e.errorf(r.rng, "Missing value",
			`Row %q needs stage = stage.NAME (whose metrics its columns read), or pending = "why" for a row only the paper reports.`, inst.name)
	case len(missing) > 0:
		e.errorf(r.rng, "Missing value",
			"Row %q has no stage, so each of its cells needs a pending reason; %s %s none.", inst.name, quoteList(missing), map[bool]string{true: "has", false: "have"}[len(missing) == 1])
	}
	return out
}

// rowColumns evaluates a row's own columns: a list of the table's column
// labels, in the order the row gives its values.
func (e *evaluator) rowColumns(a *hcl.Attribute, t *tableBlock, all []string) ([]string, bool) {
	if !e.checkVars(a.Expr, "columns") {
		return nil, false
	}
	v, diags := a.Expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return nil, false
	}
	if v.IsNull() || !(v.Type().IsListType() || v.Type().IsTupleType()) || v.LengthInt() == 0 {
		e.errorf(a.Expr.Range(), "Invalid columns",
			"A row's columns is a non-empty list of the table's column labels (%s), for a row that fills only some of them.", strings.Join(all, ", "))
		return nil, false
	}
	elems := elementRanges(a.Expr, v.LengthInt())
	var out []string
	ok := true
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, ev := it.Element()
		s, err := convert.Convert(ev, cty.String)
		if err != nil || s.IsNull() {
			e.errorf(elems[i], "Invalid columns", "A column label is a string; got %s.", friendly(ev))
			ok = false
			continue
		}
		col := s.AsString()
		switch {
		case !slices.Contains(all, col):
			e.unknownColumn(elems[i], fmt.Sprintf("table %q", t.name), col, all, all)
			ok = false
		case slices.Contains(out, col):
			e.errorf(elems[i], "Invalid columns", "Column %q is listed twice.", col)
			ok = false
		default:
			out = append(out, col)
		}
	}
	return out, ok
}

// rowStage resolves a row's stage: stage.NAME or module.M.STAGE (the
// stage's one metrics output), or any reference to a metrics artifact,
// with keys after it that go before each column's.
func (e *evaluator) rowStage(expr hcl.Expression) (Ref, bool) {
	notStage := func() (Ref, bool) {
		e.errorf(expr.Range(), "Not a stage",
			"A row's stage names the stage whose metrics fill it, such as stage.eval, module.m.eval or repeat.idc.last.metrics; %s is not a reference to one.", exprText(e.m, expr))
		return Ref{}, false
	}
	switch expr.(type) {
	case *hclsyntax.ScopeTraversalExpr, *hclsyntax.RelativeTraversalExpr, *hclsyntax.IndexExpr:
	default:
		return notStage()
	}
	vars := expr.Variables()
	if len(vars) == 0 {
		return notStage()
	}
	switch vars[0].RootName() {
	case "stage", "module", "repeat", "input", "each":
	default:
		return notStage()
	}
	t, dyn, ok := e.dynTraversal(expr)
	if !ok {
		return Ref{}, false
	}
	parts, good := steps(t)
	if !good {
		e.errorf(expr.Range(), "Invalid reference", "A reference is %s.", refForms)
		return Ref{}, false
	}
	root := t.RootName()
	if !e.staticHead(root, parts, dyn[1:]) {
		return Ref{}, false
	}
	// stage.NAME["KEY"]: a for_each instance, bare like stage.NAME.
	inst := len(t) == 3 && root == "stage"
	if inst {
		_, inst = t[2].(hcl.TraverseIndex)
	}
	if root == "each" {
		parts, ok = e.bareEach(t, parts, expr.Range(), exprText(e.m, expr))
	} else {
		parts, ok = e.bareStage(root, parts, inst, expr.Range(), exprText(e.m, expr))
	}
	if !ok {
		return Ref{}, false
	}
	ref, kind, ok := e.resolveTrav(root, parts, expr.Range(), scope{})
	if !ok {
		return Ref{}, false
	}
	if kind != registry.KindMetrics {
		e.errorf(expr.Range(), "Not a metric",
			"%s is of kind %s; a row's stage is a stage with a metrics output (stage.eval) or a metrics reference (stage.eval.metrics).", exprText(e.m, expr), kind)
		return Ref{}, false
	}
	ref.Range = expr.Range()
	return ref, true
}

// bareStage completes stage.NAME, stage.NAME["KEY"] (inst: a for_each
// instance) and module.M.STAGE with the stage's one metrics output.
func (e *evaluator) bareStage(root string, parts []step, inst bool, rng hcl.Range, text string) ([]step, bool) {
	var s *stageBlock
	switch {
	case root == "stage" && len(parts) == 1 && !parts[0].isIdx:
		s = e.m.stages[parts[0].name]
		if s != nil && s.repeat != nil {
			return parts, true // resolveTrav explains
		}
	case root == "stage" && len(parts) == 2 && inst && !parts[0].isIdx && !parts[1].isIdx:
		s = e.m.stages[parts[0].name]
		if s == nil || s.repeat != nil || s.typ == nil {
			return parts, true
		}
		if _, isOutput := s.typ.Output(parts[1].name); isOutput {
			return parts, true // stage.NAME["OUTPUT"]: an output written in brackets
		}
	case root == "module" && len(parts) == 2 && !parts[0].isIdx && !parts[1].isIdx:
		c, ok := e.m.calls[parts[0].name]
		if !ok || c.child == nil {
			return parts, true
		}
		if _, isOut := c.child.iface.outputs[parts[1].name]; isOut {
			return parts, true
		}
		if ms := c.child.stages[parts[1].name]; ms != nil && ms.repeat == nil {
			s = ms
		}
	}
	if s == nil || s.typ == nil {
		return parts, true // not a bare stage, or one resolveTrav reports
	}
	var outs []string
	for _, p := range s.typ.Outputs {
		if p.Kind == registry.KindMetrics {
			outs = append(outs, p.Name)
		}
	}
	switch len(outs) {
	case 1:
		return append(append([]step(nil), parts...), step{name: outs[0], rng: rng}), true
	case 0:
		e.errorf(rng, "Not a metric",
			"Stage %q (%s) has no metrics output (its outputs: %s); a row's stage is one that computes the row's numbers.",
			s.name, s.typ.Name, strings.Join(names(s.typ.Outputs), ", "))
	default:
		e.errorf(rng, "Ambiguous stage",
			"Stage %q (%s) has several metrics outputs (%s); name one, such as %s.%s.", s.name, s.typ.Name, strings.Join(outs, ", "), text, outs[0])
	}
	return nil, false
}

// bareEach completes each.value (or each.value.NAME) that holds one stage's
// outputs -- a row of for_each = stage.NAME, or of { x = stage.x } -- with
// its one metrics output.
func (e *evaluator) bareEach(t hcl.Traversal, parts []step, rng hcl.Range, text string) ([]step, bool) {
	if _, inScope := e.ctx.Variables["each"]; !inScope {
		return parts, true // resolveEach explains
	}
	v, diags := t.TraverseAbs(e.ctx)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || !v.Type().IsObjectType() {
		return parts, true // not a stage's outputs: resolveEach reports what it is
	}
	var all, outs []string
	for name, ty := range v.Type().AttributeTypes() {
		if !ty.Equals(outputType) {
			return parts, true
		}
		all = append(all, name)
		if o := v.GetAttr(name); !o.IsNull() && o.EncapsulatedValue().(*instOutput).kind == registry.KindMetrics {
			outs = append(outs, name)
		}
	}
	sort.Strings(all)
	sort.Strings(outs)
	switch len(outs) {
	case 1:
		return append(append([]step(nil), parts...), step{name: outs[0], rng: rng}), true
	case 0:
		e.errorf(rng, "Not a metric",
			"%s holds a stage's outputs (%s), none of them metrics; a row's stage is one that computes the row's numbers.", text, strings.Join(all, ", "))
	default:
		e.errorf(rng, "Ambiguous stage", "%s has several metrics outputs (%s); name one, such as %s.%s.", text, strings.Join(outs, ", "), text, outs[0])
	}
	return nil, false
}
