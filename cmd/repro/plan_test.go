package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
)

// plan's detailed exit status (terraform plan -detailed-exitcode): 2 while
// stages would run, 0 once everything is cached, 1 for a refusal.
func TestPlanDetailedExitCode(t *testing.T) {
	file := workspace(t)
	if code, out, errs := repro(t, "plan", file, "--detailed-exitcode"); code != exitPlanChanges {
		t.Errorf("plan before any run: exit %d, want 2\n%s%s", code, out, errs)
	}
	if code, out, _ := repro(t, "plan", file); code != 0 {
		t.Errorf("plan without the flag: exit %d, want 0\n%s", code, out)
	}
	if code, out, errs := repro(t, "run", file); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := repro(t, "plan", file, "--detailed-exitcode"); code != 0 {
		t.Errorf("plan after the run: exit %d, want 0\n%s", code, out)
	}
	if code, out, _ := repro(t, "plan", file, "--detailed-exitcode", "--set", "stage.tfidf.max_features=1500"); code != exitPlanChanges {
		t.Errorf("plan with a changed parameter: exit %d, want 2\n%s", code, out)
	}
	if code, out, _ := repro(t, "plan", "testdata/weights.hcl", "--detailed-exitcode"); code != 1 {
		t.Errorf("plan of a run that would refuse: exit %d, want 1\n%s", code, out)
	}
}

