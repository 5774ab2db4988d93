package figure

import (
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/plot"
	"repro/registry"
)

func metrics(t *testing.T, m map[string]float64) registry.Artifact {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, registry.FileMetrics), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Kind: registry.KindMetrics, Dir: dir, Digest: dir}
}

// runScatterWith decodes labels and extra parameters through the type's
// own schema and runs it on the given inputs.
func runScatterWith(t *testing.T, in map[string]registry.Artifact, labels []string, set map[string]cty.Value) (string, error) {
	t.Helper()
	r := registry.New()
	Register(r)
	st, _ := r.Lookup("figure.scatter")
	ps, err := st.ParamSchema()
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]cty.Value{}
	for _, p := range ps {
		attrs[p.Name] = p.Default
		if v, ok := set[p.Name]; ok {
			attrs[p.Name] = v
		}
	}
	ls := []cty.Value{}
	for _, l := range labels {
		ls = append(ls, cty.StringVal(l))
	}
	if len(ls) == 0 {
		attrs["labels"] = cty.ListValEmpty(cty.String)
	} else {
		attrs["labels"] = cty.ListVal(ls)
	}
	params, err := st.DecodeParams(cty.ObjectVal(attrs))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	return out, st.Call(context.Background(), &registry.Env{Params: params, Inputs: in, Outputs: map[string]string{"figure": out}})
}

func TestScatter(t *testing.T) {
	in := map[string]registry.Artifact{
		"m1": metrics(t, map[string]float64{"alignment": 0.31, "uniformity": -2.9, "stsb": 67.5}),
		"m2": metrics(t, map[string]float64{"alignment": 0.27, "uniformity": -2.6, "stsb": 66.1}),
		"m3": metrics(t, map[string]float64{"alignment": 0.22, "uniformity": -2.2, "stsb": 60}),
	}
	out, err := runScatterWith(t, in, []string{"GenSE", "+Prompt", "ST5-EncDec"}, map[string]cty.Value{"annotate": cty.StringVal("stsb")})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, FileScatter))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("scatter.png: %v", err)
	}
	if b := img.Bounds(); b.Dx() != plot.WidthInches*plot.DPI || b.Dy() != plot.HeightInches*plot.DPI {
		t.Errorf("size %v", b)
	}
	var pts []PointRow
	b, err := os.ReadFile(filepath.Join(out, FilePoints))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pts); err != nil {
		t.Fatal(err)
	}
	if len(pts) != 3 || pts[0].Label != "GenSE" || pts[0].X != 0.31 || pts[0].Y != -2.9 || *pts[0].Annotate != 67.5 ||
		pts[2].Label != "ST5-EncDec" || pts[2].X != 0.22 || pts[2].Y != -2.2 {
		t.Errorf("points %+v", pts)
	}
	md, err := os.ReadFile(filepath.Join(out, registry.FileReport))
	if err != nil || !strings.Contains(string(md), "| +Prompt | 0.2700 | -2.6000 | 66.10 |") || !strings.Contains(string(md), "](scatter.png)") {
		t.Errorf("report.md: %v\n%s", err, md)
	}
}

func TestScatterBadInput(t *testing.T) {
	m := func() registry.Artifact { return metrics(t, map[string]float64{"alignment": 0.3, "uniformity": -2}) }
	for _, c := range []struct {
		in     map[string]registry.Artifact
		labels []string
		set    map[string]cty.Value
		want   string
	}{
		{map[string]registry.Artifact{}, []string{"a"}, nil, "no points to plot"},
		{map[string]registry.Artifact{"m1": m()}, nil, nil, "labels: empty"},
		{map[string]registry.Artifact{"m1": m(), "m2": m()}, []string{"a"}, nil, "1 labels for 2 connected inputs"},
		{map[string]registry.Artifact{"m1": m(), "m3": m()}, []string{"a", "b"}, nil, "m3 is connected but m2 is not"},
		{map[string]registry.Artifact{"m1": m(), "m2": m()}, []string{"a", "a"}, nil, `"a" appears twice`},
		{map[string]registry.Artifact{"m1": m()}, []string{"a"}, map[string]cty.Value{"y": cty.StringVal("uniform")}, `no metric "uniform" (has: alignment, uniformity)`},
		{map[string]registry.Artifact{"m1": m()}, []string{"a"}, map[string]cty.Value{"file": cty.StringVal("fig.svg")}, "must be a file name ending in .png"},
	} {
		_, err := runScatterWith(t, c.in, c.labels, c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d inputs, labels %q: %v, want %q", len(c.in), c.labels, err, c.want)
		}
	}
}

func TestPorts(t *testing.T) {
	ps := scatterType().Inputs
	if len(ps) != MaxInputs || ps[0].Name != "m1" || ps[MaxInputs-1].Name != fmt.Sprintf("m%d", MaxInputs) || !ps[3].Optional {
		t.Errorf("ports %+v", ps)
	}
}
