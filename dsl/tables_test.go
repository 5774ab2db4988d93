package dsl

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestForEachExpects(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/tables.hcl", Options{})
	byName := map[string]*Expect{}
	var names []string
	for _, e := range cfg.Expects {
		byName[e.Name] = e
		names = append(names, e.Name)
	}
	// Source order for object constructors (also through a local), sorted
	// keys for a computed map, plain blocks unchanged.
	want := "simcse_unsup[STS13] simcse_unsup[STS12] simcse_unsup[Avg] " +
		"ours[STS12] ours[STS13] ours[STS-B] ours[Avg] iter[Iter-1] iter[Iter-3] " +
		"geometry[alignment] geometry[uniformity] tfidf dino[STS12] dino[Avg]"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("expects =\n%s\nwant\n%s", got, want)
	}

	e := byName["simcse_unsup[STS12]"]
	if e.Block != "simcse_unsup" || e.Key != "STS12" || e.Row != "SimCSE-BERT-base (unsup)" || e.Column != "STS12" ||
		e.Paper != 68.40 || e.Tolerance != 1.0 || e.LowerIsBetter {
		t.Errorf("simcse_unsup[STS12] = %+v", e)
	}
	if e.Value.Stage != "eval" || e.Value.Output != "metrics" || strings.Join(e.Value.Path, ".") != "sts12" {
		t.Errorf("lower(each.key): value = %+v", e.Value)
	}
	if e.Range.Start.Line == 0 || e.Value.Range.Start.Line == 0 {
		t.Errorf("ranges missing: %v %v", e.Range, e.Value.Range)
	}
	if got := byName["simcse_unsup[Avg]"].Paper; got != 76.25 {
		t.Errorf("Avg paper = %v", got)
	}

	// A lookup through a local, then a literal key after the computed one;
	// no paper attribute: NaN.
	e = byName["ours[STS-B]"]
	if strings.Join(e.Value.Path, ".") != "stsb.spearman" || !math.IsNaN(e.Paper) || e.Column != "STS-B" {
		t.Errorf("ours[STS-B] = %+v", e)
	}

	// Object elements: each.value.paper, null paper, computed round index.
	if e := byName["iter[Iter-1]"]; e.Value.Stage != "idc[1].r_eval" || e.Paper != 71.5 || e.Value.Path[0] != "avg" {
		t.Errorf("iter[Iter-1] = %+v", e)
	}
	if e := byName["iter[Iter-3]"]; e.Value.Stage != "idc[3].r_eval" || !math.IsNaN(e.Paper) {
		t.Errorf("iter[Iter-3] = %+v", e)
	}

	if e := byName["geometry[uniformity]"]; !e.LowerIsBetter || e.Value.Path[0] != "uniformity" {
		t.Errorf("geometry[uniformity] = %+v", e)
	}
	if e := byName["tfidf"]; e.Key != "" || e.Block != "tfidf" || !math.IsNaN(e.Paper) || e.LowerIsBetter {
		t.Errorf("tfidf = %+v", e)
	}

	if e := byName["dino[Avg]"]; e.Pending != "DINO makes scored pairs, not triplets" || e.Paper != 75.20 || e.Value.Stage != "" {
		t.Errorf("dino[Avg] = %+v", e)
	}

	// -var reaches for_each bodies: tolerance = var.tol.
	cfg = loadFile(t, "testdata/tables.hcl", Options{Vars: map[string]string{"tol": "0.5"}})
	if cfg.Expects[0].Tolerance != 0.5 {
		t.Errorf("tolerance under -var = %v", cfg.Expects[0].Tolerance)
	}
}

// testPipeline is the four-stage pipeline the table tests declare their
// expects and ablations over.
const testPipeline = `stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}
stage "train" {
  uses = "train.encoder"
  data = stage.mask.pairs
}
stage "eval" {
  uses  = "evaluate.sts"
  model = stage.train.model
}
`

