package dsl

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"repro/internal/dataset"
)

// Deviations: every difference from the paper is declared as data, so that
// the report prints it under the table instead of a comment keeping it.
//
//	deviation "nli_placeholder" {
//	  what     = "generation prompts' placeholder"
//	  paper    = "T_e and T_c write [X1] (Table 1)"
//	  ours     = "[X]: generate.complete has one placeholder"
//	  why      = "the prompt text is otherwise Table 1's"
//	  tables   = ["Table 2"]
//	  evidence = "gense.md Table 1"           # a reading of an ambiguous passage says where
//	  stand_ins = ["semeval2016_cqa"]        # data directory datasets read in the paper's place
//	}
//
// At top level a deviation holds for every profile; inside a profile block,
// for that profile only (its report lists the file's, then its own). The
// paper profile may read a dataset the catalogue marks as a stand-in only
// when a top-level deviation names it in stand_ins: otherwise the paper
// profile would print the paper's table beside numbers from other data
// without a word.
//
// A top-level deviation may name the profiles whose reports print it:
//
//	deviation "default_top_k" {
//	  profiles = ["paper"]   # "paper": the default profile (the stage blocks as written)
//	  ...
//	}
//
// Most of a file's differences from the paper are written about the paper
// profile (what its stage blocks do), and a mini or ci profile that sets
// something else must not print them. The paper profile has no block to
// hold them, so the list is on the deviation: top level stays the one place
// a reader finds the paper profile's deviations, and a deviation several
// profiles share is written once. Every name must be "paper" or a declared
// profile (an unknown one is an error at the list); the list is not empty;
// stand_ins (what the paper profile reads) needs "paper" in it; a profile
// block's deviation takes no list (it is that profile's). Without it a
// deviation holds for every profile, as before.
//
// The names are exact: a profile that extends a listed one does not get the
// deviation unless it is listed too (profiles = ["paper", "mini", "ci"]).
// A child exists to change its parent's settings, and a text about the
// parent's settings is what the child must not print when it changes them
// (InfoCSE's ci redraws mini's split); listing each profile keeps every
// report's list readable in the one block. This differs from a deviation
// inside a profile block, which a child inherits (extends.go): there the
// text is part of the parent's settings, which the child starts from. It is
// how an expect or table row's `profile` reads too.

var deviationSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "what", Required: true}, {Name: "paper", Required: true}, {Name: "ours", Required: true},
	{Name: "why", Required: true}, {Name: "tables"}, {Name: "evidence"}, {Name: "stand_ins"},
	{Name: "profiles"},
}}

// paperProfile is how a deviation's profiles list names the default profile.
const paperProfile = "paper"

type deviationBlock struct {
	name    string
	profile string // "" at top level
	attrs   hcl.Attributes
	rng     hcl.Range
}

// deviation decodes a deviation block at top level (profile nil) or in a
// profile.
func (d *decoder) deviation(b *hcl.Block, p *profileBlock) {
	content, diags := b.Body.Content(deviationSchema)
	d.diags = append(d.diags, diags...)
	if !d.label(b, "deviation") {
		return
	}
	name := b.Labels[0]
	dv := &deviationBlock{name: name, attrs: content.Attributes, rng: b.DefRange}
	// One name per report: a profile's deviation may not reuse the name of
	// a top-level one either.
	scope := d.m.deviations
	if a, ok := content.Attributes["profiles"]; ok && p != nil {
		d.errorf(a.NameRange, "Invalid profiles",
			"A deviation inside profile %q holds for that profile (and those extending it); profiles = [...] belongs on a top-level deviation.", p.name)
	}
	if p != nil {
		dv.profile = p.name
		scope = append(append([]*deviationBlock(nil), d.m.deviations...), p.deviations...)
	}
	for _, prev := range scope {
		if prev.name == name {
			d.duplicate("deviation", name, b.LabelRanges[0], prev.rng)
			return
		}
	}
	if p != nil {
		p.deviations = append(p.deviations, dv)
	} else {
		d.m.deviations = append(d.m.deviations, dv)
	}
}

