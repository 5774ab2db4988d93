package dsl

import (
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Profile inheritance: a profile may start from another one.
//
//	profile "mini" {
//	  stage "train" { max_steps = 500  batch_size = 32 }
//	  deviation "nli" { ... }
//	}
//	profile "ci" {
//	  extends = "mini"                 # mini's settings, then these
//	  stage "train" { max_steps = 50 } # batch_size 32 comes from mini
//	}
//
// The child's settings are the parent's overrides (stage parameters,
// variables, module arguments, resources, repeat rounds) followed by its
// own, so where both set one path the child wins; its deviations are the
// parent's (still naming the parent as the profile that declares them)
// except those it redeclares by name, then its own; its slurm block is its
// own when it has one, else the parent's. Chains resolve parent first. An
// instance override (stage "NAME[\"KEY\"]") still beats a block-wide one
// (stage "NAME"), inherited or not, as within one profile.
//
// Only the including file's settings are inherited. A profile's name is
// what propagates into modules and what expect and table blocks' `profile`
// restricts to, so `--profile ci` still applies a module's own "ci"
// profile and cells marked profile = "mini" stay mini's.
//
// Why inheritance and not a shared block: mini and ci profiles of one
// experiment mostly differ in scale, and writing both in full repeated
// about a third of each file.

// extendsAttr reads a profile's extends attribute: a profile name.
func (d *decoder) extendsAttr(p *profileBlock, a *hcl.Attribute) {
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		d.errorf(a.Expr.Range(), "Invalid extends",
			"`extends` names the profile this one starts from, as a string, such as extends = \"mini\".")
		return
	}
	p.extends, p.extendsRng = v.AsString(), a.Expr.Range()
}

// resolveExtends merges each profile's parent into it, parents first,
// reporting an unknown parent or a cycle at the extends attribute.
func (d *decoder) resolveExtends() {
	for _, name := range d.m.profOrder {
		d.resolveProfile(d.m.profiles[name], nil)
	}
}

func (d *decoder) resolveProfile(p *profileBlock, chain []string) bool {
	if p.resolved || p.extends == "" {
		p.resolved = true
		return true
	}
	if i := slices.Index(chain, p.name); i >= 0 {
		cycle := append(slices.Clone(chain[i:]), p.name)
		d.errorf(p.extendsRng, "Profile cycle",
			"Profiles extend each other in a cycle: %s.", strings.Join(cycle, " -> "))
		return false
	}
	parent, ok := d.m.profiles[p.extends]
	if !ok {
		others := slices.DeleteFunc(slices.Clone(d.m.profOrder), func(n string) bool { return n == p.name })
		d.errorf(p.extendsRng, "Unknown profile",
			"Profile %q extends %q, which is not declared.%s Declared: %s.", p.name, p.extends,
			Suggest(p.extends, others), listOrNone(d.m.profOrder))
		p.resolved = true
		return false
	}
	if !d.resolveProfile(parent, append(chain, p.name)) {
		p.resolved = true
		return false
	}
	p.overrides = append(slices.Clone(parent.overrides), p.overrides...)
	var devs []*deviationBlock
	for _, dv := range parent.deviations {
		if !slices.ContainsFunc(p.deviations, func(own *deviationBlock) bool { return own.name == dv.name }) {
			devs = append(devs, dv)
		}
	}
	p.deviations = append(devs, p.deviations...)
	if p.slurm == nil {
		p.slurm = parent.slurm
	}
	p.resolved = true
	return true
}