// An expect block with one element per cell equals the same cells written
// one block each.
func TestForEachEqualsSeparateBlocks(t *testing.T) {
	t.Parallel()
	head := `
experiment "x" {
}
` + testPipeline
	a := mustLoad(t, "a.hcl", []byte(head+`
expect "r" {
  for_each  = { STS12 = 68.4, "STS-B" = 76.85 }
  row       = "SimCSE"
  column    = each.key
  value     = stage.eval.metrics[replace(lower(each.key), "-", "")]
  paper     = each.value
  tolerance = 0.5
}`), Options{})
	b := mustLoad(t, "b.hcl", []byte(head+`
expect "r[STS12]" {
  row       = "SimCSE"
  column    = "STS12"
  value     = stage.eval.metrics.sts12
  paper     = 68.4
  tolerance = 0.5
}
expect "r[STS-B]" {
  row       = "SimCSE"
  column    = "STS-B"
  value     = stage.eval.metrics["stsb"]
  paper     = 76.85
  tolerance = 0.5
}`), Options{})
	if len(a.Expects) != 2 || len(b.Expects) != 2 {
		t.Fatalf("expects: %d and %d", len(a.Expects), len(b.Expects))
	}
	for i := range a.Expects {
		x, y := a.Expects[i], b.Expects[i]
		if x.Name != y.Name || x.Row != y.Row || x.Column != y.Column || x.Paper != y.Paper || x.Tolerance != y.Tolerance ||
			x.Value.Stage != y.Value.Stage || strings.Join(x.Value.Path, ".") != strings.Join(y.Value.Path, ".") {
			t.Errorf("element %d: %+v != %+v", i, x, y)
		}
	}
}

func TestAblationPaperColumnsFigure(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/tables.hcl", Options{Ablation: "top_k"})
	ab := cfg.Ablation
	if got := strings.Join(ab.Columns, "|"); got != "STS12-16|STS-B|SICK-R" {
		t.Errorf("columns = %s", got)
	}
	// Keys written as the full label, a bare string value and a bare number
	// all become Variant.Name.
	if len(ab.Paper) != 3 {
		t.Fatalf("paper = %v", ab.Paper)
	}
	for i, v := range cfg.Variants {
		row, ok := ab.Paper[v.Name]
		if !ok || len(row) != 3 {
			t.Fatalf("no paper row for %q: %v", v.Name, ab.Paper)
		}
		if want := []float64{77.7, 78.0, 78.2}[i]; row[0] != want {
			t.Errorf("%s: paper[0] = %v, want %v", v.Name, row[0], want)
		}
	}
	if r := ab.Paper["mask.top_k=2"]; !math.IsNaN(r[1]) || r[2] != 66.0 {
		t.Errorf("null cell: %v", r)
	}
	f := ab.Figure
	if f == nil || f.File != "figure4.png" || f.Title != "RAKE top-k" || f.XLabel != "top k" ||
		f.YLabel != "STS12-16" || f.Axis != "stage.mask.top_k" || f.Range.Start.Line == 0 {
		t.Errorf("figure = %+v", f)
	}

	// Explicit variants: keys are the block names; default column labels.
	cfg = loadFile(t, "testdata/tables.hcl", Options{Ablation: "eda"})
	ab = cfg.Ablation
	if ab.Figure != nil || strings.Join(ab.Columns, "|") != "avg" {
		t.Errorf("eda: figure %v columns %v", ab.Figure, ab.Columns)
	}
	if ab.Paper["none"][0] != 73.8 || ab.Paper["SR"][0] != 77.7 || cfg.Variants[1].Name != "SR" {
		t.Errorf("eda paper = %v", ab.Paper)
	}

	// Two vary axes and a variant block: the key is the full cell name;
	// default columns get the stage name when two paths read the same.
	cfg = loadFile(t, "testdata/tables.hcl", Options{Ablation: "grid"})
	ab = cfg.Ablation
	if len(cfg.Variants) != 2 || cfg.Variants[0].Name != "mask.ratio=0.1, var.tol=2, a" {
		t.Fatalf("grid variants: %d, first %q", len(cfg.Variants), cfg.Variants[0].Name)
	}
	if row := ab.Paper[cfg.Variants[0].Name]; len(row) != 2 || row[1] != 2 {
		t.Errorf("grid paper = %v", ab.Paper)
	}
	if got := strings.Join(ab.Columns, "|"); got != "eval.avg|idc[2].r_eval.avg" {
		t.Errorf("grid columns = %s", got)
	}

	// --set replacing the axis: the paper keeps the declared grid's rows.
	cfg = loadFile(t, "testdata/tables.hcl", Options{Ablation: "top_k", Sets: []string{"stage.mask.top_k=3,4"}})
	if _, ok := cfg.Ablation.Paper["mask.top_k=3"]; !ok || len(cfg.Variants) != 2 || cfg.Variants[0].Name != "mask.top_k=3" {
		t.Errorf("--set: paper %v", cfg.Ablation.Paper)
	}
	if _, ok := cfg.Ablation.Paper[cfg.Variants[1].Name]; ok {
		t.Errorf("a variant the paper does not have got paper values")
	}

	// Without the ablation selected nothing of it is evaluated, and Validate
	// finds every ablation of the file clean.
	if d := NewLoader(testRegistry()).Validate("testdata/tables.hcl", Options{}); len(d) != 0 {
		t.Errorf("Validate: %v", d)
	}
}

