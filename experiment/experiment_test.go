package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"repro/registry"
	"repro/runner"
	"repro/store"
)

type sourceParams struct {
	Value float64 `cty:"value"`
}

type scaleParams struct {
	Factor float64 `cty:"factor"`
}

// toyRegistry: toy.source writes {"x": value}; toy.scale multiplies its
// input's x by factor (a seeded tensor stage, so devices and seeds apply).
func toyRegistry(runs *atomic.Int32) *registry.Registry {
	reg := registry.New()
	write := func(env *registry.Env, x float64) error {
		b, _ := json.Marshal(map[string]float64{"x": x})
		return os.WriteFile(filepath.Join(env.Output("metrics"), registry.FileMetrics), b, 0o644)
	}
	reg.Add(&registry.StageType{
		Name: "toy.source", Version: 1, Params: sourceParams{},
		Outputs: []registry.Port{{Name: "metrics", Kind: registry.KindMetrics}},
		Run: func(ctx context.Context, env *registry.Env) error {
			runs.Add(1)
			return write(env, env.Params.(*sourceParams).Value)
		},
	})
	reg.Add(&registry.StageType{
		Name: "toy.scale", Version: 1, Params: scaleParams{Factor: 1}, Seeded: true, Tensor: true,
		Inputs:  []registry.Port{{Name: "input", Kind: registry.KindMetrics}},
		Outputs: []registry.Port{{Name: "metrics", Kind: registry.KindMetrics}},
		Run: func(ctx context.Context, env *registry.Env) error {
			runs.Add(1)
			in, _ := env.Input("input")
			b, err := os.ReadFile(in.Path(registry.FileMetrics))
			if err != nil {
				return err
			}
			var m map[string]float64
			if err := json.Unmarshal(b, &m); err != nil {
				return err
			}
			if env.Device.Name != "cpu" || env.Device.Backend != "cpu" {
				return errors.New("toy.scale: want device cpu, backend cpu; got " + env.Device.Name + "/" + env.Device.Backend)
			}
			return write(env, m["x"]*env.Params.(*scaleParams).Factor)
		},
	})
	return reg
}

const toyFile = "testdata/experiments/toy.hcl"

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func cells(t *testing.T, o *Outcome) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, c := range o.Report.Cells {
		if !c.HasOurs {
			t.Errorf("cell %s: missing (%s)", c.Name, c.Missing)
		}
		out[c.Row+"/"+c.Column] = c.Ours
	}
	return out
}

