package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A repeat block with for_each, with the real stage types: instance "a"
// has the stages of infocse_rounds.hcl's repeat, so after that file ran it
// is cached (keys hold no names); plan and graph name the instances'
// stages R["KEY"][N].S; --target R["KEY"] takes one instance; --set on
// one instance's rounds plans that instance's new round only.
func TestRepeatForEachRealStages(t *testing.T) {
	file := fixture(t, "infocse_rounds.hcl")
	if code, out, errs := repro(t, "run", file); code != 0 {
		t.Fatalf("run infocse_rounds.hcl: exit %d\n%s%s", code, out, errs)
	}
	src, err := os.ReadFile("testdata/repeat_foreach.hcl")
	if err != nil {
		t.Fatal(err)
	}
	fe := filepath.Join(filepath.Dir(file), "repeat_foreach.hcl")
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
	check := func(what string, got map[string]string, n int, want map[string]string) {
		t.Helper()
		if len(got) != n {
			t.Errorf("%s: %d stages, want %d: %v", what, len(got), n, got)
		}
		for id, a := range want {
			if got[id] != a {
				t.Errorf("%s: %s is %q, want %q (%v)", what, id, got[id], a, got)
			}
		}
	}
	base := map[string]string{"news": "cached", "split": "cached", "pairs": "cached", "init": "cached"}
	with := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	check("plan", plan(), 13, with(map[string]string{
		`idc["a"][1].idc_pairs`: "cached", `idc["a"][1].idc_train`: "cached", `idc["a"][2].idc_eval`: "cached",
		`idc["b"][1].idc_pairs`: "cached", // the same annotation of the same start
		`idc["b"][1].idc_train`: "run", `idc["b"][1].idc_eval`: "run",
	}))
	check("--target one instance", plan("--target", `idc["a"]`), 10, with(map[string]string{
		`idc["a"][2].idc_train`: "cached",
	}))
	check("--set one instance's rounds", plan("--set", `repeat.idc["a"].rounds=3`), 16, with(map[string]string{
		`idc["a"][2].idc_eval`: "cached", `idc["a"][3].idc_pairs`: "run", `idc["a"][3].idc_train`: "run", `idc["a"][3].idc_eval`: "run",
		`idc["b"][1].idc_train`: "run",
	}))
	code, out, errs := repro(t, "graph", fe)
	if code != 0 || !strings.Contains(out, `"idc[\"a\"][1].idc_train" -> "idc[\"a\"][2].idc_pairs" [label="model"];`) {
		t.Errorf("graph: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = repro(t, "plan", fe, "--set", `repeat.idc["c"].rounds=2`)
	if code == 0 || !strings.Contains(out+errs, `repeat "idc" has no instance "c"; its instances: idc["a"], idc["b"]`) {
		t.Errorf("--set on no instance: exit %d\n%s%s", code, out, errs)
	}
	// repro fmt keeps for_each repeats and their instance labels as written.
	if code, out, _ := repro(t, "fmt", "--check", "testdata/repeat_foreach.hcl", "../../dsl/testdata/repeat_foreach/foreach.hcl", "../../experiments/infocse.hcl"); code != 0 {
		t.Errorf("fmt --check: exit %d\n%s", code, out)
	}
}
