package main

import (
	"math"
	"strings"
	"time"

	"repro/dsl"
	"repro/internal/report"
)

// lowerIsBetter names the metrics where a smaller number is the better one.
var lowerIsBetter = map[string]bool{"alignment": true, "uniformity": true}

// buildReport turns the experiment's expect blocks (and ablation, if one was
// expanded) into a report, reading each value through look.
func buildReport(ex *experiment, look outputLookup) *report.Report {
	cfg := ex.cfg
	r := &report.Report{
		Experiment: cfg.Experiment.Name, Title: cfg.Experiment.Title, Table: cfg.Experiment.Table,
		File: ex.file, Profile: profileOf(ex), Time: time.Now().UTC(),
	}
	if len(cfg.Variants) == 1 {
		ids := ex.idMaps[0]
		for _, e := range cfg.Expects {
			if e.Profile != "" && e.Profile != r.Profile {
				continue
			}
			if _, ok := ids[e.Value.Stage]; !ok && ex.targeted {
				continue // --target left this cell's stage out
			}
			c := report.Cell{Name: e.Name, Row: e.Row, Column: e.Column, Tolerance: e.Tolerance, Source: refString(e.Value)}
			if !math.IsNaN(e.Paper) { // NaN: the paper prints no value for this cell
				c.Paper, c.HasPaper = e.Paper, true
			}
			c.LowerIsBetter = e.LowerIsBetter
			if len(e.Value.Path) > 0 && lowerIsBetter[e.Value.Path[len(e.Value.Path)-1]] {
				c.LowerIsBetter = true
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
	var cols []string
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
			refs = append(refs, e.Value)
		}
	}
	if ex.targeted {
		kept := refs[:0:0]
		for _, ref := range refs {
			if _, ok := ex.idMaps[0][ref.Stage]; ok {
				kept = append(kept, ref)
			}
		}
		refs = kept
	}
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
			val, why := metricValue(look, ex.idMaps[i][ref.Stage], ref)
			if why != "" {
				val = math.NaN()
			}
			row.Values = append(row.Values, val)
		}
		abl.Rows = append(abl.Rows, row)
	}
	if abl.Agreement = report.AgreementOf(abl); abl.Agreement != nil && cfg.Ablation != nil {
		abl.Agreement.Min = cfg.Ablation.MinAgreement
	}
	r.Ablation = abl
	return r
}

func profileOf(ex *experiment) string {
	if i := strings.Index(ex.scope, "#profile="); i >= 0 {
		p := ex.scope[i+len("#profile="):]
		if j := strings.IndexByte(p, '#'); j >= 0 {
			p = p[:j]
		}
		return p
	}
	return ""
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
