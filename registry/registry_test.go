package registry

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// Inner and Group are parameter groups as stage types embed them.
type Inner struct {
	Depth int `cty:"depth" doc:"inner depth"`
}

type Group struct {
	Width int    `cty:"width" doc:"group width"`
	Label string `cty:"label" doc:"group label"`
	Inner
	Ratio float64 `cty:"ratio" doc:"group ratio"`
}

type flatParams struct {
	Rate float64 `cty:"rate" doc:"top rate" required:"true"`
	Group
	Flag bool `cty:"flag" doc:"top flag"`
	skip int  // untagged: not a parameter
}

func stageOf(params any) *StageType {
	return &StageType{Name: "test.stage", Params: params, Run: func(context.Context, *Env) error { return nil }}
}

func flatDefaults() flatParams {
	return flatParams{Rate: 0.5, Group: Group{Width: 7, Label: "x", Inner: Inner{Depth: 3}, Ratio: 0.25}, Flag: true}
}

func TestParamSchemaFlattensEmbeddedStructs(t *testing.T) {
	t.Parallel()
	ps, err := stageOf(flatDefaults()).ParamSchema()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, doc string
		ty        cty.Type
		def       cty.Value
		kind      reflect.Kind
		index     []int
	}{
		{"rate", "top rate", cty.Number, cty.NumberFloatVal(0.5), reflect.Float64, []int{0}},
		{"width", "group width", cty.Number, cty.NumberIntVal(7), reflect.Int, []int{1, 0}},
		{"label", "group label", cty.String, cty.StringVal("x"), reflect.String, []int{1, 1}},
		{"depth", "inner depth", cty.Number, cty.NumberIntVal(3), reflect.Int, []int{1, 2, 0}},
		{"ratio", "group ratio", cty.Number, cty.NumberFloatVal(0.25), reflect.Float64, []int{1, 3}},
		{"flag", "top flag", cty.Bool, cty.True, reflect.Bool, []int{2}},
	}
	if len(ps) != len(want) {
		t.Fatalf("got %d params %+v, want %d", len(ps), ps, len(want))
	}
	for i, w := range want {
		p := ps[i]
		if p.Name != w.name || p.Doc != w.doc || !p.Type.Equals(w.ty) || !p.Default.RawEquals(w.def) ||
			p.GoKind != w.kind || !reflect.DeepEqual(p.index, w.index) {
			t.Errorf("param %d = %+v, want %+v", i, p, w)
		}
		if p.Required != (w.name == "rate") {
			t.Errorf("param %s: required = %v", p.Name, p.Required)
		}
	}
	ty := stageOf(flatDefaults()).ParamType()
	if len(ty.AttributeTypes()) != len(want) || !ty.AttributeType("depth").Equals(cty.Number) {
		t.Errorf("ParamType = %#v", ty)
	}
}

func TestParamSchemaDefaultsFromEmbeddedValues(t *testing.T) {
	t.Parallel()
	// Two stage types sharing a group, with different defaults in it.
	a := flatDefaults()
	b := flatDefaults()
	b.Width, b.Depth = 99, 11
	for _, c := range []struct {
		p            flatParams
		width, depth int64
	}{{a, 7, 3}, {b, 99, 11}} {
		ps, err := stageOf(c.p).ParamSchema()
		if err != nil {
			t.Fatal(err)
		}
		defs := map[string]cty.Value{}
		for _, p := range ps {
			defs[p.Name] = p.Default
		}
		if !defs["width"].RawEquals(cty.NumberIntVal(c.width)) || !defs["depth"].RawEquals(cty.NumberIntVal(c.depth)) {
			t.Errorf("defaults width %#v depth %#v, want %d %d", defs["width"], defs["depth"], c.width, c.depth)
		}
	}
}

type dupTop struct {
	Width int `cty:"width" doc:"top width"`
	Group
}

type dupNested struct {
	Group
	Other struct {
		Depth int `cty:"depth"`
	} `cty:"other"` // a tagged struct field is one object parameter, not a group
	Inner // depth again, beside Group's
}

type badPointer struct {
	*Group
}

type hidden struct {
	Secret int `cty:"secret"`
}

type badUnexported struct {
	hidden
}

