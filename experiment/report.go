package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"sort"
	"strings"
	"time"

	"repro/dsl"
	"repro/internal/report"
	"repro/registry"

	"github.com/zclconf/go-cty/cty"
)

// Lookup finds the artifact of a node's output after a run; why says what
// went wrong when ok is false.
type Lookup func(nodeID, output string) (art registry.Artifact, why string, ok bool)

// reportDeviations copies the profile's declared deviations into the
// report ([] when there are none).
func reportDeviations(ds []*dsl.Deviation) report.Deviations {
	out := report.Deviations{}
	for _, d := range ds {
		out = append(out, report.Deviation{Name: d.Name, What: d.What, Paper: d.Paper, Ours: d.Ours, Why: d.Why,
			Evidence: d.Evidence, Tables: d.Tables, StandIns: d.StandIns, Profile: d.Profile, Modules: d.Modules, Source: d.Source})
	}
	return out
}

// Deviations are the loaded profile's declared deviations, as its
// reports list them: the file's, then the profile's own, then those of the
// modules whose stages it runs.
func (x *Experiment) Deviations() report.Deviations {
	return reportDeviations(x.Config.Deviations)
}

// BuildReport turns the experiment's expect blocks (and its ablation, if one
// was expanded) into a report, reading each value through look.
func (x *Experiment) BuildReport(look Lookup) *report.Report {
	cfg := x.Config
	r := &report.Report{
		Experiment: cfg.Experiment.Name, Title: cfg.Experiment.Title, Table: cfg.Experiment.Table,
		File: x.File, Profile: x.Profile, Time: time.Now().UTC(), Seed: x.Seed(),
		Deviations: reportDeviations(cfg.Deviations),
	}
	if len(cfg.Variants) == 1 {
		ids := x.IDMaps[0]
		for _, e := range cfg.Expects {
			if e.Profile != "" && e.Profile != r.Profile {
				continue
			}
			if e.Pending != "" {
				if !x.Targeted {
					r.Cells = append(r.Cells, report.Cell{Name: e.Name, Row: e.Row, Column: e.Column, Paper: e.Paper,
						HasPaper: !math.IsNaN(e.Paper), Pending: e.Pending})
				}
				continue
			}
			if _, ok := ids[e.Value.Stage]; !ok && x.Targeted {
				continue // --target left this cell's stage out
			}
			c := report.Cell{Name: e.Name, Row: e.Row, Column: e.Column, Tolerance: e.Tolerance,
				Source: refString(e.Value), LowerIsBetter: e.LowerIsBetter, Count: e.Count, MaxTolerance: e.MaxTolerance}
			if !math.IsNaN(e.Paper) { // NaN: the paper prints no value for this cell
				c.Paper, c.HasPaper = e.Paper, true
			}
			if c.Row == "" {
				c.Row = e.Name
			}
			if c.Column == "" {
				c.Column = refString(e.Value)
			}
			v, why := metricValue(look, ids[e.Value.Stage], e.Value)
			if why == "" {
				c.Ours, c.HasOurs = v, true
			} else {
				c.Missing = why
			}
			r.Cells = append(r.Cells, c)
		}
		return r
	}
	// Several variants: one row per variant, one column per reported metric
	// (the ablation's report list, else every expect block's value).
	var refs []dsl.Ref
	title := "variants of " + strings.Join(cfg.Varied, ", ")
	var paper map[string][]float64
	if a := cfg.Ablation; a != nil {
		refs = a.Report
		title = a.Title
		if title == "" {
			title = a.Name
		}
		paper = a.Paper
	} else {
		for _, e := range cfg.Expects {
			if e.Pending == "" {
				refs = append(refs, e.Value)
			}
		}
	}
	if x.Targeted {
		kept := refs[:0:0]
		for _, ref := range refs {
			if _, ok := x.IDMaps[0][ref.Stage]; ok {
				kept = append(kept, ref)
			}
		}
		refs = kept
	}
	var cols []string
	for _, ref := range refs {
		cols = append(cols, metricLabel(ref))
	}
	if cfg.Ablation != nil && len(cfg.Ablation.Columns) == len(refs) {
		cols = cfg.Ablation.Columns
	}
	abl := &report.Ablation{Title: title, Columns: cols}
	if cfg.Ablation != nil {
		abl.Name = cfg.Ablation.Name
	}

	for i, v := range cfg.Variants {
		row := report.AblRow{Label: v.Name, Paper: paper[v.Name]}
		if row.Label == "" {
			row.Label = "(default)"
		}
		for _, ref := range refs {
			val, why := metricValue(look, x.IDMaps[i][ref.Stage], ref)
			if why != "" {
				val = math.NaN()
			}
			row.Values = append(row.Values, val)
		}
		abl.Rows = append(abl.Rows, row)
	}
	// How far our grid orders its cells as the paper's does.
	if abl.Agreement = report.AgreementOf(abl); cfg.Ablation != nil {
		abl.Declare(cfg.Ablation.MinAgreement, cfg.Ablation.PaperResolution)
	}
	r.Ablation = abl
	return r
}

