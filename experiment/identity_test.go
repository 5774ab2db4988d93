package experiment_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"repro/experiment"
	"repro/registry/builtin"
)

var updateIdentities = flag.Bool("update-identities", false, "re-record testdata/identities.json from experiments/*.hcl")

// TestExperimentIdentities pins what every committed experiment computes:
// for each file, profile (the paper's, then each declared one) and
// ablation, the set of its stages' structural identities. An identity is
// the stage's cache key (graph.KeyOf: type, version, canonical parameters,
// seed, backend) with each input's digest replaced by the identity of the
// stage that produces it and the output's name, so it is known without
// running anything, and two stages with equal identities get equal keys on
// the same data. Node names do not enter it (they do not enter keys), so a
// rewrite of an experiment file that only renames, regroups or factors
// stages (for_each, modules, locals) passes, and one that would re-run a
// stage fails, naming the stages whose identity is new or gone. Each
// variant without an ablation also records its table's cells (name, row,
// column, paper value, tolerances, the identity it reads), in file order.
//
// A deliberate change (a new stage, a changed parameter) is re-recorded
// with: go test ./experiment/ -run TestExperimentIdentities -update-identities
func TestExperimentIdentities(t *testing.T) {
	files, err := filepath.Glob("../experiments/*.hcl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiment files: %v", err)
	}
	reg := builtin.Default()
	got := map[string][]string{}
	names := map[string]map[string][]string{} // variant -> identity -> node IDs
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		x, _, _, err := experiment.Load(reg, abs, experiment.Options{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		profiles := append([]string{""}, x.Config.Profiles...)
		ablations := append([]string{""}, x.Config.Ablations...)
		for _, p := range profiles {
			for _, a := range ablations {
				y, _, _, err := experiment.Load(reg, abs, experiment.Options{Profile: p, Ablation: a})
				if err != nil {
					t.Fatalf("%s --profile %q --ablation %q: %v", f, p, a, err)
				}
				variant := filepath.Base(f) + " " + experiment.OrPaper(p)
				if a != "" {
					variant += " ablation " + a
				}
				ids, err := y.Graph.Identities()
				if err != nil {
					t.Fatalf("%s: %v", variant, err)
				}
				names[variant] = map[string][]string{}
				set := map[string]bool{}
				for _, n := range y.Graph.Nodes {
					id := fmt.Sprintf("%s v%d %s", n.Type.Name, n.Type.Version, ids[n.ID][:16])
					names[variant][id] = append(names[variant][id], n.ID)
					set[id] = true
				}
				for id := range set {
					got[variant] = append(got[variant], id)
				}
				sort.Strings(got[variant])
				if a == "" {
					// The table's cells: what each reads and what it is
					// judged against, so a rewrite keeps every cell too.
					got[variant+" cells"], err = cells(y, ids)
					if err != nil {
						t.Fatalf("%s: %v", variant, err)
					}
				}
			}
		}
	}
	golden := "testdata/identities.json"
	if *updateIdentities {
		b, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (record it with -update-identities)", err)
	}
	var want map[string][]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", golden, err)
	}
	var variants []string
	for v := range want {
		variants = append(variants, v)
	}
	for v := range got {
		if _, ok := want[v]; !ok {
			variants = append(variants, v)
		}
	}
	sort.Strings(variants)
	for _, v := range variants {
		w, ok := want[v]
		if !ok {
			t.Errorf("%s: a new profile or ablation (re-record with -update-identities if intended)", v)
			continue
		}
		g, ok := got[v]
		if !ok {
			t.Errorf("%s: recorded, but no longer declared", v)
			continue
		}
		var added, gone []string
		for _, id := range g {
			if !slices.Contains(w, id) {
				added = append(added, fmt.Sprintf("%s (%s)", id, strings.Join(names[v][id], ", ")))
			}
		}
		for _, id := range w {
			if !slices.Contains(g, id) {
				gone = append(gone, id)
			}
		}
		if len(added)+len(gone) > 0 {
			t.Errorf("%s: stage identities changed, so these stages would re-run:\n  new:  %s\n  gone: %s",
				v, strings.Join(added, "\n        "), strings.Join(gone, "\n        "))
		}
	}
}

// cells describes each expectation of x in file order: its name, row and
// column, the paper's value and how it is judged, and the identity of the
// stage whose output it reads, with the output and path.
func cells(x *experiment.Experiment, ids map[string]string) ([]string, error) {
	var out []string
	for _, e := range x.Config.Expects {
		src := "-"
		if e.Value.Stage != "" {
			node, ok := x.IDMaps[0][e.Value.Stage]
			if !ok {
				return nil, fmt.Errorf("cell %s reads stage %q, not in the graph", e.Name, e.Value.Stage)
			}
			src = fmt.Sprintf("%s.%s.%s", ids[node][:16], e.Value.Output, strings.Join(e.Value.Path, "."))
		}
		out = append(out, fmt.Sprintf("%s | %s | %s | paper %v tol %v max %v lower %v count %v | profile %q pending %q | %s",
			e.Name, e.Row, e.Column, e.Paper, e.Tolerance, e.MaxTolerance, e.LowerIsBetter, e.Count, e.Profile, e.Pending, src))
	}
	return out, nil
}
