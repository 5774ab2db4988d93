// Package report builds and renders an experiment's table -- every expected
// cell with the paper's value, ours, the difference and a verdict -- and the
// ablation grids, and judges a run against the paper (paper profile) or
// against a recorded baseline (other profiles).
//
// The verdict rules live in judge.go, in one place, so `repro run`,
// `repro results` and `repro check` agree.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// Cell is one cell of a paper's table.
type Cell struct {
	Name      string  `json:"name"`
	Row       string  `json:"row"`
	Column    string  `json:"column"`
	Paper     float64 `json:"paper"`
	HasPaper  bool    `json:"has_paper"`
	Tolerance float64 `json:"tolerance"`
	// LowerIsBetter flips the direction of "regressed" (uniformity, say).
	LowerIsBetter bool    `json:"lower_is_better,omitempty"`
	Ours          float64 `json:"ours"`
	HasOurs       bool    `json:"has_ours"`
	Missing       string  `json:"missing,omitempty"` // why there is no value
	// Source names where the value came from: "stage.eval.metrics.avg".
	Source string `json:"source,omitempty"`
	// Pending says why we give no value for this cell (the paper's own
	// reference row, or one waiting on other work); it is never judged.
	Pending string `json:"pending,omitempty"`
	// Count marks a count (kept triplets, clusters, pairs, tokens):
	// recorded with tolerance 0 and checked exactly against a baseline on
	// every backend (`count = true` in the expect block).
	Count bool `json:"count,omitempty"`
	// MaxTolerance is the widest tolerance a baseline may record for the
	// cell (`max_tolerance`; 0: no ceiling beyond the value itself).
	MaxTolerance float64 `json:"max_tolerance,omitempty"`
}

// Ablation is a rendered ablation grid: one row per variant, one column per
// reported metric.
type Ablation struct {
	Name    string   `json:"name"`
	Title   string   `json:"title"`
	Columns []string `json:"columns"`
	Rows    []AblRow `json:"rows"`
	// Agreement with the paper's orderings (agreement.go); nil when no
	// row has paper values.
	Agreement *Agreement `json:"agreement,omitempty"`
	// Seeds, for a grid combined over seeds (seeds.go): its values are the
	// means, and SeedAgreement holds each seed's own agreement, in order.
	Seeds         []int64      `json:"seeds,omitempty"`
	SeedAgreement []*Agreement `json:"seed_agreement,omitempty"`
	Stable        *Stable      `json:"stable,omitempty"`
}

// AblRow is one variant of an ablation.
type AblRow struct {
	Label  string    `json:"label"`
	Values []float64 `json:"values"` // NaN where missing
	Paper  []float64 `json:"paper"`  // the paper's values, aligned with Values; nil or NaN where it has none
	// SD is the standard deviation over the seeds of a combined grid (nil
	// for one run's grid).
	SD []float64 `json:"sd,omitempty"`
}

// MarshalJSON writes NaN as null.
func (r AblRow) MarshalJSON() ([]byte, error) {
	vs := nanToNull(r.Values)
	return json.Marshal(struct {
		Label  string     `json:"label"`
		Values []*float64 `json:"values"`
		Paper  []*float64 `json:"paper,omitempty"`
		SD     []*float64 `json:"sd,omitempty"`
	}{r.Label, vs, nanToNull(r.Paper), nanToNull(r.SD)})
}

