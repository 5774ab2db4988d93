// Package figure holds the figure.* stage types: figures drawn from the
// metrics of several stages (internal/plot renders them).
//
// A figure compares models, so it reads several metrics artifacts. The
// stage DSL connects one artifact per named input port, so a figure type
// declares numbered optional ports m1 .. m8 and a `labels` list parameter,
// one label per connected port in port order:
//
//	stage "figure2" {
//	  uses   = "figure.scatter"
//	  m1     = stage.eval.metrics
//	  m2     = stage.eval_prompt_nli.metrics
//	  labels = ["GenSE", "+Prompt"]
//	}
//
// The connected ports must be m1 .. mN without a gap, and len(labels) must
// be N: a label can then never drift to another model's point. Every input
// is part of the stage's cache key, as for any stage.
package figure

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"repro/internal/plot"
	"repro/registry"
)

// Register adds the figure.* stage types to r.
func Register(r *registry.Registry) {
	r.Add(scatterType())
}

// MaxInputs is the number of numbered metrics ports (m1 .. m8).
const MaxInputs = 8

// Files a figure.scatter artifact holds beside report.md.
const (
	FilePoints  = "points.json"
	FileScatter = "scatter.png"
)

// ScatterParams are figure.scatter's parameters.
type ScatterParams struct {
	Labels   []string `cty:"labels" doc:"one name per connected input, in port order (m1, m2, ...)"`
	X        string   `cty:"x" doc:"metric on the x axis (a key of metrics.json; a.b reads a nested key)"`
	Y        string   `cty:"y" doc:"metric on the y axis"`
	Annotate string   `cty:"annotate" doc:"a metric shown in each point's name, as Figure 2 colours its dots by STS-B test performance (\"\": none)"`
	Title    string   `cty:"title" doc:"figure title"`
	XLabel   string   `cty:"x_label" doc:"x-axis label (\"\": the x metric)"`
	YLabel   string   `cty:"y_label" doc:"y-axis label (\"\": the y metric)"`
	File     string   `cty:"file" doc:"name of the PNG inside the artifact (copied beside the run's report)"`
}

