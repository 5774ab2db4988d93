package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
)

// paperVars are the -var names of the paper profiles' data and weights,
// each with the fixture (or checkpoint) a plan is given: the data files are
// internal/dataset's fixtures in the published layouts.
func paperVars(t *testing.T) map[string]string {
	fixtures, err := filepath.Abs(filepath.Join("..", "..", "internal", "dataset", "testdata", "paper"))
	if err != nil {
		t.Fatal(err)
	}
	ckpt := t.TempDir()
	if err := os.WriteFile(filepath.Join(ckpt, "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"simcse_nli":      filepath.Join(fixtures, "nli_for_simcse.csv"),
		"wiki1m":          filepath.Join(fixtures, "wiki1m_for_simcse.txt"),
		"c4":              filepath.Join(fixtures, "c4-train.00000-of-01024.json.gz"),
		"mind":            filepath.Join(fixtures, "news.tsv"),
		"askubuntu":       filepath.Join(fixtures, "askubuntu-test.jsonl.gz"),
		"askubuntu_train": filepath.Join(fixtures, "askubuntu-train.txt"),
		"t5":              ckpt, "bert": ckpt, "roberta": ckpt, "gpt2": ckpt,
	}
}

// dataVars are the variables that name a paper's dataset (the others name
// weights).
var dataVars = []string{"simcse_nli", "wiki1m", "c4", "mind", "askubuntu", "askubuntu_train"}

// TestPaperProfilesNeedTheirData: every paper profile run without its data
// variables refuses before any stage starts, naming each missing dataset's
// -var; given small files in the published formats (and checkpoint
// directories), `repro plan` plans the whole paper profile.
func TestPaperProfilesNeedTheirData(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	t.Setenv("REPRO_CACHE", filepath.Join(t.TempDir(), "cache"))
	vals := paperVars(t)
	declared := regexp.MustCompile(`(?m)^variable "([a-z0-9_]+)"`)
	for _, f := range []string{"gense", "simcse", "paser", "dino", "syncse", "infocse"} {
		file := "../../experiments/" + f + ".hcl"
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var vars []string
		for _, m := range declared.FindAllStringSubmatch(string(src), -1) {
			if v, ok := vals[m[1]]; ok {
				vars = append(vars, "-var", m[1]+"="+v)
			}
		}
		code, out, errs := repro(t, "run", file)
		all := out + errs
		if code != 1 || strings.Contains(all, "running ") || !strings.Contains(all, "the run cannot start (nothing ran)") {
			t.Errorf("%s.hcl without its variables: exit %d, want 1 and nothing run:\n%s", f, code, all)
		}
		for _, v := range dataVars {
			if strings.Contains(string(src), "var."+v) && !strings.Contains(all, "-var "+v+"=FILE") {
				t.Errorf("%s.hcl: the refusal does not name -var %s:\n%s", f, v, all)
			}
		}
		code, out, errs = repro(t, append([]string{"plan", file}, vars...)...)
		if code != 0 || strings.Contains(out, "would refuse") || !strings.Contains(out, "will run") {
			t.Errorf("%s.hcl plan with the fixtures (%v): exit %d\n%s%s", f, vars, code, out, errs)
		}
	}
}