// UnmarshalJSON reads null as NaN.
func (r *AblRow) UnmarshalJSON(b []byte) error {
	var v struct {
		Label  string     `json:"label"`
		Values []*float64 `json:"values"`
		Paper  []*float64 `json:"paper"`
		SD     []*float64 `json:"sd"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	r.Label = v.Label
	r.Values = nullToNaN(v.Values)
	if v.Paper != nil {
		r.Paper = nullToNaN(v.Paper)
	}
	if v.SD != nil {
		r.SD = nullToNaN(v.SD)
	}
	return nil
}

func nanToNull(xs []float64) []*float64 {
	if xs == nil {
		return nil
	}
	out := make([]*float64, len(xs))
	for i := range xs {
		if !math.IsNaN(xs[i]) {
			v := xs[i]
			out[i] = &v
		}
	}
	return out
}

func nullToNaN(ps []*float64) []float64 {
	out := make([]float64, len(ps))
	for i, p := range ps {
		if p == nil {
			out[i] = math.NaN()
		} else {
			out[i] = *p
		}
	}
	return out
}

// cellText is "ours (paper)" when the paper has a value, else "ours";
// ours is "mean±sd" in a grid combined over seeds.
func cellText(r AblRow, i int) string {
	ours := num(r.Values[i], true)
	if i < len(r.SD) && !math.IsNaN(r.SD[i]) {
		if math.Abs(r.Values[i]) < 1.5 { // as num does
			ours += fmt.Sprintf("±%.3f", r.SD[i])
		} else {
			ours += fmt.Sprintf("±%.2f", r.SD[i])
		}
	}
	if i < len(r.Paper) && !math.IsNaN(r.Paper[i]) {
		return fmt.Sprintf("%s (%s)", ours, num(r.Paper[i], true))
	}
	return ours
}

// ablationTitle names the grid, and the seeds a combined one is the mean of.
func ablationTitle(a *Ablation) string {
	t := a.Name
	if a.Title != "" {
		t = a.Title
	}
	if len(a.Seeds) > 0 {
		t += fmt.Sprintf(" (mean over seeds %s)", seedList(a.Seeds))
	}
	return t
}

// AgreementLines are what follows the agreement line: the count against
// the paper's resolution when one is declared ("beyond the paper's
// resolution (0.1): ..."), then a combined grid's per-seed agreements, one
// line each ("seed 42 alone: 33 of 44 orderings agree ...").
func (a *Ablation) AgreementLines() []string {
	var ls []string
	if a.Agreement != nil && a.Agreement.Resolved != nil {
		ls = append(ls, a.Agreement.Resolved.String())
	}
	for i, sa := range a.SeedAgreement {
		if i < len(a.Seeds) && sa != nil {
			one := *sa
			one.Min = 0 // the gate applies to the mean
			ls = append(ls, fmt.Sprintf("seed %d alone: %s", a.Seeds[i], &one))
		}
	}
	if a.Stable != nil && len(a.SeedAgreement) > 0 {
		ls = append(ls, a.Stable.String())
	}
	return ls
}

// Report is what a run produces and `repro results` shows.
type Report struct {
	Experiment string    `json:"experiment"`
	Title      string    `json:"title"`
	Table      string    `json:"table"`
	File       string    `json:"file"`
	Profile    string    `json:"profile"`
	Time       time.Time `json:"time"`
	Cells      []Cell    `json:"cells"`
	Ablation   *Ablation `json:"ablation,omitempty"`
	// Notes are lines about how the values came about that no cell holds:
	// where a repeat block's `until` stopped and which round it selected.
	Notes []string `json:"notes,omitempty"`
	// Backend is the tensor backend family the run used ("cpu", "openblas",
	// "cuda"); "" in reports saved before it was recorded. Seed is the
	// experiment's `seed` variable (nil when it declares none), AnyBackend
	// whether tensor stages could be served from another backend's results.
	// Together they decide whether a baseline is checked bit for bit.
	Backend    string `json:"backend,omitempty"`
	Seed       *int64 `json:"seed,omitempty"`
	AnyBackend bool   `json:"any_backend,omitempty"`
	// Deviations are the profile's declared differences from the paper
	// (deviation.go), printed under the table; [] when there are none.
	Deviations Deviations `json:"deviations"`
}

// Baseline is a recorded result of one profile, under results/.
type Baseline struct {
	Experiment string  `json:"experiment"`
	Profile    string  `json:"profile"`
	Recorded   string  `json:"recorded"`
	Seeds      []int64 `json:"seeds,omitempty"`
	// Backend is the backend family the runs used; the recorded value is
	// the first seed's on it.
	Backend string                  `json:"backend"`
	Note    string                  `json:"note,omitempty"`
	Cells   map[string]BaselineCell `json:"cells"`
}

// BaselineCell is the recorded value of one cell and how far a later run may
// drift from it. Tolerance comes from the spread over seeds.
type BaselineCell struct {
	Value      float64   `json:"value"`
	Tolerance  float64   `json:"tolerance"`
	SeedValues []float64 `json:"seed_values,omitempty"`
	Std        float64   `json:"std,omitempty"`
	// Count: checked exactly on every backend (tolerance 0).
	Count bool `json:"count,omitempty"`
	// ExactOnly marks a cell whose seeds disagree by more than its value
	// (recorded with --exact-only): it is checked bit for bit where that
	// holds and reported as not comparable elsewhere, never as within a
	// tolerance that could not catch anything.
	ExactOnly bool `json:"exact_only,omitempty"`
	// NotExact, when set, says why the recorded value cannot be expected
	// bit for bit even on the recorded seed and backend (it was recorded
	// by code since made deterministic, say): check applies the tolerance
	// and says so. repro baseline never writes it; re-recording clears it.
	NotExact string `json:"not_exact,omitempty"`
	// Stale, when set, says why the recorded value no longer describes
	// what the code computes (an input it depends on changed and the
	// profile could not be re-run yet): check reports the cell as stale,
	// counted apart, and does not judge it. repro baseline never writes
	// it; re-recording clears it.
	Stale string `json:"stale,omitempty"`
}

// ReadBaseline reads a baseline file.
func ReadBaseline(path string) (*Baseline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var bl Baseline
	if err := json.Unmarshal(b, &bl); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &bl, nil
}

// Write writes the baseline as indented JSON.
func (b *Baseline) Write(path string) error {
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

func num(v float64, ok bool) string {
	if !ok || math.IsNaN(v) {
		return "-"
	}
	if math.Abs(v) < 1.5 { // unit-scale statistics: cosines, alignment
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func signed(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%+.2f", v)
}

// WriteText prints the judged table for a terminal or a log, one line per
// cell with its difference, tolerance and verdict.
func WriteText(w io.Writer, r *Report, js []Judged) {
	writeHeader(w, r)
	writeCells(w, r, js)
	writeTail(w, r)
}

// WriteTable prints the table paper-shaped (WriteGrid) within width
// columns, a line counting the verdicts, then what WriteText prints after
// its cells: the per-cell detail is WriteText's (`--verbose`).
func WriteTable(w io.Writer, r *Report, js []Judged, width int) {
	writeHeader(w, r)
	WriteGrid(w, r, width)
	if v := Verdicts(js); v != "" {
		fmt.Fprintf(w, "verdicts: %s\n", v)
	}
	writeTail(w, r)
}

func writeHeader(w io.Writer, r *Report) {
	title := r.Experiment
	if r.Table != "" {
		title += ": " + r.Table
	}
	prof := r.Profile
	if prof == "" {
		prof = "paper"
	}
	fmt.Fprintf(w, "\n%s (profile %s)\n", title, prof)
}

// writeTail is what follows the cells: the ablation grid and the notes.
func writeTail(w io.Writer, r *Report) {
	if r.Ablation != nil {
		WriteAblationText(w, r.Ablation)
	}
	writeNotes(w, r.Notes)
	writeDeviationsText(w, r.Deviations)
}

func writeCells(w io.Writer, r *Report, js []Judged) {
	if len(js) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		if r.Profile == "" {
			fmt.Fprintln(tw, "row\tcolumn\tpaper\tours\tdiff\ttol\tverdict")
		} else {
			fmt.Fprintln(tw, "row\tcolumn\tpaper\tours\tdiff\tbaseline\ttol\tverdict")
		}
		for _, j := range js {
			diff := math.NaN()
			if j.HasOurs && j.HasPaper {
				diff = j.Ours - j.Paper
			}
			if r.Profile == "" {
				verdict := verdictText(j)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.2f\t%s\n", j.Row, j.Column,
					num(j.Paper, j.HasPaper), num(j.Ours, j.HasOurs), signed(diff), j.Tolerance, verdict)
				continue
			}
			base, tol := "-", "-"
			if j.Baseline != nil {
				base = fmt.Sprintf("%.2f", j.Baseline.Value)
				tol = fmt.Sprintf("%.2f", j.Baseline.Tolerance)
			}
			if j.Mode == ModeExact {
				tol = "exact"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Row, j.Column,
				num(j.Paper, j.HasPaper), num(j.Ours, j.HasOurs), signed(diff), base, tol, verdictText(j))
		}
		tw.Flush()
	}
}

func writeNotes(w io.Writer, notes []string) {
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
}

func verdictText(j Judged) string {
	if j.Verdict == Missing && j.Missing != "" {
		return "missing: " + j.Missing
	}
	if j.Verdict == Pending {
		return "pending: " + j.Pending
	}
	if j.Allowed {
		return string(j.Verdict) + " (allowed)"
	}
	return string(j.Verdict)
}

// WriteAblationText prints an ablation grid.
func WriteAblationText(w io.Writer, a *Ablation) {
	fmt.Fprintf(w, "\nablation %s\n", ablationTitle(a))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "variant\t%s\n", strings.Join(a.Columns, "\t"))
	hasPaper := false
	for _, r := range a.Rows {
		vs := make([]string, len(r.Values))
		for i := range r.Values {
			vs[i] = cellText(r, i)
		}
		hasPaper = hasPaper || r.Paper != nil
		fmt.Fprintf(tw, "%s\t%s\n", r.Label, strings.Join(vs, "\t"))
	}
	tw.Flush()
	ours := "ours"
	if len(a.Seeds) > 0 {
		ours = "ours: mean±sd over the seeds"
	}
	if hasPaper {
		fmt.Fprintf(w, "cells: %s (paper)\n", ours)
	} else if len(a.Seeds) > 0 {
		fmt.Fprintf(w, "cells: %s\n", ours)
	}
	if a.Agreement != nil {
		fmt.Fprintf(w, "agreement: %s\n", a.Agreement)
	}
	for _, l := range a.AgreementLines() {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

// WriteMarkdown writes the table as a paper-shaped grid (rows x columns,
// each cell "ours (paper)") followed by the ablation, for README files and
// report artifacts.
func WriteMarkdown(w io.Writer, r *Report) {
	// One markdown table per group of consecutive rows with the same
	// columns (Table 1's STS columns, Table 3's reranking columns, ...),
	// rather than one wide table of mostly empty cells.
	g := groupCells(r)
	for i, b := range g.blocks {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "| %s | %s |\n", "", strings.Join(b.cols, " | "))
		fmt.Fprintf(w, "|---|%s\n", strings.Repeat("---|", len(b.cols)))
		for _, rw := range b.rows {
			vals := make([]string, len(b.cols))
			for k, cl := range b.cols {
				c := g.cell[[2]string{rw, cl}]
				if c.HasPaper {
					vals[k] = fmt.Sprintf("%s (%s)", num(c.Ours, c.HasOurs), num(c.Paper, true))
				} else {
					vals[k] = num(c.Ours, c.HasOurs)
				}
			}
			fmt.Fprintf(w, "| %s | %s |\n", rw, strings.Join(vals, " | "))
		}
	}
	if len(g.blocks) > 0 {
		fmt.Fprintln(w, "\nEach cell: ours (paper).")
	}
	if a := r.Ablation; a != nil {
		fmt.Fprintf(w, "\n**%s**\n\n| variant | %s |\n|---|%s\n", ablationTitle(a), strings.Join(a.Columns, " | "), strings.Repeat("---|", len(a.Columns)))
		for _, rw := range a.Rows {
			vs := make([]string, len(rw.Values))
			for i := range rw.Values {
				vs[i] = cellText(rw, i)
			}
			fmt.Fprintf(w, "| %s | %s |\n", rw.Label, strings.Join(vs, " | "))
		}
		if a.Agreement != nil {
			fmt.Fprintf(w, "\nAgreement: %s.\n", a.Agreement)
		}
		for _, l := range a.AgreementLines() {
			fmt.Fprintf(w, "\n%s.\n", strings.ToUpper(l[:1])+l[1:])
		}
	}
	writeNotes(w, r.Notes)
	writeDeviationsMarkdown(w, r.Deviations)
}