// The declared grid's names are exactly the names Load gives the variants,
// whatever the value spelling: paper keys written from Variant.Name resolve.
func TestDeclaredNamesMatchVariants(t *testing.T) {
	t.Parallel()
	src := `
experiment "x" {
}
variable "v" {
  type    = string
  default = "a"
}
stage "corpus" {
  uses = "data.sentences"
  path = "x"
}
stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}
ablation "g" {
  vary = {
    "stage.mask.ratio" = [0.10, 1e-1 * 2, 3]
    "stage.mask.mode"  = ["rake", "np"]
    "stage.mask.seed"  = [1]
    "var.v"            = [1, "b"]
  }
  variant "x y" {
    set = {}
  }
}
`
	cfg := mustLoad(t, "g.hcl", []byte(src), Options{Ablation: "g"})
	l := NewLoader(testRegistry())
	var keys []string
	for _, v := range cfg.Variants {
		keys = append(keys, `"`+v.Name+`" = []`)
	}
	withPaper := strings.Replace(src, `variant "x y"`, "paper = {\n"+strings.Join(keys, "\n")+"\n}\nvariant \"x y\"", 1)
	cfg2, diags := l.LoadSource("g2.hcl", []byte(withPaper), Options{Ablation: "g"})
	if diags.HasErrors() {
		var b strings.Builder
		Render(&b, l.Files(), diags)
		t.Fatalf("paper keyed by Variant.Name:\n%s", b.String())
	}
	if len(cfg2.Ablation.Paper) != len(cfg.Variants) || len(cfg.Variants) != 12 {
		t.Errorf("paper rows %d, variants %d", len(cfg2.Ablation.Paper), len(cfg.Variants))
	}
	if cfg.Variants[1].Name != "mask.ratio=0.1, mask.mode=rake, mask.seed=1, var.v=b, x y" {
		t.Errorf("name = %q", cfg.Variants[1].Name)
	}
}

func TestMinAgreement(t *testing.T) {
	t.Parallel()
	src := []byte(`experiment "x" {
  min_agreement = 0.6
}
` + testPipeline + `ablation "own" {
  vary          = { "stage.mask.top_k" = [1, 2] }
  report        = [stage.eval.metrics.avg]
  paper         = { "1" = [70], "2" = [72] }
  min_agreement = 0.9
}
ablation "inherits" {
  vary   = { "stage.mask.top_k" = [1, 2] }
  report = [stage.eval.metrics.avg]
  paper  = { "1" = [70], "2" = [72] }
}
ablation "nopaper" {
  vary   = { "stage.mask.top_k" = [1, 2] }
  report = [stage.eval.metrics.avg]
}
`)
	for name, want := range map[string]float64{"own": 0.9, "inherits": 0.6, "nopaper": 0} {
		cfg := mustLoad(t, "x.hcl", src, Options{Ablation: name})
		if cfg.Experiment.MinAgreement != 0.6 || cfg.Ablation.MinAgreement != want {
			t.Errorf("%s: experiment %v, ablation %v; want 0.6 and %v", name, cfg.Experiment.MinAgreement, cfg.Ablation.MinAgreement, want)
		}
	}
}