// deviations evaluates the top-level deviation blocks and then those of
// profile (nil: the paper profile, or a module that does not declare the
// selected one), and keeps those that hold for the profile named selected
// ("paper": the default). Every top-level block is evaluated, so that each
// profile reports its errors.
func (e *evaluator) deviations(top []*deviationBlock, profile *profileBlock, selected string) []*Deviation {
	blocks := top
	if profile != nil {
		blocks = append(append([]*deviationBlock(nil), top...), profile.deviations...)
	}
	var out []*Deviation
	for _, b := range blocks {
		text := map[string]string{}
		for _, n := range []string{"what", "paper", "ours", "why", "evidence"} {
			a, ok := b.attrs[n]
			if !ok {
				continue // a required one is reported by the schema
			}
			if text[n] = e.str(b.attrs, n); strings.TrimSpace(text[n]) == "" {
				e.errorf(a.Expr.Range(), "Invalid "+n, "A deviation's %s must say something: it is printed under the table.", n)
			}
		}
		dv := &Deviation{Name: b.name, Profile: b.profile, Range: b.rng,
			What: text["what"], Paper: text["paper"], Ours: text["ours"], Why: text["why"], Evidence: text["evidence"]}
		if a, ok := b.attrs["tables"]; ok {
			dv.Tables = e.stringList(a, `["Table 2"]`)
		}
		if a, ok := b.attrs["stand_ins"]; ok {
			for _, s := range e.stringList(a, `["nli"]`) {
				if d, ok := dataset.Lookup(s); !ok || d.StandIn == "" {
					e.errorf(a.Expr.Range(), "Invalid stand_ins", "%q is not a stand-in of the data directory (stand-ins: %s).", s, strings.Join(standInNames(), ", "))
					continue
				}
				dv.StandIns = append(dv.StandIns, s)
			}
		}
		if a, ok := b.attrs["profiles"]; ok && b.profile == "" {
			dv.Profiles = e.deviationProfiles(a)
			if len(dv.StandIns) > 0 && dv.Profiles != nil && !slices.Contains(dv.Profiles, paperProfile) {
				e.errorf(b.attrs["stand_ins"].Expr.Range(), "Invalid stand_ins",
					"stand_ins names what the paper profile reads in the paper's place, and this deviation's profiles leave out %q.", paperProfile)
			}
			if dv.Profiles != nil && !slices.Contains(dv.Profiles, selected) {
				continue
			}
		}
		out = append(out, dv)
	}
	return out
}

// deviationProfiles evaluates a top-level deviation's profiles list: "paper"
// or declared profiles, at least one.
func (e *evaluator) deviationProfiles(a *hcl.Attribute) []string {
	before := len(e.diags)
	names := e.stringList(a, `["paper"]`)
	if names == nil {
		if len(e.diags) == before { // an empty list, not a wrong one
			e.errorf(a.Expr.Range(), "Invalid profiles", "A deviation's profiles list names at least one profile; without the attribute it holds for every profile.")
		}
		return nil
	}
	declared := append([]string{paperProfile}, e.m.profOrder...)
	for i, n := range names {
		switch {
		case !slices.Contains(declared, n):
			e.errorf(a.Expr.Range(), "Unknown profile",
				"There is no profile %q.%s Declared: %s (%q is the default profile).", n, Suggest(n, declared), strings.Join(declared, ", "), paperProfile)
		case slices.Contains(names[:i], n):
			e.errorf(a.Expr.Range(), "Invalid profiles", "Profile %q is listed twice.", n)
		}
	}
	return names
}