type docOverride struct {
	Group `doc.width:"overridden width" doc.depth:"overridden depth"`
}

type badOverride struct {
	Group `doc.nope:"names nothing"`
}

func TestParamSchemaErrors(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		params any
		want   string
	}{
		"duplicate with top level": {dupTop{}, "param width declared twice (fields Width and Group.Width)"},
		"duplicate across groups":  {dupNested{}, "param depth declared twice (fields Group.Inner.Depth and Inner.Depth)"},
		"embedded pointer":         {badPointer{}, "embedded field Group: a parameter group must be an embedded exported struct type"},
		"embedded unexported":      {badUnexported{}, "embedded field hidden: a parameter group must be an embedded exported struct type"},
		"doc override of no param": {badOverride{}, "tag doc.nope names no parameter"},
		"not a struct":             {42, "Params must be a struct value"},
	} {
		_, err := stageOf(c.params).ParamSchema()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), c.want) {
					t.Errorf("%s: Add panicked with %v, want %q", name, r, c.want)
				}
			}()
			New().Add(stageOf(c.params))
		}()
	}
}

func TestParamSchemaDocOverride(t *testing.T) {
	t.Parallel()
	ps, err := stageOf(docOverride{}).ParamSchema()
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, p := range ps {
		docs[p.Name] = p.Doc
	}
	want := map[string]string{"width": "overridden width", "label": "group label", "depth": "overridden depth", "ratio": "group ratio"}
	if !reflect.DeepEqual(docs, want) {
		t.Errorf("docs %v, want %v", docs, want)
	}
	// The group's own docs are untouched for other embedders.
	ps, _ = stageOf(flatDefaults()).ParamSchema()
	if ps[1].Doc != "group width" {
		t.Errorf("override leaked: %q", ps[1].Doc)
	}
}

func flatObject(rate float64, width int64, label string, depth int64, ratio float64, flag bool) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"rate": cty.NumberFloatVal(rate), "width": cty.NumberIntVal(width), "label": cty.StringVal(label),
		"depth": cty.NumberIntVal(depth), "ratio": cty.NumberFloatVal(ratio), "flag": cty.BoolVal(flag),
	})
}

func TestDecodeParamsIntoEmbeddedFields(t *testing.T) {
	t.Parallel()
	st := stageOf(flatDefaults())
	obj := flatObject(1.5, 12, "y", 4, 0.75, false)
	got, err := st.DecodeParams(obj)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := got.(*flatParams)
	if !ok {
		t.Fatalf("DecodeParams returned %T", got)
	}
	want := flatParams{Rate: 1.5, Group: Group{Width: 12, Label: "y", Inner: Inner{Depth: 4}, Ratio: 0.75}, Flag: false}
	if !reflect.DeepEqual(*p, want) {
		t.Errorf("decoded %+v, want %+v", *p, want)
	}
	// EncodeParams is the inverse, from a pointer or a value.
	for _, in := range []any{p, *p} {
		back, err := st.EncodeParams(in)
		if err != nil {
			t.Fatal(err)
		}
		if !back.RawEquals(obj) || !back.Type().Equals(st.ParamType()) {
			t.Errorf("EncodeParams = %#v, want %#v", back, obj)
		}
	}
	if _, err := st.EncodeParams(dupTop{}); err == nil {
		t.Error("EncodeParams accepted another struct type")
	}
}

