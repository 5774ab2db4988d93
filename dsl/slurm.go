package dsl

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Slurm holds an experiment's settings for `repro run --executor slurm`:
// the file's top-level `slurm { }` block, with the selected profile's
// `slurm { }` block over it (an attribute the profile sets replaces the
// file's). What each stage asks for (cores, GPUs, memory, time) is its
// resources { }; these are the site's: where and under which account jobs
// go, and any further sbatch flags. Command-line flags override them. They
// never enter a cache key.
type Slurm struct {
	Partition string
	Account   string
	Flags     []string // further sbatch arguments, e.g. ["--qos=high"]
	// Source is where the settings were declared ("file.hcl:12"), for
	// messages; "" when the file has no slurm block.
	Source string
}

var slurmBlock = hcl.BlockHeaderSchema{Type: "slurm"}

var slurmSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "partition"}, {Name: "account"}, {Name: "flags"},
}}

// slurmBody decodes a slurm block's attributes (where: "the file" or
// "profile P"), reporting a second block in the same place.
func (d *decoder) slurmBody(b *hcl.Block, prev *slurmDecl, where string) *slurmDecl {
	if prev != nil {
		d.errorf(b.DefRange, "Duplicate slurm block", "Only one slurm block is allowed in %s; the first is at %s.", where, prev.rng.String())
		return prev
	}
	content, diags := b.Body.Content(slurmSchema)
	d.diags = append(d.diags, diags...)
	return &slurmDecl{attrs: content.Attributes, rng: b.DefRange}
}

type slurmDecl struct {
	attrs hcl.Attributes
	rng   hcl.Range
}

// slurm evaluates the settings in force for profile.
func (e *evaluator) slurm(m *module, profile string) Slurm {
	var out Slurm
	layers := []*slurmDecl{m.slurm}
	if p, ok := m.profiles[profile]; ok && profile != "" {
		layers = append(layers, p.slurm)
	}
	for _, l := range layers {
		if l == nil {
			continue
		}
		out.Source = fmt.Sprintf("%s:%d", l.rng.Filename, l.rng.Start.Line)
		if _, ok := l.attrs["partition"]; ok {
			out.Partition = e.str(l.attrs, "partition")
		}
		if _, ok := l.attrs["account"]; ok {
			out.Account = e.str(l.attrs, "account")
		}
		if a, ok := l.attrs["flags"]; ok {
			out.Flags = e.strings(a)
		}
	}
	return out
}

// strings evaluates a list-of-strings attribute.
func (e *evaluator) strings(a *hcl.Attribute) []string {
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
		e.errorf(a.Expr.Range(), "Invalid "+a.Name, "%s must be a list of strings, such as [\"--qos=high\"].", a.Name)
		return nil
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, s := it.Element()
		if s.IsNull() {
			e.errorf(a.Expr.Range(), "Invalid "+a.Name, "%s must not hold null.", a.Name)
			return nil
		}
		out = append(out, s.AsString())
	}
	return out
}
