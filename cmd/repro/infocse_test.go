package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
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

// fixture copies testdata/name into a fresh directory with its own cache
// and points the data directory at the real data.
func fixture(t *testing.T, name string) string {
	t.Helper()
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	root := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, name)
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("REPRO_CACHE", filepath.Join(root, "cache"))
	return file
}

// TestRepeatRoundsRealStages runs InfoCSE's IDC rounds through the runner
// with the real stage types (data.documents, annotate.*, train.infonce,
// evaluate.retrieval): raising rounds from 2 to 3 runs round 3 and nothing
// else, since rounds 1-2 keep their cache keys.
func TestRepeatRoundsRealStages(t *testing.T) {
	file := fixture(t, "infocse_rounds.hcl")
	code, out, errs := repro(t, "run", file, "--verbose")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	want := "idc[1].idc_eval idc[1].idc_pairs idc[1].idc_train idc[2].idc_eval idc[2].idc_pairs idc[2].idc_train init news pairs split"
	if got := strings.Join(doneStages(out), " "); got != want {
		t.Fatalf("2 rounds ran %s\nwant %s\n%s", got, want, out)
	}
	code, out, errs = repro(t, "run", file, "--verbose", "-var", "rounds=3")
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

// TestLoopRealStages runs IDC rounds that stop when validation R@5 stops
// improving, with the real stage types: the runner decides after each
// round, the rounds after the stop do not run, repeat.idc.last reads the
// selected round, and plan and the report show the decision.
func TestLoopRealStages(t *testing.T) {
	file := fixture(t, "infocse_until.hcl")
	code, out, errs := repro(t, "run", file, "--verbose")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	m := regexp.MustCompile(`until +repeat idc: by round: ([0-9., ]+); stopped after round (\d+) \(.*?\); selected round (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no decision line:\n%s", out)
	}
	values := strings.Split(m[1], ", ")
	stop, best := m[2], m[3]
	if len(values) != atoi(t, stop) || atoi(t, best) > atoi(t, stop) {
		t.Fatalf("decision %q", m[0])
	}
	for r := 1; r <= 4; r++ {
		for _, s := range []string{"idc_pairs", "idc_train", "idc_val"} {
			id := regexp.QuoteMeta(fmt.Sprintf("idc[%d].%s", r, s))
			ran := regexp.MustCompile(`done +` + id + ` `).MatchString(out)
			stopped := regexp.MustCompile(`stopped +` + id + ` .*not needed: repeat idc stopped after round ` + stop).MatchString(out)
			if r <= atoi(t, stop) && (!ran || stopped) || r > atoi(t, stop) && (ran || !stopped) {
				t.Errorf("round %d %s: ran %v, stopped %v (loop stopped after round %s)", r, s, ran, stopped, stop)
			}
		}
	}
	// The report reads repeat.idc.last from the selected round.
	if want := values[atoi(t, best)-1]; !regexp.MustCompile(`InfoCSE +validation R@5 +- +` + regexp.QuoteMeta(want)).MatchString(out) {
		t.Errorf("report does not show round %s's R@5 %s:\n%s", best, want, out)
	}
	if !strings.Contains(out, "repeat idc, until idc_val.metrics.r5 stops improving (patience 1, at most 4 rounds): by round: ") {
		t.Errorf("report has no note on the decision:\n%s", out)
	}
	code, out, _ = repro(t, "plan", file)
	if code != 0 || !strings.Contains(out, "0 of 17 stage(s) will run") || !strings.Contains(out, "not needed (until)") ||
		!strings.Contains(out, "selected round "+best) {
		t.Errorf("plan after the run: exit %d\n%s", code, out)
	}
	code, out, _ = repro(t, "run", file, "--verbose")
	if code != 0 || len(doneStages(out)) != 0 || !strings.Contains(out, "selected round "+best) {
		t.Errorf("second run: exit %d, ran %v\n%s", code, doneStages(out), out)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
