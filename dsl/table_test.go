package dsl

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclwrite"
)

// cellText is every field of a cell that anything downstream reads (the
// report, agreement, check against baselines), without source ranges.
func cellText(x *Expect) string {
	paper := fmt.Sprint(x.Paper)
	if math.IsNaN(x.Paper) {
		paper = "NaN"
	}
	return fmt.Sprintf("name=%q block=%q key=%q row=%q column=%q value=%s.%s.%q paper=%s tol=%v lower=%v count=%v max=%v profile=%q pending=%q",
		x.Name, x.Block, x.Key, x.Row, x.Column, x.Value.Stage, x.Value.Output, x.Value.Path, paper, x.Tolerance,
		x.LowerIsBetter, x.Count, x.MaxTolerance, x.Profile, x.Pending)
}

// TestTableLowersToExpects: a table block gives exactly the cells of the
// equivalent expect blocks -- names, blocks and keys (what baselines are
// keyed by), rows, columns, metric references, paper values (null: none),
// tolerances, flags, profiles and pending reasons -- in the same order,
// with tables and expect blocks interleaved as written.
func TestTableLowersToExpects(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{{}, {Vars: map[string]string{"mind": "x"}}, {Profile: "ci"}} {
		table := loadFile(t, "testdata/table.hcl", opts)
		expects := loadFile(t, "testdata/table_expects.hcl", opts)
		if len(table.Expects) != len(expects.Expects) {
			t.Errorf("%+v: %d cells from tables, %d from expect blocks", opts, len(table.Expects), len(expects.Expects))
		}
		for i := range min(len(table.Expects), len(expects.Expects)) {
			if a, b := cellText(table.Expects[i]), cellText(expects.Expects[i]); a != b {
				t.Errorf("%+v: cell %d:\ntable  %s\nexpect %s", opts, i, a, b)
			}
		}
	}
	cfg := loadFile(t, "testdata/table.hcl", Options{})
	var names []string
	for _, x := range cfg.Expects {
		names = append(names, x.Name)
	}
	want := "gense[STS12] gense[STS13] gense[STS-B] gense[Avg] st5_enc[STS12] st5_enc[STS13] st5_enc[STS-B] st5_enc[Avg] " +
		"simcse_not_here[Avg] simcse_not_here[STS-B] between dev_gense table8_not_here " +
		"t3_iter1[R@5] t3_iter1[R@10] t3_last[R@5] t3_last[R@10] " +
		"geometry_gense[alignment] geometry_gense[uniformity] geometry_st5[alignment] geometry_st5[uniformity] " +
		"synthesis[candidates] synthesis[kept] synthesis[pass rate] mean_x2[STS12] mean_x2[Avg] density"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("cells:\n%s\nwant\n%s", got, want)
	}
	// A cell points at its row block, for messages that name the line.
	if r := cfg.Expects[0].Range; r.Filename != "testdata/table.hcl" || r.Start.Line == 0 {
		t.Errorf("range %v", r)
	}
}

// TestTableMixedRow: a row with a stage computes every cell its pending
// list leaves null -- something one expect block cannot say.
func TestTableMixedRow(t *testing.T) {
	t.Parallel()
	src := `experiment "x" {}
` + testPipeline + `
table "T" {
  columns = { STS12 = "sts12", STS13 = "sts13", Avg = "avg" }
  row "partial" {
    stage   = stage.eval
    pending = { STS13 = "not here" }
    paper   = { Avg = 76.25 }
  }
}
`
	cfg := mustLoad(t, "mixed.hcl", []byte(src), Options{})
	var got []string
	for _, x := range cfg.Expects {
		got = append(got, cellText(x))
	}
	want := []string{
		`name="partial[STS12]" block="partial" key="STS12" row="partial" column="STS12" value=eval.metrics.["sts12"] paper=NaN tol=1 lower=false count=false max=0 profile="" pending=""`,
		`name="partial[STS13]" block="partial" key="STS13" row="partial" column="STS13" value=..[] paper=NaN tol=1 lower=false count=false max=0 profile="" pending="not here"`,
		`name="partial[Avg]" block="partial" key="Avg" row="partial" column="Avg" value=eval.metrics.["avg"] paper=76.25 tol=1 lower=false count=false max=0 profile="" pending=""`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cells:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNewBlocksFormat: `repro fmt` (hclwrite.Format) handles table, row,
// input and output blocks like any other: the fixtures are its fixed
// points, and a version with its alignment and indentation thrown away
// formats back to them.
func TestNewBlocksFormat(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"testdata/table.hcl", "testdata/table_foreach.hcl", "testdata/modules/inputs/chain.hcl", "testdata/modules/inputs/twice.hcl"} {
		src := mustRead(t, p)
		if got := hclwrite.Format(src); !bytes.Equal(got, src) {
			t.Errorf("%s is not formatted:\n%s", p, got)
		}
		messy := regexp.MustCompile(`(?m)^ +| +=`).ReplaceAll(src, []byte(" ="))
		messy = bytes.ReplaceAll(messy, []byte("\n ="), []byte("\n"))
		if bytes.Equal(messy, src) {
			t.Fatalf("%s: the messy copy is the same", p)
		}
		if got := hclwrite.Format(messy); !bytes.Equal(got, src) {
			t.Errorf("%s: fmt of the messy copy differs:\n%s", p, got)
		}
	}
}

// TestRenderGoldenTablesModules: the rendered diagnostics (file:line:col,
// snippet, message) of table blocks and module inputs, as a user sees them.
func TestRenderGoldenTablesModules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ golden, file string }{
		{"testdata/render/table.golden", "testdata/errors/table.hcl"},
		{"testdata/render/table_foreach.golden", "testdata/errors/table_foreach.hcl"},
		{"testdata/render/module_inputs.golden", "testdata/modules/input_errors/root.hcl"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			t.Parallel()
			l := NewLoader(testRegistry())
			_, diags := l.Load(c.file, Options{})
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

// TestTableAndModulesWithForEach: a table row reads a for_each instance
// (stage.NAME["KEY"], bare like stage.NAME) and a module input takes one.
func TestTableAndModulesWithForEach(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "m.hcl"), []byte(`input "enc" {
  kind = "encoder"
}
stage "ev" {
  uses  = "evaluate.sts"
  model = input.enc
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "root.hcl")
	if err := os.WriteFile(root, []byte(`experiment "x" {}
`+testPipeline+`
stage "tune" {
  for_each = ["a", "b"]
  uses     = "train.encoder"
  data     = stage.mask.pairs
}
stage "score" {
  for_each = stage.tune
  uses     = "evaluate.sts"
  model    = each.value.model
}
module "m" {
  source = "./m.hcl"
  enc    = stage.tune["a"].model
}
table "T" {
  columns = ["avg"]
  row "b" {
    stage = stage.score["b"]
  }
  row "m" {
    stage = module.m.ev
  }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := loadFile(t, root, Options{})
	var got []string
	for _, x := range cfg.Expects {
		got = append(got, x.Name+"="+x.Value.Stage+"."+x.Value.Output+"."+strings.Join(x.Value.Path, "."))
	}
	if want := `b=score["b"].metrics.avg m=module.m.ev.metrics.avg`; strings.Join(got, " ") != want {
		t.Errorf("cells %v, want %s", got, want)
	}
	if r := cfg.Variants[0].Stage("module.m.ev").Inputs["model"]; r.Stage != `tune["a"]` {
		t.Errorf("module.m.ev model = %+v", r)
	}
}
