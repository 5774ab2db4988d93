package experiment

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"repro/internal/plot"
	"repro/internal/report"
	"repro/runner"

	"github.com/zclconf/go-cty/cty"
)

// writeFigures writes the ablation's declared figure (the first reported
// column against the numeric varied axis, ours and the paper's where given)
// and copies every PNG figure a stage of this run produced into dir, next to
// the markdown report. It returns the files written. Every file is named
// after the report (x.Name(): experiment, profile, ablation and a --set
// variant's digest), so a variant's run or another profile's never
// overwrites a figure another report links.
func (x *Experiment) writeFigures(dir string, rep *report.Report, res *runner.Result) ([]string, error) {
	var files []string
	if a := x.Config.Ablation; a != nil && a.Figure != nil && rep.Ablation != nil {
		f := a.Figure
		ours := plot.Series{Name: "ours"}
		paper := plot.Series{Name: "paper"}
		for i, v := range x.Config.Variants {
			x, ok := numeric(v.Label[f.Axis])
			if !ok || i >= len(rep.Ablation.Rows) {
				continue
			}
			row := rep.Ablation.Rows[i]
			y := math.NaN()
			if len(row.Values) > 0 {
				y = row.Values[0]
			}
			ours.X, ours.Y = append(ours.X, x), append(ours.Y, y)
			if len(row.Paper) > 0 && !math.IsNaN(row.Paper[0]) {
				paper.X, paper.Y = append(paper.X, x), append(paper.Y, row.Paper[0])
			}
		}
		series := []plot.Series{ours}
		if len(paper.X) > 0 {
			series = append(series, paper)
		}
		path := filepath.Join(dir, x.Name()+"."+f.File)
		title := f.Title
		if title == "" {
			title = rep.Ablation.Title
		}
		if err := plot.Line(path, title, f.XLabel, f.YLabel, series); err != nil {
			return files, fmt.Errorf("figure %s: %v", f.File, err)
		}
		files = append(files, path)
	}
	for _, n := range res.Nodes {
		for out, art := range n.Outputs {
			entries, err := os.ReadDir(art.Dir)
			if err != nil {
				continue
			}
			for _, e := range entries {
				if e.IsDir() || !strings.HasSuffix(e.Name(), ".png") {
					continue
				}
				dst := filepath.Join(dir, fmt.Sprintf("%s.%s.%s.%s", x.Name(), safeName(n.ID), out, e.Name()))
				if err := copyFile(filepath.Join(art.Dir, e.Name()), dst); err != nil {
					return files, err
				}
				files = append(files, dst)
			}
		}
	}
	return files, nil
}

func numeric(v cty.Value) (float64, bool) {
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return 0, false
	}
	f, _ := v.AsBigFloat().Float64()
	return f, true
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
