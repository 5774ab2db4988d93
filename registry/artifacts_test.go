package registry_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/rows"
	"repro/registry"
)

// An empty triplet set is an error that quotes the producer's reason (a
// filter that kept nothing) rather than a division by zero downstream.
func TestReadTripletsEmpty(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := rows.Write(filepath.Join(dir, registry.FileTriplets), []rows.Triplet{}); err != nil {
		t.Fatal(err)
	}
	env := &registry.Env{Inputs: map[string]registry.Artifact{"data": {Kind: registry.KindTriplets, Dir: dir}}}
	if _, err := registry.ReadTriplets(env, "data", registry.TripletNeeds{Negative: true}); err == nil || !strings.HasSuffix(err.Error(), "no triplets") {
		t.Errorf("no reason: %v", err)
	}
	why := "the GenSE quality check kept 0 of 12 candidate triplets at alpha = 0.9"
	if err := os.WriteFile(filepath.Join(dir, registry.FileWhyEmpty), []byte(why+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := registry.ReadTriplets(env, "data", registry.TripletNeeds{Negative: true})
	if err == nil || !strings.Contains(err.Error(), "no triplets to train on: "+why) {
		t.Errorf("with reason: %v", err)
	}
}

// TestReadTripletsRows: each row check names its row; an empty artifact
// passes where a reader allows none.
func TestReadTripletsRows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ts   []rows.Triplet
		need registry.TripletNeeds
		want string // "" for no error
	}{
		{"empty anchor", []rows.Triplet{{Anchor: "a", Positive: "b"}, {Anchor: " ", Positive: "b"}}, registry.TripletNeeds{}, "row 2: empty anchor"},
		{"empty positive", []rows.Triplet{{Anchor: "a"}}, registry.TripletNeeds{}, "row 1: empty positive"},
		{"no negative", []rows.Triplet{{Anchor: "a", Positive: "b"}}, registry.TripletNeeds{Negative: true}, "row 1: no negative"},
		{"none allowed", []rows.Triplet{}, registry.TripletNeeds{AllowNone: true}, ""},
		{"first max", []rows.Triplet{{Anchor: "a", Positive: "b"}, {}}, registry.TripletNeeds{Max: 1}, ""},
	} {
		dir := t.TempDir()
		if err := rows.Write(filepath.Join(dir, registry.FileTriplets), tc.ts); err != nil {
			t.Fatal(err)
		}
		env := &registry.Env{Inputs: map[string]registry.Artifact{"data": {Kind: registry.KindTriplets, Dir: dir}}}
		_, err := registry.ReadTriplets(env, "data", tc.need)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
