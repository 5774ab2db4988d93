package dsl

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// shape is a variant's pipeline as plan and graph show it: each instance
// with its type, parameters, seed and inputs.
func shape(v *Variant) []string {
	var out []string
	for _, s := range v.Stages {
		var in []string
		for port, r := range s.Inputs {
			in = append(in, fmt.Sprintf("%s<-%s.%s%v", port, r.Stage, r.Output, r.Path))
		}
		sort.Strings(in)
		out = append(out, fmt.Sprintf("%s %s %s seed=%d %v", s.Name, s.Type.Name, s.Params.GoString(), s.Seed, in))
	}
	return out
}

// Locals that hold stage references give the pipeline that writing the
// references out gives: the same instances, inputs (edges), parameters,
// graph and cells.
func TestLocalRefsSameAsWrittenOut(t *testing.T) {
	t.Parallel()
	got := loadFile(t, "testdata/locals/refs.hcl", Options{})
	want := loadFile(t, "testdata/locals/refs_explicit.hcl", Options{})
	g, w := shape(got.Variants[0]), shape(want.Variants[0])
	if !slices.Equal(g, w) {
		t.Errorf("pipeline with locals:\n  %s\nwritten out:\n  %s", strings.Join(g, "\n  "), strings.Join(w, "\n  "))
	}
	if gk, wk := pseudoKeys(t, got.Variants[0].Graph), pseudoKeys(t, want.Variants[0].Graph); fmt.Sprint(gk) != fmt.Sprint(wk) {
		t.Errorf("keys differ:\n%v\n%v", gk, wk)
	}
	var gv, wv []string
	for _, x := range got.Expects {
		gv = append(gv, x.Name+"="+x.Value.Stage+"."+x.Value.Output+"."+strings.Join(x.Value.Path, "."))
	}
	for _, x := range want.Expects {
		wv = append(wv, x.Name+"="+x.Value.Stage+"."+x.Value.Output+"."+strings.Join(x.Value.Path, "."))
	}
	if !slices.Equal(gv, wv) {
		t.Errorf("cells %v, written out %v", gv, wv)
	}
}

// A profile's override of a stage a local names changes the stage the
// local's readers read, as it would written out.
func TestLocalRefsFollowOverrides(t *testing.T) {
	t.Parallel()
	a := loadFile(t, "testdata/locals/refs.hcl", Options{Sets: []string{"stage.other.layers=8"}})
	b := loadFile(t, "testdata/locals/refs_explicit.hcl", Options{Sets: []string{"stage.other.layers=8"}})
	if ka, kb := pseudoKeys(t, a.Variants[0].Graph), pseudoKeys(t, b.Variants[0].Graph); fmt.Sprint(ka) != fmt.Sprint(kb) {
		t.Errorf("keys differ under --set:\n%v\n%v", ka, kb)
	}
}