func TestPaperResolution(t *testing.T) {
	t.Parallel()
	const head = `experiment "x" {}
` + testPipeline + `locals {
  res = [0.1, 1]
}
ablation "k" {
  vary    = { "stage.mask.top_k" = [1, 2] }
  report  = [stage.eval.metrics.avg, stage.eval.metrics.stsb]
`
	const paper = "  paper   = { \"1\" = [70, 71], \"2\" = [72, 71.5] }\n"
	for _, c := range []struct {
		name, body string
		want       []float64
		err        string // substring of "Summary; Detail" at the attribute's line
	}{
		{"one for every column", paper + "  paper_resolution = 0.5\n", []float64{0.5}, ""},
		{"one per column", paper + "  paper_resolution = local.res\n", []float64{0.1, 1}, ""},
		{"zero", paper + "  paper_resolution = [0, 0]\n", []float64{0, 0}, ""},
		{"not declared", paper, nil, ""},
		{"list of the wrong length", paper + "  paper_resolution = [0.1]\n", nil, `ablation "k" has 2 column(s), the list 1 value(s)`},
		{"negative", paper + "  paper_resolution = [0.1, -1]\n", nil, "got -1"},
		{"a string", paper + "  paper_resolution = \"tenth\"\n", nil, "got string"},
		{"not a number in the list", paper + "  paper_resolution = [0.1, \"x\"]\n", nil, "got string"},
		{"without paper values", "  paper_resolution = 0.1\n", nil, `Ablation "k" declares no ` + "`paper`"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := []byte(head + c.body + "}\n")
			l := NewLoader(testRegistry())
			cfg, diags := l.LoadSource("x.hcl", src, Options{Ablation: "k"})
			if c.err == "" {
				if diags.HasErrors() {
					t.Fatalf("unexpected: %v", diags)
				}
				if got := cfg.Ablation.PaperResolution; !slices.Equal(got, c.want) {
					t.Errorf("resolution %v, want %v", got, c.want)
				}
				return
			}
			line := strings.Count(head+c.body[:strings.Index(c.body, "paper_resolution")], "\n") + 1
			if len(diags) != 1 || !strings.Contains(diags[0].Summary+"; "+diags[0].Detail, c.err) || diags[0].Subject.Start.Line != line {
				t.Errorf("want one diagnostic at line %d containing %q; got %v", line, c.err, diags)
			}
		})
	}
}

// TestPaperResolutionFromExperiment: the experiment's paper_resolution
// serves every ablation with paper values that declares none of its own,
// as min_agreement does.
func TestPaperResolutionFromExperiment(t *testing.T) {
	t.Parallel()
	src := []byte(`experiment "x" {
  paper_resolution = [0.1, 1]
}
` + testPipeline + `ablation "inherits" {
  vary   = { "stage.mask.top_k" = [1, 2] }
  report = [stage.eval.metrics.avg, stage.eval.metrics.stsb]
  paper  = { "1" = [70, 71], "2" = [72, 71.5] }
}
ablation "own" {
  vary             = { "stage.mask.top_k" = [1, 2] }
  report           = [stage.eval.metrics.avg, stage.eval.metrics.stsb]
  paper            = { "1" = [70, 71], "2" = [72, 71.5] }
  paper_resolution = 0.5
}
ablation "nopaper" {
  vary   = { "stage.mask.top_k" = [1, 2] }
  report = [stage.eval.metrics.avg, stage.eval.metrics.stsb]
}
ablation "onecolumn" {
  vary   = { "stage.mask.top_k" = [1, 2] }
  report = [stage.eval.metrics.avg]
  paper  = { "1" = [70], "2" = [72] }
}
`)
	for name, want := range map[string][]float64{"inherits": {0.1, 1}, "own": {0.5}, "nopaper": nil} {
		cfg := mustLoad(t, "x.hcl", src, Options{Ablation: name})
		if got := cfg.Ablation.PaperResolution; !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	_, diags := NewLoader(testRegistry()).LoadSource("x.hcl", src, Options{Ablation: "onecolumn"})
	if len(diags) != 1 || diags[0].Subject.Start.Line != 2 || !strings.Contains(diags[0].Detail, `ablation "onecolumn" has 1 column(s), the list 2 value(s)`) {
		t.Errorf("a list that does not fit an ablation: want its error at the experiment's line 2; got %v", diags)
	}
}
