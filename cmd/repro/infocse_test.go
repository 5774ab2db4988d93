package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
)

// doneStages lists the stages a run's output reports as done (run, not
// cached), sorted.
func doneStages(out string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`done +(\S+) \(`).FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
	}
	sort.Strings(names)
	return names
}

// TestRepeatRoundsRealStages runs InfoCSE's IDC rounds through the runner
// with the real stage types (data.documents, annotate.*, train.infonce,
// evaluate.retrieval): raising rounds from 2 to 3 runs round 3 and nothing
// else, since rounds 1-2 keep their cache keys.
func TestRepeatRoundsRealStages(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	root := t.TempDir()
	src, err := os.ReadFile("testdata/infocse_rounds.hcl")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "rounds.hcl")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("REPRO_CACHE", filepath.Join(root, "cache"))
	code, out, errs := repro(t, "run", file)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	want := "idc[1].idc_eval idc[1].idc_pairs idc[1].idc_train idc[2].idc_eval idc[2].idc_pairs idc[2].idc_train init news pairs split"
	if got := strings.Join(doneStages(out), " "); got != want {
		t.Fatalf("2 rounds ran %s\nwant %s\n%s", got, want, out)
	}
	code, out, errs = repro(t, "run", file, "-var", "rounds=3")
	if code != 0 {
		t.Fatalf("run with 3 rounds: exit %d\n%s\n%s", code, out, errs)
	}
	if got := strings.Join(doneStages(out), " "); got != "idc[3].idc_eval idc[3].idc_pairs idc[3].idc_train" {
		t.Errorf("raising rounds to 3 ran %s, want round 3 only\n%s", got, out)
	}
	if n := strings.Count(out, "cached "); n != 10 {
		t.Errorf("%d stages cached, want the 10 of rounds 1-2 and before\n%s", n, out)
	}
	code, out, _ = repro(t, "plan", file, "-var", "rounds=3")
	if code != 0 || !strings.Contains(out, "0 of 13 stage(s) will run") {
		t.Errorf("plan after the 3-round run: exit %d\n%s", code, out)
	}
}