// RecordedReport is the table of the recorded baseline bl, as a report:
// each expect block's cell with the baseline's value (missing where the
// baseline has none) and the profile's declared deviations as the file
// declares them now, for showing a recorded profile without running it.
func (x *Experiment) RecordedReport(bl *report.Baseline) *report.Report {
	cfg := x.Config
	r := &report.Report{Experiment: cfg.Experiment.Name, Title: cfg.Experiment.Title, Table: cfg.Experiment.Table,
		File: x.File, Profile: x.Profile, Backend: bl.Backend, Deviations: reportDeviations(cfg.Deviations)}
	if t, err := time.Parse(time.RFC3339, bl.Recorded); err == nil {
		r.Time = t
	}
	if len(bl.Seeds) > 0 {
		s := bl.Seeds[0]
		r.Seed = &s
	}
	for _, e := range cfg.Expects {
		if e.Profile != "" && e.Profile != x.Profile {
			continue
		}
		c := report.Cell{Name: e.Name, Row: e.Row, Column: e.Column, Tolerance: e.Tolerance, Source: refString(e.Value),
			LowerIsBetter: e.LowerIsBetter, Count: e.Count, Pending: e.Pending}
		if !math.IsNaN(e.Paper) {
			c.Paper, c.HasPaper = e.Paper, true
		}
		if c.Row == "" {
			c.Row = e.Name
		}
		if c.Column == "" {
			c.Column = refString(e.Value)
		}
		if bc, ok := bl.Cells[e.Name]; ok && e.Pending == "" && bc.Stale != "" {
			c.Missing = "stale: " + bc.Stale // recorded, but no longer what the code computes
		} else if ok && e.Pending == "" {
			c.Ours, c.HasOurs = bc.Value, true
		} else if e.Pending == "" {
			c.Missing = "not in " + x.BaselinePath()
		}
		r.Cells = append(r.Cells, c)
	}
	return r
}

// Seed is the experiment's `seed` variable as it evaluated (nil when the
// file declares none, or it is not a whole number).
func (x *Experiment) Seed() *int64 {
	v, ok := x.Config.Variables["seed"]
	if !ok || v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return nil
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		return nil
	}
	i, acc := bf.Int64()
	if acc != big.Exact {
		return nil
	}
	return &i
}

// metricValue reads stage.S.OUTPUT.path from a metrics artifact.
func metricValue(look Lookup, nodeID string, ref dsl.Ref) (float64, string) {
	art, why, ok := look(nodeID, ref.Output)
	if !ok {
		return 0, why
	}
	b, err := os.ReadFile(art.Path(registry.FileMetrics))
	if err != nil {
		return 0, fmt.Sprintf("%s: %v", nodeID, err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return 0, fmt.Sprintf("%s: metrics.json: %v", nodeID, err)
	}
	for _, k := range ref.Path {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, fmt.Sprintf("%s.%s: not an object at %q", ref.Stage, ref.Output, k)
		}
		if v, ok = m[k]; !ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return 0, fmt.Sprintf("stage %s wrote no metric %q (has: %s)", ref.Stage, strings.Join(ref.Path, "."), strings.Join(keys, ", "))
		}
	}
	f, ok := v.(float64)
	if !ok {
		return 0, fmt.Sprintf("metric %s.%s is not a number", ref.Stage, strings.Join(ref.Path, "."))
	}
	return f, ""
}

func refString(r dsl.Ref) string {
	s := "stage." + r.Stage + "." + r.Output
	if len(r.Path) > 0 {
		s += "." + strings.Join(r.Path, ".")
	}
	return s
}

// metricLabel is a short column header: "eval.stsb".
func metricLabel(r dsl.Ref) string {
	if len(r.Path) == 0 {
		return r.Stage + "." + r.Output
	}
	return r.Stage + "." + strings.Join(r.Path, ".")
}

// LoadBaseline reads the recorded baseline of the experiment's profile;
// the paper profile has none (it is judged against the paper).
func (x *Experiment) LoadBaseline() (*report.Baseline, error) {
	if x.Profile == "" {
		return nil, nil
	}
	return report.ReadBaseline(x.BaselinePath())
}

// Judge judges a report against the paper (paper profile) or the recorded
// baseline, when there is one.
func (x *Experiment) Judge(rep *report.Report, o report.JudgeOptions) []report.Judged {
	bl, _ := x.LoadBaseline()
	return report.Judge(rep, bl, o)
}
