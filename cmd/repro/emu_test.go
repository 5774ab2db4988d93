package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
)

// TestEmuTrainingSameOutputs: a tiny unsupervised SimCSE stage (pooler and
// tanh, clipping, evaluations) run with --backend emu trains on the
// emulated device -- weights and moments placed for the whole run, the
// stage log reporting each update's copies -- and writes the bytes it
// writes with --backend cpu: the same output digest, under another key
// (emu is its own family, graph.Backends).
func TestEmuTrainingSameOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("trains twice")
	}
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/simcse_emu.hcl")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "simcse_emu.hcl")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	type run struct {
		Stage   string            `json:"stage"`
		Key     string            `json:"key"`
		Backend string            `json:"backend"`
		Outputs map[string]string `json:"outputs"`
	}
	unsup := map[string]run{}
	for _, b := range []string{"cpu", "emu"} {
		cache := filepath.Join(dir, "cache-"+b)
		if code, out, errs := repro(t, "run", file, "--backend", b, "--cache-dir", cache, "--plain"); code != 0 {
			t.Fatalf("run --backend %s: exit %d\n%s%s", b, code, out, errs)
		}
		code, out, errs := repro(t, "cache", "ls", "--json", "--cache-dir", cache)
		if code != 0 {
			t.Fatalf("cache ls: exit %d\n%s%s", code, out, errs)
		}
		var ls struct{ Runs []run }
		if err := json.Unmarshal([]byte(out), &ls); err != nil {
			t.Fatalf("cache ls --json: %v\n%s", err, out)
		}
		for _, r := range ls.Runs {
			if r.Stage == "unsup" {
				unsup[b] = r
			}
		}
		if unsup[b].Outputs["model"] == "" {
			t.Fatalf("--backend %s: no model output in %s", b, out)
		}
	}
	cpu, emu := unsup["cpu"], unsup["emu"]
	t.Logf("model digest: cpu %s, emu %s; keys %s, %s", cpu.Outputs["model"], emu.Outputs["model"], cpu.Key, emu.Key)
	if cpu.Outputs["model"] != emu.Outputs["model"] {
		t.Errorf("the model trained on the emulated device (%s) differs from the CPU's (%s)", emu.Outputs["model"], cpu.Outputs["model"])
	}
	if cpu.Key == emu.Key || emu.Backend != "emu" {
		t.Errorf("keys %s (cpu) and %s (backend %q): emu must be its own family", cpu.Key, emu.Key, emu.Backend)
	}
	log, err := os.ReadFile(filepath.Join(dir, "cache-emu", "logs", emu.Key+".log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"copied_up_bytes=", "copied_down_bytes=", `msg="device copies" device=emu`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the emu stage's log does not report %q:\n%s", want, log)
		}
	}
	if strings.Contains(string(log), "fallback") {
		t.Errorf("an operator fell back to the host during training:\n%s", log)
	}
}
