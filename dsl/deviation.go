package dsl

import (
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
// profile (nil: the paper profile), and keeps those that hold for it. Every
// top-level block is evaluated, so that each profile reports its errors.
func (e *evaluator) deviations(top []*deviationBlock, profile *profileBlock) []*Deviation {
	blocks := top
	selected := paperProfile
	if profile != nil {
		blocks = append(append([]*deviationBlock(nil), top...), profile.deviations...)
		selected = profile.name
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

// checkStandIns reports every stage of the paper profile that reads a
// stand-in no top-level deviation declares.
func (e *evaluator) checkStandIns(devs []*Deviation) {
	declared := map[string]bool{}
	for _, dv := range devs {
		if dv.Profile == "" {
			for _, s := range dv.StandIns {
				declared[s] = true
			}
		}
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
			if declared[name] {
				continue
			}
			d, _ := dataset.Lookup(name)
			e.errorf(s.Range, "Undeclared stand-in",
				"Stage %q reads the data directory's %q in the paper profile; it stands in for %s. Give the stage the paper's data (its source and path, from a -var), or declare the difference: a top-level deviation block with stand_ins = [%q].",
				s.Name, name, d.StandIn, name)
		}
	}
}