// The application layer end to end, without the CLI: load, plan, run,
// report, save, cached re-run, latest report, profile deltas, --target.
func TestRunReportAndCache(t *testing.T) {
	var runs atomic.Int32
	reg := toyRegistry(&runs)
	st := openStore(t)
	ctx := context.Background()

	x, _, _, err := Load(reg, toyFile, Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := x.Plan(ctx, st, "")
	if err != nil || len(plan) != 3 || plan[0].Status != runner.PlanRun {
		t.Fatalf("plan %+v, %v", plan, err)
	}
	o, err := x.Run(ctx, st, RunOptions{Jobs: 2})
	if err != nil || o.RunErr != nil {
		t.Fatalf("run: %v %v", err, o.RunErr)
	}
	if got := cells(t, o); got["toy/x"] != 20 || got["side/stage.side.metrics.x"] != 7 {
		t.Errorf("cells %v", got)
	}
	if !o.Saved || !strings.HasSuffix(o.Markdown, "toy.md") {
		t.Errorf("saved %v, markdown %q", o.Saved, o.Markdown)
	}
	if b, err := os.ReadFile(o.Markdown); err != nil || !strings.Contains(string(b), "A toy experiment") || !strings.HasSuffix(string(b), "- **side value** (`side`; Table 1): paper: 7; ours: 7, from a second source; why: a toy.\n") {
		t.Errorf("markdown report does not end with its deviation: %v", err)
	}
	// The report carries the profile's deviations: the file's, then the
	// profile's own.
	if ds := o.Report.Deviations; len(ds) != 1 || ds[0].Name != "side" || ds[0].Tables[0] != "Table 1" {
		t.Errorf("paper profile deviations %+v", ds)
	}
	if xm, _, _, err := Load(reg, toyFile, Options{Profile: "mini"}); err != nil {
		t.Fatal(err)
	} else if ds := xm.BuildReport(func(string, string) (registry.Artifact, string, bool) { return registry.Artifact{}, "not run", false }).Deviations; len(ds) != 2 || ds[1].Name != "factor" || ds[1].Profile != "mini" {
		t.Errorf("mini deviations %+v", ds)
	}
	if runs.Load() != 3 {
		t.Errorf("%d stage runs, want 3", runs.Load())
	}
	// Again: everything cached, nothing runs, same table.
	o2, err := x.Run(ctx, st, RunOptions{})
	if err != nil || o2.RunErr != nil || runs.Load() != 3 {
		t.Fatalf("cached run: %v %v, %d runs", err, o2.RunErr, runs.Load())
	}
	rep, err := x.LatestReport(ctx, st)
	if err != nil || len(rep.Cells) != 2 || rep.Cells[0].Ours != 20 {
		t.Errorf("latest report %+v, %v", rep, err)
	}
	// A profile is its own scope, with its deltas.
	mini, _, _, err := Load(reg, toyFile, Options{Profile: "mini"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mini.LatestReport(ctx, st); !errors.Is(err, ErrNoResults) {
		t.Errorf("mini before running: %v, want ErrNoResults", err)
	}
	om, err := mini.Run(ctx, st, RunOptions{})
	if err != nil || om.RunErr != nil {
		t.Fatal(err, om.RunErr)
	}
	if got := cells(t, om); got["toy/x"] != 6 {
		t.Errorf("mini cells %v", got)
	}
	if runs.Load() != 4 { // only scale re-ran: the sources are shared
		t.Errorf("%d stage runs, want 4", runs.Load())
	}
	if filepath.Base(mini.BaselinePath()) != "toy.mini.json" || filepath.Base(filepath.Dir(mini.BaselinePath())) != "results" {
		t.Errorf("baseline path %s", mini.BaselinePath())
	}
	// --target: only that stage and its upstream; the report is partial and
	// not saved.
	tg, _, _, err := Load(reg, toyFile, Options{Targets: []string{"side"}})
	if err != nil {
		t.Fatal(err)
	}
	if ids := tg.Graph.IDs(); len(ids) != 1 || ids[0] != "side" {
		t.Errorf("targeted graph %v", ids)
	}
	ot, err := tg.Run(ctx, st, RunOptions{})
	if err != nil || ot.Saved || len(ot.Report.Cells) != 1 {
		t.Errorf("targeted run: saved %v, %d cells, %v", ot.Saved, len(ot.Report.Cells), err)
	}
	if _, _, _, err := Load(reg, toyFile, Options{Targets: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), `no stage "nope"`) {
		t.Errorf("unknown target: %v", err)
	}
}

// An ablation runs only what its report reads, one row per cell, with the
// paper's values where declared.
func TestAblation(t *testing.T) {
	var runs atomic.Int32
	reg := toyRegistry(&runs)
	st := openStore(t)
	x, _, _, err := Load(reg, toyFile, Options{Ablation: "factor"})
	if err != nil {
		t.Fatal(err)
	}
	if x.Graph.Node("side") != nil {
		t.Error("the ablation graph holds a stage its report does not read")
	}
	o, err := x.Run(context.Background(), st, RunOptions{})
	if err != nil || o.RunErr != nil {
		t.Fatal(err, o.RunErr)
	}
	a := o.Report.Ablation
	if a == nil || len(a.Rows) != 2 || a.Rows[0].Values[0] != 2 || a.Rows[1].Values[0] != 20 {
		t.Fatalf("ablation %+v", a)
	}
	if len(a.Rows[1].Paper) != 1 || a.Rows[1].Paper[0] != 20 || len(a.Rows[0].Paper) != 0 {
		t.Errorf("paper values %v %v", a.Rows[0].Paper, a.Rows[1].Paper)
	}
	if runs.Load() != 3 {
		t.Errorf("%d runs, want the shared source once and two cells", runs.Load())
	}
	if !strings.HasSuffix(o.Markdown, "toy.factor.md") {
		t.Errorf("markdown %s", o.Markdown)
	}
}

// A file that does not load says how many errors, with its diagnostics.
func TestLoadError(t *testing.T) {
	var runs atomic.Int32
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.hcl")
	os.WriteFile(p, []byte("experiment \"b\" {}\nstage \"s\" {\n  uses = \"toy.sourze\"\n}\n"), 0o644)
	_, diags, files, err := Load(toyRegistry(&runs), p, Options{})
	var le *LoadError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "1 error(s)") || len(diags) == 0 || files[p] == nil {
		t.Fatalf("err %v, diags %v", err, diags)
	}
	if !strings.Contains(diags[0].Detail, `Did you mean "toy.source"?`) {
		t.Errorf("diagnostic %s", diags[0].Detail)
	}
}
