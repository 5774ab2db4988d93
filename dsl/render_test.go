package dsl

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

var update = flag.Bool("update", false, "rewrite the .golden files")

func TestRenderGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		golden string
		file   string
		opts   Options
	}{
		{"testdata/render/refs.golden", "testdata/errors/refs.hcl", Options{}},
		{"testdata/render/repeat.golden", "testdata/errors/repeat.hcl", Options{}},
		{"testdata/render/extends.golden", "testdata/errors/extends.hcl", Options{}},
		{"testdata/render/tabs.golden", "testdata/render/tabs.hcl", Options{}},
		{"testdata/render/flags.golden", "testdata/paser.hcl", Options{
			Profile: "mino", Ablation: "top-k",
			Sets: []string{"stage.mask.top_k=1,2,three", "stage.trian.layers=2", "var.seed=1.5"},
			Vars: map[string]string{"corpus": "[1, 2]", "sed": "1"},
		}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			t.Parallel()
			l := NewLoader(testRegistry())
			_, diags := l.Load(c.file, c.opts)
			var b bytes.Buffer
			if err := Render(&b, l.Files(), diags); err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(c.golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(c.golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("rendered output differs from %s (go test -update rewrites it):\n%s", c.golden, b.String())
			}
		})
	}
}

func TestRenderWithoutSource(t *testing.T) {
	t.Parallel()
	rng := hcl.Range{Filename: "gone.hcl", Start: hcl.Pos{Line: 3, Column: 5, Byte: 20}, End: hcl.Pos{Line: 3, Column: 9, Byte: 24}}
	diags := hcl.Diagnostics{
		{Severity: hcl.DiagError, Summary: "No file", Detail: "detail", Subject: &rng},
		{Severity: hcl.DiagWarning, Summary: "No range", Detail: "a\nb"},
	}
	var b bytes.Buffer
	if err := Render(&b, nil, diags); err != nil {
		t.Fatal(err)
	}
	want := "gone.hcl:3:5: error: No file\n  detail\n\nwarning: No range\n  a\n  b\n"
	if b.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", b.String(), want)
	}
	// A range past the end of the source prints no snippet and no panic.
	b.Reset()
	files := map[string]*hcl.File{"gone.hcl": {Bytes: []byte("x\n")}}
	Render(&b, files, diags[:1])
	if strings.Contains(b.String(), "|") {
		t.Errorf("snippet for a line that does not exist: %q", b.String())
	}
}
