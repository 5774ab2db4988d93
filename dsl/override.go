package dsl

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Overrides come from profiles, ablations, -var and --set. Every one is a
// (target, expression) pair: the expression replaces what the file says, and
// is evaluated exactly like an attribute written in the stage block, so a
// profile, a grid cell and a flag cannot disagree on conversion rules.

type targetKind int

const (
	targetStage    targetKind = iota // stage.S.ATTR
	targetRounds                     // repeat.R.rounds
	targetVar                        // var.NAME
	targetResource                   // stage.S.resources.NAME, or resources.NAME (stage nil: a profile's default)
)

type target struct {
	kind   targetKind
	stage  *stageBlock
	attr   string
	repeat *repeatBlock
	name   string  // variable name
	path   string  // canonical form, the key of Variant.Label
	key    string  // the instance of a for_each stage ("" : the whole block)
	inner  *target // targetModuleStage: the path in module `name`'s file (module_paths.go)
}

type override struct {
	target target
	expr   hcl.Expression
	rng    hcl.Range // where the override is written, for diagnostics
	label  bool      // record the value in Variant.Label
}

// target resolves an override path, reporting an error at rng when it names
// nothing.
func (d *decoder) target(path string, rng hcl.Range) (target, bool) {
	if t, ok, handled := d.instanceTarget(path, rng); handled { // stage.NAME["KEY"].ATTR (foreach.go)
		return t, ok
	}
	if t, ok, handled := d.repeatInstanceTarget(path, rng); handled { // repeat.NAME["KEY"].rounds (repeat_foreach.go)
		return t, ok
	}
	if strings.HasPrefix(path, "module.") { // module.M.STAGE.ATTR (module_paths.go)
		return d.moduleTarget(path, rng)
	}
	parts := strings.Split(path, ".")
	bad := func(detail string, args ...any) (target, bool) {
		d.errorf(rng, "Invalid override path", "%q: "+detail, append([]any{path}, args...)...)
		return target{}, false
	}
	switch {
	case len(parts) == 3 && parts[0] == "stage":
		s, ok := d.m.stages[parts[1]]
		if !ok {
			return bad("there is no stage %q.%s", parts[1], Suggest(parts[1], d.stageNames()))
		}
		return d.stageTarget(s, parts[2], rng)
	case len(parts) == 3 && parts[0] == "repeat":
		r, ok := d.m.repeats[parts[1]]
		if !ok {
			return bad("there is no repeat block %q.%s", parts[1], Suggest(parts[1], slices.Sorted(maps.Keys(d.m.repeats))))
		}
		if parts[2] != "rounds" {
			return bad("only the rounds of a repeat block can be overridden.")
		}
		return target{kind: targetRounds, repeat: r, path: path}, true
	case len(parts) == 4 && parts[0] == "stage" && parts[2] == "resources":
		s, ok := d.m.stages[parts[1]]
		if !ok {
			return bad("there is no stage %q.%s", parts[1], Suggest(parts[1], d.stageNames()))
		}
		return d.resourceTarget(s, parts[3], rng)
	case len(parts) == 2 && parts[0] == "resources":
		return d.resourceTarget(nil, parts[1], rng)
	case len(parts) == 2 && parts[0] == "var":
		if _, ok := d.m.variables[parts[1]]; !ok {
			return bad("there is no variable %q.%s", parts[1], Suggest(parts[1], d.m.varOrder))
		}
		return target{kind: targetVar, name: parts[1], path: path}, true
	}
	return bad("a path is stage.NAME.ATTRIBUTE, stage.NAME.resources.ATTRIBUTE, module.NAME.STAGE.ATTRIBUTE, repeat.NAME.rounds or var.NAME.")
}

func (d *decoder) stageTarget(s *stageBlock, attr string, rng hcl.Range) (target, bool) {
	path := "stage." + s.name + "." + attr
	if attr == "for_each" {
		return d.forEachTarget(s, path, rng)
	}
	if attr == "uses" {
		d.errorf(rng, "Invalid override", "%s: a stage's type cannot be overridden; declare another stage instead.", path)
		return target{}, false
	}
	if s.typ == nil {
		// The stage's type is unknown (already reported): accept any name
		// rather than pile up errors.
		return target{kind: targetStage, stage: s, attr: attr, path: path}, true
	}
	if !s.hasAttr(attr) {
		d.unknownAttr(s, attr, rng)
		return target{}, false
	}
	return target{kind: targetStage, stage: s, attr: attr, path: path}, true
}

