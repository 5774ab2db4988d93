package dsl

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/gocty"
)

// What a stage needs to run (registry.Resources) is declared in `resources`
// blocks: in a stage block (that stage), in a profile (the profile's default
// for every stage) and in a profile's stage block (that stage in that
// profile). Precedence, lowest first: the stage type's defaults, the
// profile's default, the stage block, the profile's stage block, --set
// stage.S.resources.NAME. Resources never enter a cache key.

var resourcesBlock = hcl.BlockHeaderSchema{Type: "resources"}

// resourceParams lists the attributes of a resources block with their types
// (from registry.Resources' cty tags).
var resourceParams = func() map[string]cty.Type {
	out := map[string]cty.Type{}
	rt := reflect.TypeOf(registry.Resources{})
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		ty, err := gocty.ImpliedType(reflect.Zero(f.Type).Interface())
		if err != nil {
			panic(err)
		}
		out[f.Tag.Get("cty")] = ty
	}
	return out
}()

func resourceNames() []string { return slices.Sorted(maps.Keys(resourceParams)) }

// resources decodes a resources block's attributes, reporting unknown names
// and duplicate blocks (prev: the attributes of an earlier block in the same
// body, nil if none).
func (d *decoder) resources(b *hcl.Block, prev map[string]*hcl.Attribute) map[string]*hcl.Attribute {
	if prev != nil {
		d.errorf(b.DefRange, "Duplicate resources block", "Only one resources block is allowed here.")
		return prev
	}
	attrs, diags := b.Body.JustAttributes()
	d.diags = append(d.diags, diags...)
	out := map[string]*hcl.Attribute{}
	for _, a := range sortedAttrs(attrs) {
		if _, ok := resourceParams[a.Name]; !ok {
			d.errorf(a.NameRange, "Unsupported argument",
				"A resources block has no argument %q; it takes %v.%s", a.Name, resourceNames(), Suggest(a.Name, resourceNames()))
			continue
		}
		out[a.Name] = a
	}
	return out
}

// resourceTarget is the override target of stage s's resource attr (s nil:
// the profile-wide default).
func (d *decoder) resourceTarget(s *stageBlock, attr string, rng hcl.Range) (target, bool) {
	path := "resources." + attr
	if s != nil {
		path = "stage." + s.name + "." + path
	}
	if _, ok := resourceParams[attr]; !ok {
		d.errorf(rng, "Invalid override path", "%q: a resources block has no %q; it takes %v.%s", path, attr, resourceNames(), Suggest(attr, resourceNames()))
		return target{}, false
	}
	return target{kind: targetResource, stage: s, attr: attr, path: path}, true
}

// resourcesOf evaluates what stage s needs: the layers in precedence order
// (see the top of this file), each value converted and the whole checked by
// registry.Resources.Validate, reported at the expression that set it.
func (e *evaluator) resourcesOf(s *stageBlock) registry.Resources {
	r := s.typ.DefaultResources()
	set := func(name string, expr hcl.Expression) {
		if !e.checkVars(expr, "A resource") {
			return
		}
		v, diags := expr.Value(e.ctx)
		e.diags = append(e.diags, diags...)
		if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() {
			return
		}
		v, err := convert.Convert(v, resourceParams[name])
		if err == nil {
			next := r
			err = setResource(&next, name, v)
			if err == nil {
				err = next.Validate()
			}
			if err == nil {
				r = next
				return
			}
		}
		// A profile-wide value is checked for every stage: say it once.
		key := expr.Range().String()
		if e.reported[key] {
			return
		}
		e.reported[key] = true
		e.errorf(expr.Range(), "Invalid resource", "Resource %q of stage %q: %v.", name, s.name, err)
	}
	names := resourceNames()
	for _, n := range names {
		if o, ok := e.ovr["resources."+n]; ok {
			set(n, o.expr)
		}
	}
	for _, n := range names {
		if a, ok := s.resources[n]; ok {
			set(n, a.Expr)
		}
	}
	for _, n := range names {
		if o, ok := e.stageOvr(s, "resources."+n); ok {
			set(n, o.expr)
		}
	}
	return r
}

func setResource(r *registry.Resources, name string, v cty.Value) error {
	rv := reflect.ValueOf(r).Elem()
	for i := 0; i < rv.NumField(); i++ {
		if rv.Type().Field(i).Tag.Get("cty") == name {
			if err := gocty.FromCtyValue(v, rv.Field(i).Addr().Interface()); err != nil {
				return fmt.Errorf("must be %s", resourceParams[name].FriendlyName())
			}
			return nil
		}
	}
	return fmt.Errorf("no such resource")
}

// attrsBesideBlocks decodes a body of free-form attributes (a stage's
// parameters and inputs) that may also hold the blocks of schema. HCL's
// JustAttributes refuses any block, even one that PartialContent already
// took, so native syntax bodies are read directly.
func attrsBesideBlocks(body hcl.Body, schema *hcl.BodySchema) (hcl.Attributes, hcl.Blocks, hcl.Diagnostics) {
	content, rest, diags := body.PartialContent(schema)
	sb, ok := rest.(*hclsyntax.Body)
	if !ok {
		attrs, more := rest.JustAttributes()
		return attrs, content.Blocks, append(diags, more...)
	}
	allowed := map[string]bool{}
	for _, b := range schema.Blocks {
		allowed[b.Type] = true
	}
	for _, b := range sb.Blocks {
		if !allowed[b.Type] {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Unexpected %q block", b.Type),
				Detail:   "The only block allowed here is resources { }.",
				Subject:  b.TypeRange.Ptr(),
			})
		}
	}
	attrs := hcl.Attributes{}
	for name, a := range sb.Attributes {
		attrs[name] = a.AsHCLAttribute()
	}
	return attrs, content.Blocks, diags
}
