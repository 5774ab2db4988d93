package dsl

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// A stage block's `params` spreads an object of parameters (or a list of
// them, merged left to right) into the block:
//
//	locals {
//	  mini_phase = { layers = 4, hidden = 128, epochs = 4 }
//	}
//	stage "bert_3" {
//	  uses   = "train.mlm"
//	  params = local.mini_phase   # layers, hidden, epochs ...
//	  epochs = 2                  # ... but the block's own attributes win
//	}
//
// and so does a profile's stage block, as deltas of that profile. Several
// stages that share a recipe (the pretrained encoder's phases) then state it
// once, so that it cannot drift between them. The spread is static -- each
// key becomes an attribute of the block, its expression the object's value
// expression -- so everything after decoding (unknown names, conversion,
// the cache key, diagnostics at the value's own line) treats a spread
// attribute as one written in the block: the same parameters give the same
// key whichever way they were written. That is why `params` must be an
// object literal, a local holding one, or a variable whose default is one:
// its keys have to be known before anything is evaluated. A variable's keys
// come from its default; each spread attribute reads var.NAME.KEY, so a
// profile or -var that sets the variable sets the stages too.

// spreadParams replaces attrs["params"] by the attributes it spreads: one
// object, or a list of them merged left to right; attributes the block sets
// itself are kept.
func (d *decoder) spreadParams(attrs hcl.Attributes) {
	a, ok := attrs["params"]
	if !ok {
		return
	}
	delete(attrs, "params")
	objs := []hcl.Expression{a.Expr}
	if tup, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
		objs = objs[:0]
		for _, x := range tup.Exprs {
			objs = append(objs, x)
		}
	}
	own := map[string]bool{}
	for k := range attrs {
		own[k] = true
	}
	for _, obj := range objs {
		rng := obj.Range()
		obj, variable := d.paramsObject(obj)
		if obj == nil {
			continue
		}
		pairs, diags := hcl.ExprMap(obj)
		if diags.HasErrors() {
			d.errorf(rng, "Invalid params",
				"`params` must be an object of parameters, such as { layers = 4, hidden = 128 }, a local value holding one, a variable whose default is one, or a list of those: its names must be known before evaluation.")
			continue
		}
		seen := map[string]bool{}
		for _, p := range pairs {
			key := hcl.ExprAsKeyword(p.Key)
			if key == "" {
				v, diags := p.Key.Value(nil)
				if diags.HasErrors() || v.IsNull() || !v.Type().Equals(cty.String) {
					d.errorf(p.Key.Range(), "Invalid key", "Keys of `params` must be parameter names.")
					continue
				}
				key = v.AsString()
			}
			if key == "uses" || key == "params" {
				d.errorf(p.Key.Range(), "Invalid key", "`%s` belongs in the stage block itself, not in `params`.", key)
				continue
			}
			if seen[key] {
				d.errorf(p.Key.Range(), "Duplicate key", "params.%s is set twice.", key)
				continue
			}
			seen[key] = true
			if own[key] {
				continue
			}
			value := p.Value
			if variable != "" {
				value = &hclsyntax.ScopeTraversalExpr{SrcRange: p.Key.Range(), Traversal: hcl.Traversal{
					hcl.TraverseRoot{Name: "var", SrcRange: p.Key.Range()},
					hcl.TraverseAttr{Name: variable, SrcRange: p.Key.Range()},
					hcl.TraverseAttr{Name: key, SrcRange: p.Key.Range()},
				}}
			}
			// A later object replaces an earlier one's value.
			attrs[key] = &hcl.Attribute{Name: key, Expr: value, Range: hcl.RangeBetween(p.Key.Range(), p.Value.Range()), NameRange: p.Key.Range()}
		}
	}
}

// paramsObject resolves `local.NAME` to the local's expression, through
// locals that name other locals, and `var.NAME` to the variable's default
// (variable is then NAME: its values are read from the variable); any other
// expression is returned as it is. nil after an error.
func (d *decoder) paramsObject(x hcl.Expression) (obj hcl.Expression, variable string) {
	seen := map[string]bool{}
	for {
		tr, ok := x.(*hclsyntax.ScopeTraversalExpr)
		if !ok || len(tr.Traversal) != 2 {
			return x, ""
		}
		attr, ok := tr.Traversal[1].(hcl.TraverseAttr)
		if !ok {
			return x, ""
		}
		switch tr.Traversal.RootName() {
		case "var":
			v := d.m.variables[attr.Name]
			switch {
			case v == nil:
				d.errorf(x.Range(), "Unknown variable", "`params` reads var.%s, which no variable block declares.", attr.Name)
				return nil, ""
			case v.def == nil:
				d.errorf(x.Range(), "Invalid params", "var.%s has no default: `params` takes a variable's names from its default object.", attr.Name)
				return nil, ""
			}
			return v.def, attr.Name
		case "local":
		default:
			return x, ""
		}
		local := d.m.locals[attr.Name]
		if local == nil {
			d.errorf(x.Range(), "Unknown local value", "`params` reads local.%s, which no locals block declares.", attr.Name)
			return nil, ""
		}
		if seen[attr.Name] {
			d.errorf(x.Range(), "Invalid params", "local.%s refers to itself.", attr.Name)
			return nil, ""
		}
		seen[attr.Name] = true
		x = local.Expr
	}
}