// stringList evaluates a list-of-strings attribute.
func (e *evaluator) stringList(a *hcl.Attribute, example string) []string {
	if !e.checkVars(a.Expr, "This attribute") {
		return nil
	}
	v, diags := a.Expr.Value(e.ctx)
	e.diags = append(e.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() {
		return nil
	}
	v, err := convert.Convert(v, cty.List(cty.String))
	if err != nil {
		e.errorf(a.Expr.Range(), "Invalid "+a.Name, "%s must be a list of strings, such as %s.", a.Name, example)
		return nil
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, s := it.Element()
		if s.IsNull() || strings.TrimSpace(s.AsString()) == "" {
			e.errorf(a.Expr.Range(), "Invalid "+a.Name, "%s must not hold null or empty strings.", a.Name)
			return nil
		}
		out = append(out, s.AsString())
	}
	return out
}

func standInNames() []string {
	var out []string
	for _, n := range dataset.Names() {
		if d, _ := dataset.Lookup(n); d.StandIn != "" {
			out = append(out, n)
		}
	}
	return out
}

// profileName is how a deviation's profiles list names profile ("" is the
// paper profile).
func profileName(profile string) string {
	if profile == "" {
		return paperProfile
	}
	return profile
}

// Module deviations. A module's deviation blocks are about the stages its
// file declares, so they hold wherever those stages run: the reports of a
// file list its own deviations, then those of every module instance whose
// stages its profile runs (in any variant), in module block order, a
// module's own before those of the modules it uses. A module that the
// profile does not reach (the paper profile that loads the real checkpoints
// instead of pretrained.hcl's) adds nothing.
//
// The profile filter is the file's: a module deviation's profiles list is
// matched against the name of the profile the report is for ("paper": the
// default), and a module's profile block adds its deviations when the
// module declares the report's profile, as profiles propagate into modules
// by name (module.go). A module that declares no profile P runs its stage
// blocks as written under P, and its profiles = ["paper"] deviations are
// not printed there: list P (and declare it) where they hold.
//
// Each carries where it comes from: Modules (the instances, as stage
// instance names start: "module.chat", "module.chat.module.lm") and Source
// (the module's file, relative to the including file's directory). One
// module file used twice (GenSE's open-domain and in-domain synthesis)
// gives one entry naming both instances when the two evaluate to the same
// text, and one entry per instance, next to each other, when its text
// differs (a deviation that reads the instance's variables).
//
// A module's tables are its own ("Table 2" in gense.hcl is GenSE's), so
// its deviations' tables are qualified with the module's short name where
// the including file's reports print them: "GenSE Table 2" (shortName,
// qualifyTables). The file's own deviations are printed as written.
//
// stand_ins of a module deviation that holds for the paper profile declare
// what the stages of that module instance (and of the modules it uses)
// read in the paper's place; the including file's declare it for every
// stage, its own and the modules'.
func moduleDeviations(file string, evals []*evaluator, profile string) []*Deviation {
	if len(evals) == 0 {
		return nil
	}
	e0 := evals[0]
	reached := func(prefix string) bool {
		for _, e := range evals {
			for _, s := range e.stages {
				if strings.HasPrefix(s.Name, prefix) {
					return true
				}
			}
		}
		return false
	}
	var out []*Deviation
	seen := map[string]*Deviation{}
	var walk func(e *evaluator)
	walk = func(e *evaluator) {
		for _, name := range e.m.callOrder {
			k := e.children[name]
			if k == nil || k == evaluating {
				continue
			}
			// Evaluated for every module, reached or not, so that an error
			// in one is reported wherever the module is used.
			devs := k.deviations(k.m.deviations, k.m.profiles[profile], profileName(profile))
			e0.diags = append(e0.diags, k.diags...)
			k.diags = nil
			if reached(k.prefix) {
				inst := strings.TrimSuffix(k.prefix, ".")
				for _, dv := range devs {
					sig := deviationSignature(dv)
					if prev, ok := seen[sig]; ok {
						prev.Modules = append(prev.Modules, inst)
						continue
					}
					dv.Modules, dv.Source = []string{inst}, deviationSource(file, k.m.filename)
					dv.Tables = qualifyTables(k.shortName(), dv.Tables)
					seen[sig] = dv
					out = append(out, dv)
				}
			}
			walk(k)
		}
	}
	walk(e0)
	// One block's entries together (size of module.a, then of module.b),
	// in the order of their first.
	group := map[string]int{}
	for i, dv := range out {
		if _, ok := group[dv.Range.String()]; !ok {
			group[dv.Range.String()] = i
		}
	}
	slices.SortStableFunc(out, func(a, b *Deviation) int { return group[a.Range.String()] - group[b.Range.String()] })
	return out
}

// shortName is how the including file's reports name a module's paper or
// experiment: the title of the module file's experiment block up to its
// first colon ("GenSE: semi-supervised ..." -> "GenSE"), the whole title
// when it has none, the block's name when it has no title (or the title
// does not evaluate: the block is the module's, checked where the file is
// run on its own), the file's name less ".hcl" without a block.
func (e *evaluator) shortName() string {
	x := e.m.experiment
	if x == nil {
		return strings.TrimSuffix(filepath.Base(e.m.filename), ".hcl")
	}
	before := len(e.diags)
	title := e.str(x.attrs, "title")
	e.diags = e.diags[:before]
	if t, _, _ := strings.Cut(title, ":"); strings.TrimSpace(t) != "" {
		return strings.TrimSpace(t)
	}
	return x.name
}

// qualifyTables names a module deviation's tables as the including file's
// reports print them: each with the module's short name in front, "Table
// 2" as "GenSE Table 2" (as files name another paper's tables; "Figure 2"
// likewise), any other name after a colon ("T5 pretraining: held-out span
// corruption"). A name that already says whose is kept as written: one
// starting with the short name, or one whose second word starts "Table" or
// "Figure" ("DINO Table 1", "SynCSE Table 2": how a module written for one
// experiment names that experiment's tables).
func qualifyTables(short string, tables []string) []string {
	if len(tables) == 0 {
		return tables
	}
	out := make([]string, len(tables))
	for i, t := range tables {
		_, rest, _ := strings.Cut(t, " ")
		switch {
		case t == short || strings.HasPrefix(t, short+" ") || strings.HasPrefix(t, short+":"):
			out[i] = t
		case numbered(t): // "Table 2", "Tables 2-3", "Figure 2"
			out[i] = short + " " + t
		case numbered(rest): // "DINO Table 1"
			out[i] = t
		default:
			out[i] = short + ": " + t
		}
	}
	return out
}

// numbered reports whether name starts as a paper numbers its tables and
// figures ("Table 2", "Tables 2-3", "Figure 2").
func numbered(name string) bool {
	return strings.HasPrefix(name, "Table") || strings.HasPrefix(name, "Figure")
}

// deviationSignature identifies an evaluated deviation: its block and what
// it says, so that a module used twice prints a deviation once unless its
// text differs between the instances.
func deviationSignature(dv *Deviation) string {
	return strings.Join([]string{dv.Range.String(), dv.Name, dv.Profile, dv.What, dv.Paper, dv.Ours, dv.Why, dv.Evidence,
		strings.Join(dv.Tables, "\x1f"), strings.Join(dv.StandIns, "\x1f"), strings.Join(dv.Profiles, "\x1f")}, "\x00")
}

// deviationSource is a module's file relative to the including file's
// directory, with forward slashes ("modules/syncse_chat.hcl").
func deviationSource(file, module string) string {
	if rel, err := filepath.Rel(filepath.Dir(file), module); err == nil {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(module)
}

// checkStandIns reports every stage of the paper profile that reads a
// stand-in no top-level deviation declares: the file's for any stage, a
// module's for the stages of that module instance.
func (e *evaluator) checkStandIns(devs []*Deviation) {
	declared := map[string]map[string]bool{} // stage name prefix ("": every stage) -> stand-ins
	declare := func(prefix string, names []string) {
		if declared[prefix] == nil {
			declared[prefix] = map[string]bool{}
		}
		for _, n := range names {
			declared[prefix][n] = true
		}
	}
	for _, dv := range devs {
		if dv.Profile != "" {
			continue
		}
		if dv.Modules == nil {
			declare("", dv.StandIns)
		}
		for _, m := range dv.Modules {
			declare(m+".", dv.StandIns)
		}
	}
	isDeclared := func(stage, name string) bool {
		for prefix, names := range declared {
			if names[name] && strings.HasPrefix(stage, prefix) {
				return true
			}
		}
		return false
	}
	for _, s := range e.stages {
		if s.Type == nil || s.Type.StandIns == nil {
			continue
		}
		p, err := s.Type.DecodeParams(s.Params)
		if err != nil {
			continue // reported where the parameters were checked
		}
		for _, name := range s.Type.StandIns(p) {
			if isDeclared(s.Name, name) {
				continue
			}
			d, _ := dataset.Lookup(name)
			where := "a top-level deviation block"
			if strings.HasPrefix(s.Name, "module.") {
				where = "a top-level deviation block, in the module's file or in the file that uses it,"
			}
			e.errorf(s.Range, "Undeclared stand-in",
				"Stage %q reads the data directory's %q in the paper profile; it stands in for %s. Give the stage the paper's data (its source and path, from a -var), or declare the difference: %s with stand_ins = [%q].",
				s.Name, name, d.StandIn, where, name)
		}
	}
}