// flagFile is a synthetic source file holding command-line values, one per
// line, so that a diagnostic about a flag shows the flag as its snippet.
type flagFile struct {
	name  string
	lines []string
}

func (f *flagFile) add(text string) hcl.Pos {
	off := 0
	for _, l := range f.lines {
		off += len(l) + 1
	}
	f.lines = append(f.lines, text)
	return hcl.Pos{Line: len(f.lines), Column: 1, Byte: off}
}

func (f *flagFile) file() *hcl.File {
	return &hcl.File{Bytes: []byte(strings.Join(f.lines, "\n") + "\n"), Body: hcl.EmptyBody()}
}

// span returns the range of text[from:to] on the line starting at pos.
func span(filename string, pos hcl.Pos, text string, from, to int) hcl.Range {
	col := func(i int) int { return pos.Column + len([]rune(text[:i])) }
	return hcl.Range{
		Filename: filename,
		Start:    hcl.Pos{Line: pos.Line, Column: col(from), Byte: pos.Byte + from},
		End:      hcl.Pos{Line: pos.Line, Column: col(to), Byte: pos.Byte + to},
	}
}

// flagValue parses one command-line value: an HCL expression when it is
// one (1e-5, [1, 2], "x", true, var.seed, stage.a.b), else the literal
// string (fast, foo bar). A bare word like `fast` parses as a variable
// reference; it is taken as a string unless it starts with a name the
// language defines.
func flagValue(filename, text string, pos hcl.Pos) hcl.Expression {
	rng := span(filename, pos, text, 0, len(text))
	if checkNesting(filename, []byte(text), pos).HasErrors() {
		// Too deep to parse: the literal string, which the parameter's
		// type check then refuses with the flag as the snippet.
		return hcl.StaticExpr(cty.StringVal(text), rng)
	}
	expr, diags := hclsyntax.ParseExpression([]byte(text), filename, pos)
	if diags.HasErrors() {
		return hcl.StaticExpr(cty.StringVal(text), rng)
	}
	// A bare word is a string (-var name=foo), and so is anything that
	// reads a name the language does not have: a relative path such as
	// data/t5-base parses as data / t5 - base, a division of unknowns.
	for _, t := range expr.Variables() {
		switch t.RootName() {
		case "var", "local", "stage", "repeat", "module":
		default:
			return hcl.StaticExpr(cty.StringVal(text), rng)
		}
	}
	return expr
}

// splitTopLevel splits s on commas outside brackets, braces, parentheses
// and quotes, returning each piece's byte offsets.
func splitTopLevel(s string) [][2]int {
	var out [][2]int
	depth, start := 0, 0
	inQuote, escaped := false, false
	for i, r := range s {
		switch {
		case inQuote:
			switch {
			case escaped:
				escaped = false
			case r == '\\':
				escaped = true
			case r == '"':
				inQuote = false
			}
		case r == '"':
			inQuote = true
		case r == '[' || r == '{' || r == '(':
			depth++
		case r == ']' || r == '}' || r == ')':
			if depth > 0 {
				depth--
			}
		case r == ',' && depth == 0:
			out = append(out, [2]int{start, i})
			start = i + 1
		}
	}
	return append(out, [2]int{start, len(s)})
}

// parsedSet is one --set flag: a path and one or more values.
type parsedSet struct {
	path    string
	pathRng hcl.Range
	values  []hcl.Expression
}

func parseSet(ff *flagFile, text string) (parsedSet, hcl.Diagnostics) {
	pos := ff.add(text)
	eq := pathEnd(text) // the first '=' outside an instance key
	if eq <= 0 {
		rng := span(ff.name, pos, text, 0, len(text))
		return parsedSet{}, hcl.Diagnostics{{
			Severity: hcl.DiagError, Summary: "Invalid --set", Subject: &rng,
			Detail: fmt.Sprintf("%q: write --set stage.NAME.ATTRIBUTE=VALUE (or VALUE1,VALUE2,... for one variant each).", text),
		}}
	}
	ps := parsedSet{path: strings.TrimSpace(text[:eq]), pathRng: span(ff.name, pos, text, 0, eq)}
	for _, p := range splitTopLevel(text[eq+1:]) {
		from, to := eq+1+p[0], eq+1+p[1]
		piece := text[from:to]
		trimmed := strings.TrimSpace(piece)
		from += strings.Index(piece, trimmed)
		to = from + len(trimmed)
		vpos := span(ff.name, pos, text, from, to).Start
		ps.values = append(ps.values, flagValue(ff.name, trimmed, vpos))
	}
	return ps, nil
}
