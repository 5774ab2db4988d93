package builtin_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repro/experiment"
	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
	"repro/internal/llm/llmtest"
	"repro/registry/builtin"
	"repro/store"
)

var update = flag.Bool("update", false, "re-record testdata/fingerprints.json")

// TestFingerprints runs every built-in stage type on a tiny fixed input
// (testdata/fingerprint.hcl) and compares the digest of each output with
// the one recorded for the type's version. A stage whose output changes
// without a Version bump would otherwise go on serving results cached
// before the change; here it fails CI. Tensor stages are included: their
// CPU arithmetic is bit-identical on every amd64 host (the project's own
// sgemm kernel and fixed-order reductions).
func TestFingerprints(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	reg := builtin.Default()
	abs, _ := filepath.Abs("testdata/fingerprint.hcl")
	golden, _ := filepath.Abs("testdata/fingerprints.json")
	// encode.file's relative path resolves against testdata/, the
	// experiment file's directory, wherever the test runs.
	// The synth.* stages ask a loopback chat-completions server whose
	// answers are a fixed function of the request.
	srv := llmtest.New()
	defer srv.Close()
	srv.Answer = fingerprintAnswer
	x, _, _, err := experiment.Load(reg, abs, experiment.Options{Vars: map[string]string{"llm_url": srv.BaseURL()}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o, err := x.Run(context.Background(), st, experiment.RunOptions{Jobs: 2})
	if err != nil || o.RunErr != nil {
		t.Fatalf("fingerprint run: %v %v", err, o.RunErr)
	}
	got := map[string]map[string]string{} // "node (type vN)" -> output -> digest
	covered := map[string]bool{}
	for _, n := range o.Result.Nodes {
		node := x.Graph.Node(n.ID)
		name := fmt.Sprintf("%s (%s v%d)", n.ID, n.Type, node.Type.Version)
		got[name] = map[string]string{}
		for port, a := range n.Outputs {
			got[name][port] = a.Digest
		}
		covered[n.Type] = true
	}
	for _, typ := range reg.Names() {
		if !covered[typ] {
			t.Errorf("stage type %s has no stage in testdata/fingerprint.hcl: add one on a tiny input", typ)
		}
	}
	if *update {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (record with go test ./registry/builtin -run TestFingerprints -update)", err)
	}
	var want map[string]map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range got {
			if !yield(k) {
				return
			}
		}
	}) {
		w, ok := want[name]
		if !ok {
			t.Errorf("%s: no fingerprint recorded for this version; if its Version was bumped on purpose, re-record with -update", name)
			continue
		}
		for port, d := range got[name] {
			if w[port] != d {
				t.Errorf("%s: output %q changed (%.12s -> %.12s) without a Version bump: bump the stage type's Version so cached results of the old one are not served, then re-record with -update", name, port, w[port], d)
			}
		}
	}
}

// fingerprintAnswer answers a request for sentences with a numbered list
// and a labelling request with a sentence, both derived from the request.
func fingerprintAnswer(r *llmtest.ChatRequest) string {
	last := r.Last()
	if len(r.Messages) == 3 { // a one-shot sentence call
		words := strings.Fields(last)
		return fmt.Sprintf("1. The %s story begins.\n2. A %s scene follows.\n3. An ending of %d words.", words[1], words[len(words)-1], len(words))
	}
	return "Rewritten: " + last
}
