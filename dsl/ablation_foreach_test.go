package dsl

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// A variant block with for_each and a report read from a local load into
// the same grid as the variants and references written out: the same
// variant names in the same order, labels, varied paths, stage parameters
// and keys in every cell, report references, columns and paper values
// (a variant's own paper, each.value.paper, as the ablation's map) -- in
// every profile (the for_each reads a variable the profile sets). Inputs
// set or varied through a local holding a reference get the same keys.
func TestVariantForEachSameAsWrittenOut(t *testing.T) {
	t.Parallel()
	for _, abl := range []string{"phrases", "eda", "pooling", "grid", "inputs"} {
		for _, profile := range []string{"", "mini"} {
			what := fmt.Sprintf("ablation %s, profile %q", abl, profile)
			opts := Options{Ablation: abl, Profile: profile}
			short := loadFile(t, "testdata/ablation_foreach/foreach.hcl", opts)
			long := loadFile(t, "testdata/ablation_foreach/written_out.hcl", opts)
			// An input's reference names its cell as written: local.pairs.mask
			// here, stage.mask.pairs written out; the keys are the same.
			same := strings.NewReplacer("local.pairs.mask", "stage.mask.pairs").Replace
			if got, want := variantNames(short), variantNames(long); !slices.Equal(mapped(got, same), want) {
				t.Fatalf("%s: variants %q, written out %q", what, got, want)
			}
			if !slices.Equal(short.Varied, long.Varied) {
				t.Errorf("%s: varied %v, written out %v", what, short.Varied, long.Varied)
			}
			for i, v := range short.Variants {
				w := long.Variants[i]
				if got, want := labelText(v), labelText(w); same(got) != want {
					t.Errorf("%s, %s: labels %s, written out %s", what, v.Name, got, want)
				}
				for _, s := range v.Stages {
					if o := w.Stage(s.Name); o == nil || !s.Params.RawEquals(o.Params) {
						t.Errorf("%s, %s: %s params %#v, written out %#v", what, v.Name, s.Name, s.Params, o)
					}
				}
				if !maps.Equal(pseudoKeys(t, v.Graph), pseudoKeys(t, w.Graph)) {
					t.Errorf("%s, %s: keys differ from the written-out file's", what, v.Name)
				}
			}
			a, b := short.Ablation, long.Ablation
			if !reflect.DeepEqual(reportText(a), reportText(b)) || !slices.Equal(a.Columns, b.Columns) || fmt.Sprint(a.Paper) != fmt.Sprint(b.Paper) { // NaN: a cell the paper leaves empty
				t.Errorf("%s: report %v columns %v paper %v; written out %v %v %v",
					what, reportText(a), a.Columns, a.Paper, reportText(b), b.Columns, b.Paper)
			}
		}
	}
	// The values themselves, so that the comparison cannot pass on two
	// equally wrong loads.
	cfg := loadFile(t, "testdata/ablation_foreach/foreach.hcl", Options{Ablation: "phrases"})
	if got := strings.Join(variantNames(cfg), "|"); got != "NP only|RAKE (top1)|RAKE (top2)|RAKE (top3)|last" {
		t.Fatalf("phrases: %s", got)
	}
	for i, want := range []float64{3, 1, 2, 3, 3} {
		if got := num(t, cfg.Variants[i].Stage("mask").Params, "top_k"); got != want {
			t.Errorf("%s: top_k %v, want %v", cfg.Variants[i].Name, got, want)
		}
	}
	if got := reportText(cfg.Ablation); strings.Join(got, " ") != `eval["a"].stsb eval["a"].avg` {
		t.Errorf("report %v", got)
	}
	mini := loadFile(t, "testdata/ablation_foreach/foreach.hcl", Options{Ablation: "pooling", Profile: "mini"})
	if got := mini.Variants[1].Stage("train").Params.GetAttr("pooling").AsString(); got != "mean" {
		t.Errorf("mini [CLS] pooling = %s, want the profile's var.pooling, mean", got)
	}
	grid := loadFile(t, "testdata/ablation_foreach/foreach.hcl", Options{Ablation: "grid"})
	if got := strings.Join(variantNames(grid)[:3], "|"); got != "train.layers=2, other.data=stage.eda.pairs, 1|train.layers=2, other.data=stage.eda.pairs, 2|train.layers=2, other.data=local.pairs.mask, 1" {
		t.Errorf("grid: %s", got)
	}
}

// A --set list adds an axis after the variants, as for variants written
// out; a single --set value reaches the for_each.
func TestVariantForEachWithSet(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"foreach", "written_out"} {
		cfg := loadFile(t, "testdata/ablation_foreach/"+f+".hcl", Options{Ablation: "pooling", Sets: []string{"stage.train.layers=2,4", "var.pooling=first_last"}})
		if got := strings.Join(variantNames(cfg), "|"); got != "Top1 avg., train.layers=2|Top1 avg., train.layers=4|[CLS], train.layers=2|[CLS], train.layers=4" {
			t.Errorf("%s: %s", f, got)
		}
		if got := cfg.Variants[3].Stage("train").Params.GetAttr("pooling").AsString(); got != "first_last" {
			t.Errorf("%s: [CLS] pooling = %s", f, got)
		}
	}
}

func mapped(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func variantNames(cfg *Config) []string {
	var out []string
	for _, v := range cfg.Variants {
		out = append(out, v.Name)
	}
	return out
}

func labelText(v *Variant) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(v.Label)) {
		parts = append(parts, k+"="+formatValue(v.Label[k]))
	}
	return strings.Join(parts, ", ")
}

func reportText(a *Ablation) []string {
	var out []string
	for _, r := range a.Report {
		out = append(out, r.Stage+"."+strings.Join(r.Path, "."))
	}
	return out
}

// A report read from a local that does not hold metric keys is an error at
// the report line (the fixture's ablation "v" checks the column counts).
func TestReportLocalErrors(t *testing.T) {
	t.Parallel()
	const path = "testdata/errors/ablation_report_local.hcl"
	src := mustRead(t, path)
	for abl, want := range map[string]string{
		"models":  "Not a metric; Element 0 of local.models is an output of kind encoder",
		"whole":   "Missing metric key; Element 0 of local.whole is a whole metrics object",
		"numbers": "Invalid report; `report` is a list of metric references",
	} {
		l := NewLoader(testRegistry())
		cfg, diags := l.LoadSource(path, src, Options{Ablation: abl})
		if cfg != nil || len(diags) != 1 {
			t.Errorf("%s: want one error, got %v", abl, diags)
			continue
		}
		d := diags[0]
		line := strings.Count(string(src[:strings.Index(string(src), "report = local."+abl)]), "\n") + 1
		if got := d.Summary + "; " + d.Detail; !strings.Contains(got, want) || d.Subject.Start.Line != line {
			t.Errorf("%s: %s at line %d, want %q at line %d", abl, got, d.Subject.Start.Line, want, line)
		}
	}
}
