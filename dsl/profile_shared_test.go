package dsl

import (
	"maps"
	"slices"
	"testing"
)

// A shared profile stage block gives every stage it names the stages,
// parameters and keys of the same profile written one block per stage; a
// stage's own block wins over it whichever is written first, an instance's
// own over it too, and extends carries it.
func TestProfileSharedStageBlocks(t *testing.T) {
	t.Parallel()
	for _, profile := range []string{"", "mini", "ci"} {
		shared := loadFile(t, "testdata/profile_shared/shared.hcl", Options{Profile: profile}).Variants[0]
		out := loadFile(t, "testdata/profile_shared/written_out.hcl", Options{Profile: profile}).Variants[0]
		if got, want := stageNames(shared), stageNames(out); !slices.Equal(got, want) {
			t.Fatalf("profile %q: stages %v, written out %v", profile, got, want)
		}
		for _, s := range shared.Stages {
			if o := out.Stage(s.Name); !s.Params.RawEquals(o.Params) {
				t.Errorf("profile %q: %s: params %#v, written out %#v", profile, s.Name, s.Params, o.Params)
			}
		}
		keys, want := pseudoKeys(t, shared.Graph), pseudoKeys(t, out.Graph)
		if !maps.Equal(keys, want) {
			t.Errorf("profile %q: keys differ from the written-out file's", profile)
		}
	}
	ci := loadFile(t, "testdata/profile_shared/shared.hcl", Options{Profile: "ci"}).Variants[0]
	for name, want := range map[string]int64{"a": 1, "b": 5, `m["x"]`: 2, `m["z"]`: 1} {
		if got := num(t, ci.Stage(name).Params, "top_k"); int64(got) != want {
			t.Errorf("ci: %s.top_k = %v, want %d", name, got, want)
		}
	}
	if got := ci.Stage(`m["z"]`).Params.GetAttr("mode").AsString(); got != "rake" {
		t.Errorf(`ci: m["z"].mode = %s, want rake`, got)
	}
}
