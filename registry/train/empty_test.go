package train

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
	dir := t.TempDir()
	if err := rows.Write(filepath.Join(dir, registry.FileTriplets), []rows.Triplet{}); err != nil {
		t.Fatal(err)
	}
	env := &registry.Env{Inputs: map[string]registry.Artifact{"data": {Kind: registry.KindTriplets, Dir: dir}}}
	if _, err := ReadTriplets(env, "data", 0, true); err == nil || !strings.HasSuffix(err.Error(), "no triplets") {
		t.Errorf("no reason: %v", err)
	}
	why := "the GenSE quality check kept 0 of 12 candidate triplets at alpha = 0.9"
	if err := os.WriteFile(filepath.Join(dir, registry.FileWhyEmpty), []byte(why+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadTriplets(env, "data", 0, true)
	if err == nil || !strings.Contains(err.Error(), "no triplets to train on: "+why) {
		t.Errorf("with reason: %v", err)
	}
}