// Validate checks the parameters at load time.
func (p *ScatterParams) Validate() error {
	var c registry.Checks
	c.Add(len(p.Labels) > 0, "labels", "empty: name each connected input (m1, m2, ...) in order")
	c.Add(len(p.Labels) <= MaxInputs, "labels", "%d labels, but a figure takes at most %d inputs (m1 .. m%d)", len(p.Labels), MaxInputs, MaxInputs)
	seen := map[string]bool{}
	for i, l := range p.Labels {
		c.Add(strings.TrimSpace(l) != "", "labels", "label %d is empty", i+1)
		c.Add(!seen[l], "labels", "%q appears twice", l)
		seen[l] = true
	}
	c.Add(p.X != "", "x", "empty: name a metric")
	c.Add(p.Y != "", "y", "empty: name a metric")
	c.Add(strings.HasSuffix(p.File, ".png") && !strings.ContainsAny(p.File, `/\`), "file", "%q must be a file name ending in .png", p.File)
	return c.Result()
}

func metricsPorts() []registry.Port {
	ps := make([]registry.Port, MaxInputs)
	for i := range ps {
		ps[i] = registry.Port{Name: fmt.Sprintf("m%d", i+1), Kind: registry.KindMetrics, Optional: true,
			Doc: fmt.Sprintf("metrics of the model labels[%d] names", i)}
	}
	return ps
}

func scatterType() *registry.StageType {
	return &registry.StageType{
		Name:    "figure.scatter",
		Version: 1,
		Doc: `A scatter plot of two metrics of several models, one point per connected metrics input m1 .. m8
(without gaps), named by labels in port order: GenSE's Figure 2 plots alignment against uniformity
(evaluate.sts with align_uniform = true) of each encoder. Writes scatter.png (or file), points.json
(every point's label, x, y and annotation) and report.md.`,
		Params:  ScatterParams{X: "alignment", Y: "uniformity", Title: "Alignment and uniformity", File: FileScatter},
		Inputs:  metricsPorts(),
		Outputs: []registry.Port{{Name: "figure", Kind: registry.KindReport, Doc: "report.md, the PNG, points.json"}},
		Run:     runScatter,
	}
}

// PointRow is one point of points.json.
type PointRow struct {
	Label    string   `json:"label"`
	X        float64  `json:"x"`
	Y        float64  `json:"y"`
	Annotate *float64 `json:"annotate,omitempty"`
}

// connected returns the connected ports m1 .. mN, refusing a gap.
func connected(env *registry.Env) ([]registry.Artifact, error) {
	var out []registry.Artifact
	gap := 0
	for i := 1; i <= MaxInputs; i++ {
		a, ok := env.Inputs[fmt.Sprintf("m%d", i)]
		switch {
		case !ok && gap == 0:
			gap = i
		case ok && gap != 0:
			return nil, fmt.Errorf("input m%d is connected but m%d is not: connect m1 .. mN without a gap", i, gap)
		case ok:
			out = append(out, a)
		}
	}
	return out, nil
}

func runScatter(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*ScatterParams)
	if err := p.Validate(); err != nil {
		return err
	}
	ins, err := connected(env)
	if err != nil {
		return err
	}
	if len(ins) == 0 {
		return fmt.Errorf("no points to plot: connect m1 = stage.NAME.metrics (and m2, ... for more models)")
	}
	if len(ins) != len(p.Labels) {
		return fmt.Errorf("labels: %d labels for %d connected inputs (m1 .. m%d); give one label per input, in port order", len(p.Labels), len(ins), len(ins))
	}
	var rowsOut []PointRow
	var pts []plot.Point
	for i, a := range ins {
		x, err := registry.MetricAt(a, strings.Split(p.X, "."))
		if err != nil {
			return fmt.Errorf("m%d (%s): %w", i+1, p.Labels[i], err)
		}
		y, err := registry.MetricAt(a, strings.Split(p.Y, "."))
		if err != nil {
			return fmt.Errorf("m%d (%s): %w", i+1, p.Labels[i], err)
		}
		r := PointRow{Label: p.Labels[i], X: x, Y: y}
		name := p.Labels[i]
		if p.Annotate != "" {
			v, err := registry.MetricAt(a, strings.Split(p.Annotate, "."))
			if err != nil {
				return fmt.Errorf("m%d (%s): %w", i+1, p.Labels[i], err)
			}
			r.Annotate = &v
			name = fmt.Sprintf("%s (%s %.1f)", name, p.Annotate, v)
		}
		if math.IsNaN(x) || math.IsNaN(y) {
			return fmt.Errorf("m%d (%s): %s = %v, %s = %v: not a point", i+1, p.Labels[i], p.X, x, p.Y, y)
		}
		rowsOut = append(rowsOut, r)
		pts = append(pts, plot.Point{Name: name, X: x, Y: y})
	}
	dir := env.Output("figure")
	xl, yl := p.XLabel, p.YLabel
	if xl == "" {
		xl = p.X
	}
	if yl == "" {
		yl = p.Y
	}
	if err := plot.Scatter(filepath.Join(dir, p.File), p.Title, xl, yl, pts); err != nil {
		return err
	}
	if err := registry.WriteJSON(filepath.Join(dir, FilePoints), rowsOut); err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# %s\n\n![%s](%s)\n\n| model | %s | %s |", p.Title, p.Title, p.File, p.X, p.Y)
	if p.Annotate != "" {
		fmt.Fprintf(&md, " %s |", p.Annotate)
	}
	md.WriteString("\n|---|---|---|")
	if p.Annotate != "" {
		md.WriteString("---|")
	}
	md.WriteString("\n")
	for _, r := range rowsOut {
		fmt.Fprintf(&md, "| %s | %.4f | %.4f |", r.Label, r.X, r.Y)
		if r.Annotate != nil {
			fmt.Fprintf(&md, " %.2f |", *r.Annotate)
		}
		md.WriteString("\n")
	}
	env.Logger().Info("scatter", "points", len(rowsOut), "file", p.File)
	return os.WriteFile(filepath.Join(dir, registry.FileReport), []byte(md.String()), 0o644)
}
