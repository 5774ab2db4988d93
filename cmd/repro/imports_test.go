package main

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The layering of ARCHITECTURE.md, checked over `go list` (non-test
// imports only: a test may reach across layers).
var importRules = []struct {
	from   string   // package path prefix
	forbid []string // path prefixes it must not import
	why    string
}{
	{"repro/internal/", []string{"repro/registry", "repro/runner", "repro/dsl", "repro/graph", "repro/store", "repro/experiment", "repro/cmd"},
		"libraries know nothing of stages, HCL, the cache or the runner"},
	{"repro/internal/tensor", []string{"repro/internal/model"}, "operators and backends sit below the models"},
	{"repro/dsl", []string{"repro/runner", "repro/store", "repro/experiment"}, "the dsl knows nothing of how stages run"},
	{"repro/runner", []string{"repro/dsl", "repro/experiment"}, "the runner knows nothing of HCL"},
	{"repro/store", []string{"repro/runner", "repro/dsl", "repro/graph", "repro/experiment"}, "the store stores; it does not execute or evaluate"},
	{"repro/graph", []string{"repro/runner", "repro/dsl", "repro/store", "repro/experiment"}, "the graph is what dsl and runner share"},
	{"repro/registry", []string{"repro/runner", "repro/dsl", "repro/store", "repro/graph", "repro/experiment"}, "stage types are adapters over internal/ libraries"},
}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func goList(t *testing.T, args ...string) []listed {
	t.Helper()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, append([]string{"list", "-json"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestImportRules(t *testing.T) {
	for _, p := range goList(t, "./...") {
		for _, r := range importRules {
			if !strings.HasPrefix(p.ImportPath, r.from) {
				continue
			}
			for _, imp := range p.Imports {
				for _, f := range r.forbid {
					if imp == f || strings.HasPrefix(imp, f+"/") {
						t.Errorf("%s imports %s: %s", p.ImportPath, imp, r.why)
					}
				}
			}
		}
		if p.ImportPath != "repro/cmd/repro" && !strings.HasPrefix(p.ImportPath, "repro/experiment") {
			for _, imp := range p.Imports {
				if imp == "repro/experiment" {
					t.Errorf("%s imports repro/experiment: only the commands call the application layer", p.ImportPath)
				}
			}
		}
	}
}

// The binary links no test code: package testing would add its flags and
// weight, and a test helper in the binary is a test helper run in
// production.
func TestBinaryLinksNoTestCode(t *testing.T) {
	for _, tags := range []string{"", "openblas", "cuda"} {
		args := []string{"-deps"}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		for _, p := range goList(t, append(args, "./cmd/repro")...) {
			if p.ImportPath == "testing" || strings.HasSuffix(p.ImportPath, "test") && strings.HasPrefix(p.ImportPath, "repro/") {
				t.Errorf("repro (tags %q) links %s", tags, p.ImportPath)
			}
		}
	}
}
