package dsl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/registry"
)

type pathFileParams struct {
	Path string `cty:"path" path:"file" required:"true"`
}

// pathsLayout is an experiment directory exp/ and a working directory
// work/, each holding its own both.txt and lit.txt, the experiment file's source, and
// the working directory made current.
func pathsLayout(t *testing.T, src string) (exp, work string, load func(Options) (*Config, string)) {
	root := t.TempDir()
	exp, work = filepath.Join(root, "exp"), filepath.Join(root, "work")
	for _, d := range []string{exp, work} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "both.txt"), []byte(d), 0o644)
		os.WriteFile(filepath.Join(d, "lit.txt"), []byte(d), 0o644)
	}
	file := filepath.Join(exp, "main.hcl")
	os.WriteFile(file, []byte(src), 0o644)
	t.Chdir(work)
	r := testRegistry()
	r.Add(&registry.StageType{
		Name: "test.file", Version: 1, Params: pathFileParams{},
		Outputs: []registry.Port{{Name: "sentences", Kind: registry.KindSentences}}, Run: noRun,
	})
	return exp, work, func(opts Options) (*Config, string) {
		l := NewLoader(r)
		cfg, diags := l.LoadSource(file, []byte(src), opts)
		var b strings.Builder
		if diags.HasErrors() {
			Render(&b, l.Files(), diags)
		}
		return cfg, b.String()
	}
}

const pathOriginsSrc = `experiment "paths" {}

variable "a" {
  default = "both.txt"
}

locals {
  a     = var.a
  files = { var = var.a, literal = "both.txt" }
  pick  = var.a == "" ? "none.txt" : var.a
}

stage "direct" {
  uses = "test.file"
  path = var.a
}

stage "local" {
  uses = "test.file"
  path = local.a
}

stage "each" {
  for_each = local.files
  uses     = "test.file"
  path     = each.value
}

stage "inline" {
  for_each = { var = var.a, literal = "both.txt" }
  uses     = "test.file"
  path     = each.value
}

stage "list" {
  for_each = [var.a]
  uses     = "test.file"
  path     = each.value
}

stage "cond" {
  uses = "test.file"
  path = local.pick
}

# The condition reads the variable; the value is the literal.
stage "cond_literal" {
  uses = "test.file"
  path = var.a != "" ? "lit.txt" : var.a
}

stage "literal" {
  uses = "test.file"
  path = "both.txt"
}

profile "p" {
  stage "each" {
    path = each.value
  }
}
`

// A relative path resolves where its value is written, through locals,
// each.value and conditionals: a -var's against the working directory, a
// literal's and a default's against the experiment file's directory.
func TestPathOriginFollowsValue(t *testing.T) {
	exp, work, load := pathsLayout(t, pathOriginsSrc)
	inExp, inWork := filepath.Join(exp, "both.txt"), filepath.Join(work, "both.txt")
	viaVar := []string{"direct", "local", `each["var"]`, `inline["var"]`, `list["both.txt"]`, "cond"}
	literal := []string{`each["literal"]`, `inline["literal"]`, "literal"}
	for _, tc := range []struct {
		name    string
		opts    Options
		fromVar string // where the variable's value resolves
	}{
		{"default", Options{}, inExp},
		{"-var", Options{Vars: map[string]string{"a": "both.txt"}}, inWork},
		{"-var, profile", Options{Profile: "p", Vars: map[string]string{"a": "both.txt"}}, inWork},
	} {
		cfg, errs := load(tc.opts)
		if errs != "" {
			t.Fatalf("%s: %s", tc.name, errs)
		}
		v := cfg.Variants[0]
		check := func(names []string, want string) {
			for _, n := range names {
				s := v.Stage(n)
				if s == nil {
					t.Errorf("%s: no stage %s", tc.name, n)
					continue
				}
				if got := s.Params.GetAttr("path").AsString(); got != want {
					t.Errorf("%s: %s's path = %s, want %s", tc.name, n, got, want)
				}
			}
		}
		check(viaVar, tc.fromVar)
		check(literal, inExp)
		check([]string{"cond_literal"}, filepath.Join(exp, "lit.txt"))
	}
}

// A -var naming what is only in the working directory is found through a
// local and each.value; a missing one is reported naming the working
// directory.
func TestPathOriginMessages(t *testing.T) {
	exp, work, load := pathsLayout(t, pathOriginsSrc)
	os.WriteFile(filepath.Join(work, "only.txt"), nil, 0o644)
	if _, errs := load(Options{Vars: map[string]string{"a": "only.txt"}}); errs != "" {
		t.Errorf("-var a=only.txt: %s", errs)
	}
	_, errs := load(Options{Vars: map[string]string{"a": "missing.txt"}})
	for _, n := range []string{"main.hcl:15", "main.hcl:20", "main.hcl:26", "main.hcl:32", "main.hcl:38", "main.hcl:43"} {
		if !strings.Contains(errs, n) {
			t.Errorf("-var a=missing.txt: no error at %s:\n%s", n, errs)
		}
	}
	if !strings.Contains(errs, filepath.Join(work, "missing.txt")+" does not exist (a relative path resolves against the working directory") ||
		strings.Contains(errs, filepath.Join(exp, "missing.txt")) {
		t.Errorf("-var a=missing.txt resolved against the wrong directory:\n%s", errs)
	}
}
