package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A for_each stage's instances are named NAME["KEY"] in plan, graph and
// the table; an instance with the parameters of an old single stage finds
// that stage's cached result (keys hold no names); --set on one instance
// re-runs only that instance and what reads it; --target NAME means every
// instance.
func TestForEachStages(t *testing.T) {
	file := workspace(t) // testdata/tfidf.hcl: one tfidf with max_features = 2000
	if code, out, errs := repro(t, "run", file); code != 0 {
		t.Fatalf("run tfidf.hcl: exit %d\n%s%s", code, out, errs)
	}
	src, err := os.ReadFile("testdata/foreach.hcl")
	if err != nil {
		t.Fatal(err)
	}
	fe := filepath.Join(filepath.Dir(file), "foreach.hcl")
	if err := os.WriteFile(fe, src, 0o644); err != nil {
		t.Fatal(err)
	}

	plan := func(args ...string) map[string]string {
		t.Helper()
		code, out, errs := repro(t, append([]string{"plan", fe, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("plan %v: exit %d\n%s%s", args, code, out, errs)
		}
		var p struct{ Stages []struct{ ID, Action string } }
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		got := map[string]string{}
		for _, s := range p.Stages {
			got[s.ID] = s.Action
		}
		return got
	}
	same := func(what string, got, want map[string]string) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", what, got, want)
			return
		}
		for id, a := range want {
			if got[id] != a {
				t.Errorf("%s: %v, want %v", what, got, want)
				return
			}
		}
	}
	// tfidf["big"] is tfidf.hcl's tfidf: cached, and so is what reads it.
	same("plan", plan(), map[string]string{
		"corpus": "cached", "sts": "cached", `tfidf["big"]`: "cached", `eval["big"]`: "cached",
		`tfidf["small"]`: "run", `eval["small"]`: "run",
	})
	same("--set one instance", plan("--set", `stage.tfidf["big"].max_features=1500`), map[string]string{
		"corpus": "cached", "sts": "cached", `tfidf["big"]`: "run", `eval["big"]`: "run",
		`tfidf["small"]`: "run", `eval["small"]`: "run",
	})
	same("--target one instance", plan("--target", `eval["big"]`), map[string]string{
		"corpus": "cached", "sts": "cached", `tfidf["big"]`: "cached", `eval["big"]`: "cached",
	})
	same("--target a for_each stage", plan("--target", "tfidf"), map[string]string{
		"corpus": "cached", `tfidf["big"]`: "cached", `tfidf["small"]`: "run",
	})

	code, out, errs := repro(t, "plan", fe)
	if code != 0 || !strings.Contains(out, `tfidf["small"]`) || !strings.Contains(out, "2 of 6 stage(s) will run") {
		t.Errorf("plan: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = repro(t, "graph", fe)
	if code != 0 || !strings.Contains(out, `"tfidf[\"small\"]" -> "eval[\"small\"]" [label="encoder"];`) {
		t.Errorf("graph: exit %d\n%s", code, out)
	}
	code, out, errs = repro(t, "run", fe, "--set", `stage.tfidf["small"].max_features=300`)
	if code != 0 && code != 2 || !strings.Contains(out, `tfidf["small"]`) || !strings.Contains(out, "TF-IDF (small)") {
		t.Errorf("run: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = repro(t, "plan", fe, "--set", `stage.tfidf["tiny"].max_features=300`)
	if code != 1 || !strings.Contains(errs, `stage "tfidf" has no instance "tiny"; its instances: tfidf["big"], tfidf["small"]`) {
		t.Errorf("--set on an unknown instance: exit %d\n%s", code, errs)
	}
	code, _, errs = repro(t, "plan", fe, "--target", `tfidf["tiny"]`)
	if code != 1 || !strings.Contains(errs, `no stage "tfidf[\"tiny\"]" (stages: corpus, sts, tfidf["big"], tfidf["small"], eval["big"], eval["small"])`) {
		t.Errorf("--target an unknown instance: exit %d\n%s", code, errs)
	}
}

// repro fmt aligns a for_each stage block like any other.
func TestFmtForEach(t *testing.T) {
	messy := filepath.Join(t.TempDir(), "messy.hcl")
	in := "stage \"t\" {\n for_each={a=1,b=2}\n  uses=\"encode.tfidf\"\n    corpus = stage.c[each.key].sentences\n max_features=each.value\n}\n"
	if err := os.WriteFile(messy, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := repro(t, "fmt", messy); code != 0 {
		t.Fatalf("fmt: exit %d: %s", code, errs)
	}
	got, _ := os.ReadFile(messy)
	want := "stage \"t\" {\n  for_each     = { a = 1, b = 2 }\n  uses         = \"encode.tfidf\"\n  corpus       = stage.c[each.key].sentences\n  max_features = each.value\n}\n"
	if string(got) != want {
		t.Errorf("formatted:\n%s\nwant:\n%s", got, want)
	}
	if code, out, _ := repro(t, "fmt", "--check", "testdata/foreach.hcl", "../../dsl/testdata/foreach/foreach.hcl"); code != 0 {
		t.Errorf("for_each fixtures are not formatted:\n%s", out)
	}
}
