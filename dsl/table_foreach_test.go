package dsl

import (
	"strings"
	"testing"
)

// TestTableForEachLowersToExpects: rows from for_each (named by `name` or
// LABEL[KEY]), rows under `enabled` and under a conditional for_each give
// exactly the cells of the equivalent expect blocks, in the same order,
// with the variables unset (no released row), set one at a time and all
// set, in the paper profile and in ci.
func TestTableForEachLowersToExpects(t *testing.T) {
	t.Parallel()
	for _, opts := range []Options{
		{},
		{Vars: map[string]string{"released_a": "dir"}},
		{Vars: map[string]string{"released_b": "dir", "askubuntu": "file"}},
		{Vars: map[string]string{"released_a": "dir", "released_b": "dir"}, Profile: "ci"},
	} {
		table := loadFile(t, "testdata/table_foreach.hcl", opts)
		expects := loadFile(t, "testdata/table_foreach_expects.hcl", opts)
		if len(table.Expects) != len(expects.Expects) {
			t.Errorf("%+v: %d cells from tables, %d from expect blocks", opts, len(table.Expects), len(expects.Expects))
		}
		for i := range min(len(table.Expects), len(expects.Expects)) {
			if a, b := cellText(table.Expects[i]), cellText(expects.Expects[i]); a != b {
				t.Errorf("%+v: cell %d:\ntable  %s\nexpect %s", opts, i, a, b)
			}
		}
	}
	names := func(cfg *Config) string {
		var out []string
		for _, x := range cfg.Expects {
			out = append(out, x.Name)
		}
		return strings.Join(out, " ")
	}
	cfg := loadFile(t, "testdata/table_foreach.hcl", Options{})
	want := "b[STS12] b[STS-B] b[Avg] a[STS12] a[STS-B] a[Avg] each_b each_a " +
		"grid[x][STS12] grid[x][Avg] grid[y][STS12] grid[y][Avg] t3_b t3_a " +
		"t3_large[Model B, large (Table 3)] t3_large[Model A, large (Table 3)]"
	if got := names(cfg); got != want {
		t.Errorf("cells without the variables:\n%s\nwant\n%s", got, want)
	}
	cfg = loadFile(t, "testdata/table_foreach.hcl", Options{Vars: map[string]string{"released_a": "dir", "released_b": "dir"}})
	if got := names(cfg); !strings.Contains(got, "a[Avg] released_b[STS12] released_b[STS-B] released_b[Avg] released_a[STS12]") ||
		!strings.HasSuffix(got, "t3_large[Model A, large (Table 3)] t3_released[a]") {
		t.Errorf("cells with the variables: %s", got)
	}
	// A cell points at its row block.
	for _, x := range cfg.Expects {
		if x.Range.Filename != "testdata/table_foreach.hcl" || x.Range.Start.Line == 0 {
			t.Errorf("%s: range %v", x.Name, x.Range)
		}
	}
}

// TestTableRowEnabled: `enabled` without for_each keeps or drops one row,
// and nothing of a dropped row is evaluated: its stage may be an instance
// that exists only when the row is enabled.
func TestTableRowEnabled(t *testing.T) {
	t.Parallel()
	src := `experiment "x" {}
variable "released" {
  default = ""
}
` + testPipeline + `
stage "released" {
  for_each = var.released == "" ? [] : ["r"]
  uses     = "train.encoder"
  data     = stage.mask.pairs
}
stage "eval_released" {
  for_each = stage.released
  uses     = "evaluate.sts"
  model    = each.value.model
}
table "T" {
  columns = { STS12 = "sts12", Avg = "avg" }
  row "ours" {
    stage = stage.eval
  }
  row "released" {
    enabled = var.released != ""
    title   = "released"
    stage   = stage.eval_released["r"]
    paper   = [1, 2]
  }
  row "never" {
    enabled = false
    stage   = stage.nowhere
  }
}
`
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{nil, "ours[STS12] ours[Avg]"},
		{map[string]string{"released": "dir"}, `ours[STS12] ours[Avg] released[STS12]=eval_released["r"] released[Avg]=eval_released["r"]`},
	} {
		cfg := mustLoad(t, "enabled.hcl", []byte(src), Options{Vars: c.vars})
		var got []string
		for _, x := range cfg.Expects {
			s := x.Name
			if x.Block == "released" {
				s += "=" + x.Value.Stage
			}
			got = append(got, s)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("vars %v: cells %s, want %s", c.vars, strings.Join(got, " "), c.want)
		}
	}
}
