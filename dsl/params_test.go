package dsl

import (
	"strings"
	"testing"
)

// TestParamsSpread: a stage's `params` (a local object or a literal), at
// the top level and in a profile, gives exactly the parameters written out
// in the block -- the same values, so the same cache keys -- and the
// block's own attributes win over it.
func TestParamsSpread(t *testing.T) {
	t.Parallel()
	const stages = `experiment "x" {}
stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}
`
	explicit := stages + `
stage "a" {
  uses          = "train.encoder"
  data          = stage.mask.pairs
  learning_rate = 1e-4
  layers        = 4
  hidden        = 128
  seed          = 7
}
stage "b" {
  uses          = "train.encoder"
  data          = stage.mask.pairs
  learning_rate = 1e-4
  layers        = 2
  hidden        = 128
  seed          = 7
}
profile "mini" {
  stage "a" {
    layers     = 2
    batch_size = 16
  }
  stage "b" {
    layers     = 2
    batch_size = 16
  }
}
`
	spread := stages + `
stage "a" {
  uses   = "train.encoder"
  data   = stage.mask.pairs
  params = local.recipe
}
stage "b" {
  uses   = "train.encoder"
  data   = stage.mask.pairs
  params = local.recipe
  layers = 2 # the block's own wins
}
locals { # after the stages that read it: locals are decoded first
  recipe = { learning_rate = 1e-4, layers = 4, hidden = 128, seed = 7 }
  small  = local.tiny # a local naming another
  tiny   = { layers = 2, batch_size = 16 }
}
profile "mini" {
  stage "a" { params = local.small }
  stage "b" { params = [{ layers = 3, batch_size = 16 }, { layers = 2 }] } # merged left to right
}
`
	for _, profile := range []string{"", "mini"} {
		want := mustLoad(t, "explicit.hcl", []byte(explicit), Options{Profile: profile}).Variants[0]
		got := mustLoad(t, "spread.hcl", []byte(spread), Options{Profile: profile}).Variants[0]
		for _, name := range []string{"a", "b"} {
			w, g := want.Stage(name), got.Stage(name)
			if !g.Params.RawEquals(w.Params) {
				t.Errorf("profile %q, stage %s: params %#v, want %#v", profile, name, g.Params, w.Params)
			}
			// The seed comes from the spread too (7, not the default 42).
			if g.Seed != 7 || w.Seed != 7 {
				t.Errorf("profile %q, stage %s: seed %d (explicit %d), want 7", profile, name, g.Seed, w.Seed)
			}
		}
	}
}

// TestParamsErrors: what `params` refuses, each at its cause.
func TestParamsErrors(t *testing.T) {
	t.Parallel()
	const head = `experiment "x" {}
locals {
  recipe = { layers = 4, hiden = 128 }
  bad    = { uses = "train.encoder" }
  number = 5
}
stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}
stage "t" {
  uses   = "train.encoder"
  data   = stage.mask.pairs
`
	for _, c := range []struct {
		name, body string
		line       int
		err        string
	}{
		{"unknown parameter, at its line in the local", "  params = local.recipe\n", 3, `no input or parameter named "hiden"`},
		{"a number", "  params = 5\n", 18, "`params` must be an object of parameters"},
		{"a local holding a number", "  params = local.number\n", 18, "`params` must be an object of parameters"},
		{"no such local", "  params = local.nope\n", 18, "local.nope, which no locals block declares"},
		{"uses inside", "  params = local.bad\n", 4, "`uses` belongs in the stage block itself"},
		{"a key twice", "  params = { layers = 2, layers = 3 }\n", 18, "params.layers is set twice"},
		{"a number in a list", "  params = [local.recipe, 5]\n", 18, "`params` must be an object of parameters"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := NewLoader(testRegistry())
			_, diags := l.LoadSource("x.hcl", []byte(head+c.body+"}\n"), Options{})
			found := false
			for _, d := range diags {
				found = found || d.Subject != nil && d.Subject.Start.Line == c.line && strings.Contains(d.Summary+"; "+d.Detail, c.err)
			}
			if !found {
				t.Errorf("want a diagnostic at line %d containing %q; got %v", c.line, c.err, diags)
			}
		})
	}
}

// TestParamsLocalLoop: a local that names itself is an error, not a hang.
func TestParamsLocalLoop(t *testing.T) {
	t.Parallel()
	src := `experiment "x" {}
locals {
  loop = local.loop
}
stage "corpus" {
  uses   = "data.sentences"
  path   = "x"
  params = local.loop
}
`
	_, diags := NewLoader(testRegistry()).LoadSource("x.hcl", []byte(src), Options{})
	found := false
	for _, d := range diags {
		found = found || d.Subject != nil && d.Subject.Start.Line == 3 && strings.Contains(d.Detail, "local.loop refers to itself")
	}
	if !found {
		t.Errorf("want the loop reported at line 3; got %v", diags)
	}
}

// TestParamsFromVariable: `params = var.NAME` takes its names from the
// variable's default and its values from the variable as set, so a profile
// or -var that changes the variable changes every stage spreading it.
func TestParamsFromVariable(t *testing.T) {
	t.Parallel()
	src := []byte(`experiment "x" {}
stage "corpus" {
  uses   = "data.sentences"
  params = var.data
}
variable "data" { # declared after the stage that reads it
  default = { path = "a.txt", limit = 5 }
}
profile "mini" {
  variables = { data = { path = "b.txt", limit = 7 } }
}
`)
	for profile, want := range map[string][2]any{"": {"a.txt", 5.0}, "mini": {"b.txt", 7.0}} {
		s := mustLoad(t, "x.hcl", src, Options{Profile: profile}).Variants[0].Stage("corpus")
		if got := s.Params.GetAttr("path").AsString(); got != want[0] || num(t, s.Params, "limit") != want[1] {
			t.Errorf("profile %q: path %q limit %v, want %v", profile, got, num(t, s.Params, "limit"), want)
		}
	}
	s := mustLoad(t, "x.hcl", src, Options{Vars: map[string]string{"data": `{ path = "c.txt", limit = 9 }`}}).Variants[0].Stage("corpus")
	if got := s.Params.GetAttr("path").AsString(); got != "c.txt" || num(t, s.Params, "limit") != 9 {
		t.Errorf("-var data: path %q limit %v", got, num(t, s.Params, "limit"))
	}
	for _, c := range []struct{ params, err string }{
		{"var.bare", "var.bare has no default"}, // set by -var below: its names are unknown before evaluation
		{"var.five", "must be an object of parameters"},
		{"var.nope", "var.nope, which no variable block declares"},
	} {
		bad := strings.Replace(string(src), "params = var.data", "path   = \"x\"\n  params = "+c.params, 1) +
			"variable \"bare\" {}\nvariable \"five\" {\n  default = 5\n}\n"
		_, diags := NewLoader(testRegistry()).LoadSource("x.hcl", []byte(bad), Options{Vars: map[string]string{"bare": `{ limit = 1 }`}})
		if len(diags) != 1 || !strings.Contains(diags[0].Detail, c.err) || diags[0].Subject.Start.Line != 5 {
			t.Errorf("params = %s: want one error at line 5 containing %q; got %v", c.params, c.err, diags)
		}
	}
}