func TestDecodeParamsErrors(t *testing.T) {
	t.Parallel()
	st := stageOf(flatDefaults())
	full := flatObject(1, 2, "z", 3, 0.5, true).AsValueMap()
	without := func(name string) cty.Value {
		m := map[string]cty.Value{}
		for k, v := range full {
			if k != name {
				m[k] = v
			}
		}
		return cty.ObjectVal(m)
	}
	with := func(name string, v cty.Value) cty.Value {
		m := map[string]cty.Value{}
		for k, x := range full {
			m[k] = x
		}
		m[name] = v
		return cty.ObjectVal(m)
	}
	for name, c := range map[string]struct {
		obj  cty.Value
		want string
	}{
		"missing embedded attribute": {without("depth"), `test.stage: decoding parameters: missing required attribute "depth"`},
		"unsupported attribute":      {with("bogus", cty.True), `test.stage: decoding parameters: unsupported attribute "bogus"`},
		"fraction into embedded int": {with("width", cty.NumberFloatVal(2.5)), "test.stage: decoding parameters: value must be a whole number"},
		"not an object":              {cty.StringVal("x"), "test.stage: decoding parameters: parameters must be an object"},
	} {
		_, err := st.DecodeParams(c.obj)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
	// The attribute at fault is in the error's path.
	_, err := st.DecodeParams(with("width", cty.NumberFloatVal(2.5)))
	var pe cty.PathError
	if !errors.As(err, &pe) || !pe.Path.Equals(cty.GetAttrPath("width")) {
		t.Errorf("error %#v does not name the attribute", err)
	}
}

func TestParamSchemaWithoutEmbedding(t *testing.T) {
	t.Parallel()
	// A flat struct and nil Params behave as before.
	type plain struct {
		A int    `cty:"a" doc:"an a"`
		B string `cty:"b"`
		c int
	}
	st := stageOf(plain{A: 1, B: "b", c: 2})
	ps, err := st.ParamSchema()
	if err != nil || len(ps) != 2 || ps[0].Name != "a" || ps[1].Name != "b" || !ps[0].Default.RawEquals(cty.NumberIntVal(1)) {
		t.Fatalf("schema %+v, %v", ps, err)
	}
	got, err := st.DecodeParams(cty.ObjectVal(map[string]cty.Value{"a": cty.NumberIntVal(5), "b": cty.StringVal("q")}))
	if err != nil || got.(*plain).A != 5 || got.(*plain).B != "q" {
		t.Errorf("decoded %+v, %v", got, err)
	}
	none := stageOf(nil)
	if ps, err := none.ParamSchema(); ps != nil || err != nil {
		t.Errorf("nil Params: %v %v", ps, err)
	}
	if v, err := none.DecodeParams(cty.EmptyObjectVal); v != nil || err != nil {
		t.Errorf("nil Params decode: %v %v", v, err)
	}
	empty := stageOf(struct{}{})
	if v, err := empty.EncodeParams(struct{}{}); err != nil || !v.RawEquals(cty.EmptyObjectVal) {
		t.Errorf("empty Params encode: %#v %v", v, err)
	}
}

// laterParams is a stage type's parameters after "extra" was added to it.
type laterParams struct {
	Rate  float64 `cty:"rate" doc:"rate"`
	Extra bool    `cty:"extra" doc:"added later" key:"added"`
}

// An Added parameter at its default is left out of the encoded object (so
// out of the cache key: the object is the one from before it existed), an
// absent one decodes to the default, and a set one is encoded like any
// other.
func TestAddedParameterKeepsTheOldEncoding(t *testing.T) {
	t.Parallel()
	st := stageOf(laterParams{Rate: 0.5})
	before := cty.ObjectVal(map[string]cty.Value{"rate": cty.NumberFloatVal(0.5)})
	enc, err := st.EncodeParams(laterParams{Rate: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if !enc.RawEquals(before) {
		t.Errorf("at its default: EncodeParams = %#v, want %#v", enc, before)
	}
	dec, err := st.DecodeParams(before)
	if err != nil {
		t.Fatal(err)
	}
	if got := *dec.(*laterParams); got != (laterParams{Rate: 0.5}) {
		t.Errorf("DecodeParams without the attribute = %+v", got)
	}
	set, err := st.EncodeParams(laterParams{Rate: 0.5, Extra: true})
	if err != nil {
		t.Fatal(err)
	}
	if !set.Type().HasAttribute("extra") || !set.GetAttr("extra").True() {
		t.Errorf("set: EncodeParams = %#v, want extra = true", set)
	}
	if ty := st.ParamTypeOf(map[string]bool{"rate": true}); ty.HasAttribute("extra") || !ty.HasAttribute("rate") {
		t.Errorf("ParamTypeOf(rate) = %#v", ty)
	}
	if ty := st.ParamTypeOf(map[string]bool{"rate": true, "extra": true}); !ty.HasAttribute("extra") {
		t.Errorf("ParamTypeOf(rate, extra) = %#v", ty)
	}
}