// plan --json carries each stage's action and reasons and the refusal.
func TestPlanJSON(t *testing.T) {
	file := workspace(t)
	if code, out, errs := repro(t, "run", file); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ := repro(t, "plan", file, "--json", "--set", "stage.tfidf.max_features=1500")
	if code != 0 {
		t.Fatalf("plan --json: exit %d\n%s", code, out)
	}
	var p struct {
		FormatVersion string `json:"format_version"`
		Stages        []struct {
			ID, Type, Key, Action string
			Reasons               []struct{ Kind, Text, Name, Old, New string }
		}
		Summary struct{ Run, Cached int }
		Refused *struct{} `json:"refused"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	by := map[string]int{}
	for i, s := range p.Stages {
		by[s.ID] = i
	}
	tf := p.Stages[by["tfidf"]]
	if p.FormatVersion == "" || p.Summary.Run != 2 || p.Summary.Cached != 2 || p.Refused != nil ||
		tf.Action != "run" || len(tf.Reasons) != 1 || tf.Reasons[0].Kind != "param_changed" ||
		tf.Reasons[0].Name != "max_features" || tf.Reasons[0].Old != "2000" || tf.Reasons[0].New != "1500" ||
		tf.Reasons[0].Text != "parameter max_features changed (2000 -> 1500)" {
		t.Errorf("plan JSON: %+v", p)
	}
	if c := p.Stages[by["corpus"]]; c.Action != "cached" || len(c.Key) != 64 {
		t.Errorf("corpus: %+v", c)
	}
	code, out, _ = repro(t, "plan", "testdata/weights.hcl", "--json")
	var refused struct {
		Refused struct {
			Stages []struct{ ID, Reason string }
		}
	}
	if err := json.Unmarshal([]byte(out), &refused); code != 1 || err != nil || len(refused.Refused.Stages) != 3 ||
		!strings.Contains(refused.Refused.Stages[0].Reason, "-var") {
		t.Errorf("refusal in JSON: exit %d, %v\n%s", code, err, out)
	}
}

// A backend this binary lacks and a device the backend cannot drive are
// refused before anything loads or runs, by plan as by run.
func TestBackendAndDeviceRefused(t *testing.T) {
	file := workspace(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", file, "--backend", "cuda"}, `backend "cuda" is not compiled into this binary: rebuild with -tags cuda`},
		{[]string{"run", file, "--backend", "tpu"}, `unknown backend "tpu"`},
		{[]string{"run", file, "--device", "cuda:0"}, "--device cuda:0 needs --backend cuda"},
		{[]string{"plan", file, "--device", "cuda:0"}, "--device cuda:0 needs --backend cuda"},
		{[]string{"run", file, "--device", "gpu"}, "--device gpu: want cpu or cuda:N"},
	} {
		code, out, errs := repro(t, c.args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Contains(out, "running ") {
			t.Errorf("%v: exit %d, want 1 and %q\n%s%s", c.args, code, c.want, out, errs)
		}
	}
}

// A parameter naming a file or checkpoint that is not there is reported by
// validate at the line that sets it, saying what the relative path
// resolved against: the experiment file's directory for a value written
// in it, the working directory for a -var.
func TestValidateMissingPaths(t *testing.T) {
	code, out, errs := repro(t, "validate", "testdata/paths.hcl")
	wd, _ := os.Getwd()
	if code != 1 || !strings.Contains(errs, "testdata/paths.hcl:14") ||
		!strings.Contains(errs, filepath.Join(wd, "testdata", "no_such_vectors.jsonl")+" does not exist (a relative path resolves against the directory of testdata/paths.hcl)") {
		t.Errorf("validate: exit %d\n%s%s", code, out, errs)
	}
	// A -var directory without config.json is not a checkpoint; the
	// relative path resolves against the working directory.
	dir := t.TempDir()
	code, _, errs = repro(t, "validate", "testdata/paths.hcl", "-var", "bert="+dir)
	if code != 1 || !strings.Contains(errs, dir+" has no config.json: not a Hugging Face model directory") || !strings.Contains(errs, "testdata/paths.hcl:25") {
		t.Errorf("validate -var bert=DIR without config.json: exit %d\n%s", code, errs)
	}
	code, _, errs = repro(t, "validate", "testdata/paths.hcl", "-var", "bert=testdata/nothing_here")
	if code != 1 || !strings.Contains(errs, filepath.Join(wd, "testdata", "nothing_here")+" does not exist (a relative path resolves against the working directory") {
		t.Errorf("validate -var with a relative path: exit %d\n%s", code, errs)
	}
	// run refuses the same way, before any stage starts.
	workspace(t)
	if code, out, errs := repro(t, "run", "testdata/paths.hcl"); code != 1 || strings.Contains(out, "running ") || !strings.Contains(errs, "does not exist") {
		t.Errorf("run: exit %d\n%s%s", code, out, errs)
	}
}

// A --set variant's run and another profile's write their own figures: the
// plain report's figure is unchanged byte for byte and still the one its
// markdown links.
func TestFiguresPerReport(t *testing.T) {
	workspace(t)
	file := filepath.Join(t.TempDir(), "figure.hcl")
	src, err := os.ReadFile("testdata/figure.hcl")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, src, 0o644)
	figure := func(args ...string) (string, []byte) {
		t.Helper()
		code, out, errs := repro(t, append([]string{"run", file}, args...)...)
		if code != 0 {
			t.Fatalf("run %v: exit %d\n%s%s", args, code, out, errs)
		}
		var path string
		for _, l := range strings.Split(out, "\n") {
			if p, ok := strings.CutPrefix(l, "figure: "); ok {
				path = p
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("run %v: figure %q: %v\n%s", args, path, err, out)
		}
		return path, b
	}
	plain, plainPNG := figure()
	variant, _ := figure("--set", "stage.tfidf.max_features=500")
	mini, _ := figure("--profile", "mini")
	if plain == variant || plain == mini || variant == mini {
		t.Fatalf("figures share a name: %s, %s, %s", plain, variant, mini)
	}
	if b, _ := os.ReadFile(plain); !bytes.Equal(b, plainPNG) {
		t.Errorf("the plain report's figure %s changed after the variant's and the mini run", plain)
	}
	md, err := os.ReadFile(filepath.Join(filepath.Dir(plain), "figtest.md"))
	if err != nil || !strings.Contains(string(md), "("+filepath.Base(plain)+")") {
		t.Errorf("the plain report does not link its own figure %s: %v\n%s", filepath.Base(plain), err, md)
	}
}

// The binary run directly, from another directory and without
// REPRO_DATA_DIR, finds the data beside the experiment's repository
// (../shared/data from its root), as make does.
func TestDataBesideTheRepository(t *testing.T) {
	data := datadirtest.Dir(t)
	top := t.TempDir()
	repoDir := filepath.Join(top, "checkout")
	os.MkdirAll(filepath.Join(repoDir, "experiments"), 0o755)
	os.WriteFile(filepath.Join(repoDir, "go.mod"), []byte("module checkout\n"), 0o644)
	os.MkdirAll(filepath.Join(top, "shared"), 0o755)
	if err := os.Symlink(data, filepath.Join(top, "shared", "data")); err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile("testdata/tfidf.hcl")
	file := filepath.Join(repoDir, "experiments", "tfidf.hcl")
	os.WriteFile(file, src, 0o644)
	t.Setenv(datadir.Env, "")
	t.Setenv("XDG_CACHE_HOME", filepath.Join(top, "usercache")) // no data there
	t.Setenv("REPRO_CACHE", filepath.Join(top, "cache"))
	t.Setenv("CI", "true")
	t.Chdir(t.TempDir())
	if code, out, errs := repro(t, "run", file); code != 0 || !strings.Contains(out, "done     eval") {
		t.Errorf("run without REPRO_DATA_DIR: exit %d\n%s%s", code, out, errs)
	}
}

// A relative -var path that a file passes on to a module resolves against
// the working directory, as the same -var does in the file itself.
func TestModulePathFromVar(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "exp", "modules"), 0o755)
	os.WriteFile(filepath.Join(root, "exp", "main.hcl"), []byte(`experiment "main" {}

variable "bert" {
  default = ""
}

module "m" {
  source = "./modules/enc.hcl"
  bert   = var.bert
}
`), 0o644)
	os.WriteFile(filepath.Join(root, "exp", "modules", "enc.hcl"), []byte(`experiment "enc" {}

variable "bert" {
  default = ""
}

stage "bert" {
  uses          = "encode.pooling"
  hf_checkpoint = var.bert
}
`), 0o644)
	work := filepath.Join(root, "work")
	os.MkdirAll(filepath.Join(work, "ckpt"), 0o755)
	os.WriteFile(filepath.Join(work, "ckpt", "config.json"), []byte("{}"), 0o644)
	t.Chdir(work)
	if code, _, errs := repro(t, "validate", filepath.Join(root, "exp", "main.hcl"), "-var", "bert=ckpt"); code != 0 {
		t.Errorf("a relative -var passed to a module: exit %d\n%s", code, errs)
	}
}

// A run whose data stages need files that are in no data directory is
// refused before any stage starts, naming the files and the directories
// searched; plan shows the same refusal.
func TestMissingDataRefusedBeforeStart(t *testing.T) {
	file := workspace(t)
	empty := t.TempDir()
	t.Setenv(datadir.Env, empty)
	code, out, errs := repro(t, "run", file)
	if code != 1 || strings.Contains(out, "running ") || !strings.Contains(errs, "data file(s) in no data directory: stsb: sts/STSB/") ||
		!strings.Contains(errs, "searched: "+empty) {
		t.Errorf("run without the data: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := repro(t, "plan", file); code != 1 || !strings.Contains(out, "repro run would refuse to start") || !strings.Contains(out, "in no data directory") {
		t.Errorf("plan without the data: exit %d\n%s", code, out)
	}
}
