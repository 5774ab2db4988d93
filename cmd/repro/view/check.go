package view

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"

	"repro/internal/report"
)

// Check is what `repro check` found over one or more experiment files.
type Check struct {
	FormatVersion string      `json:"format_version"`
	Files         []CheckFile `json:"files"`
	Summary       CheckTotal  `json:"summary"`
}

// CheckFile is one experiment file's judgement.
type CheckFile struct {
	File    string `json:"file"`
	Profile string `json:"profile"`
	// Status is "ok", "regressed", "improved" (beyond tolerance upward,
	// not allowed) or "error".
	Status string `json:"status"`
	// Error says why the file could not be judged (no record, no baseline).
	Error string `json:"error,omitempty"`
	// Comparison says how cells were compared with the baseline: "exact:
	// seed 42 on cpu: bit for bit", or why they could not be ("tolerance:
	// baseline recorded on cpu, this run on cuda"); for the paper profile,
	// "against the paper".
	Comparison string       `json:"comparison,omitempty"`
	Cells      []CheckCell  `json:"cells"`
	Ablations  []CheckAbl   `json:"ablations,omitempty"`
	Tally      report.Tally `json:"tally"`
	Notes      []string     `json:"notes,omitempty"` // summary lines of --ablations
	code       report.Class // worst class, for the status
	judged     []report.Judged
}

// CheckCell is one judged cell.
type CheckCell struct {
	Name   string `json:"name"`
	Row    string `json:"row"`
	Column string `json:"column"`
	// Value is ours; Reference the paper's or the baseline's value, named
	// by Against ("paper" or "baseline").
	Value      *float64 `json:"value"`
	Against    string   `json:"against,omitempty"`
	Reference  *float64 `json:"reference"`
	Baseline   *float64 `json:"baseline,omitempty"`
	Paper      *float64 `json:"paper,omitempty"`
	Tolerance  *float64 `json:"tolerance"`
	Difference *float64 `json:"difference"`
	Mode       string   `json:"mode,omitempty"` // "exact", "tolerance", "paper"
	Count      bool     `json:"count,omitempty"`
	Verdict    string   `json:"verdict"`
	Class      string   `json:"class"`         // pass, skipped, improvement, regression, error
	Why        string   `json:"why,omitempty"` // missing or pending: the reason
}

// CheckAbl is one ablation grid judged by its agreement with the paper.
type CheckAbl struct {
	Name      string            `json:"name"`
	Status    string            `json:"status"` // ok, below, error, no paper values
	Error     string            `json:"error,omitempty"`
	Agreement *report.Agreement `json:"agreement,omitempty"`
	Lines     []string          `json:"lines,omitempty"` // the resolution and per-seed lines
}

// CheckTotal sums the files.
type CheckTotal struct {
	Files     int          `json:"files"`
	OK        int          `json:"ok"`
	Regressed int          `json:"regressed"`
	Improved  int          `json:"improved"`
	Errors    int          `json:"errors"`
	Cells     report.Tally `json:"cells"`
}

// NewCheckFile judges rep's cells into a file's result.
func NewCheckFile(file, profile, comparison string, js []report.Judged) CheckFile {
	f := CheckFile{File: file, Profile: profile, Comparison: comparison, Cells: []CheckCell{}, judged: js}
	for _, j := range js {
		f.Tally.Add(j)
		f.Cells = append(f.Cells, cellOf(j))
		if c := j.Class(); c > f.code {
			f.code = c
		}
	}
	f.Status = statusOf(f.code)
	return f
}

// CheckError is a file that could not be judged.
func CheckError(file, profile, msg string) CheckFile {
	return CheckFile{File: file, Profile: profile, Status: "error", Error: msg, Cells: []CheckCell{}, code: report.Error}
}

// AddAblation adds an ablation's judgement (below its minimum: a
// regression; no record: an error).
func (f *CheckFile) AddAblation(a CheckAbl) {
	f.Ablations = append(f.Ablations, a)
	switch a.Status {
	case "below":
		f.raise(report.Regression)
	case "error":
		f.raise(report.Error)
	}
}

func (f *CheckFile) raise(c report.Class) {
	if c > f.code {
		f.code = c
	}
	f.Status = statusOf(f.code)
}

// Class is the file's worst outcome.
func (f CheckFile) Class() report.Class { return f.code }

func statusOf(c report.Class) string {
	switch c {
	case report.Regression:
		return "regressed"
	case report.Improvement:
		return "improved"
	case report.Error:
		return "error"
	}
	return "ok"
}

func cellOf(j report.Judged) CheckCell {
	c := CheckCell{Name: j.Name, Row: j.Row, Column: j.Column, Verdict: string(j.Verdict),
		Class: j.Class().String(), Mode: string(j.Mode), Count: j.Count}
	if j.HasOurs {
		c.Value = num(j.Ours)
	}
	if j.HasPaper {
		c.Paper = num(j.Paper)
	}
	if j.Baseline != nil {
		c.Baseline = num(j.Baseline.Value)
		c.Count = c.Count || j.Baseline.Count
	}
	if j.Mode != "" {
		c.Against = "baseline"
		if j.Mode == report.ModePaper {
			c.Against = "paper"
		}
		c.Reference = num(j.Reference)
		c.Tolerance = num(j.Tol)
		c.Difference = num(j.Diff())
	}
	switch j.Verdict {
	case report.Missing:
		c.Why = j.Missing
	case report.Pending:
		c.Why = j.Pending
	case report.Stale:
		c.Why = "stale: " + j.Baseline.Stale
	case report.NotComparable:
		c.Why = "recorded exact-only: its seeds disagree by more than its value, so no tolerance guards it off the exact path"
	}
	if j.Baseline != nil && j.Baseline.NotExact != "" && j.Mode == report.ModeTolerance {
		c.Why = "not exact: " + j.Baseline.NotExact
	}
	if j.Allowed {
		c.Why = "allowed by --allow-improvement"
	}
	return c
}

// Finish computes the summary.
func (c *Check) Finish() {
	c.FormatVersion = FormatVersion
	c.Summary = CheckTotal{Files: len(c.Files)}
	for _, f := range c.Files {
		c.Summary.Cells.Merge(f.Tally)
		switch f.Status {
		case "ok":
			c.Summary.OK++
		case "regressed":
			c.Summary.Regressed++
		case "improved":
			c.Summary.Improved++
		default:
			c.Summary.Errors++
		}
	}
}

// Class is the worst outcome over the files.
func (c *Check) Class() report.Class {
	worst := report.Pass
	for _, f := range c.Files {
		if f.code > worst {
			worst = f.code
		}
	}
	return worst
}

// Human prints each failing cell on a line of its own ("FILE: row /
// column: verdict: ..."), a line per file that passed, and with several
// files one summary line.
func (c *Check) Human(w io.Writer) {
	for _, f := range c.Files {
		f.human(w)
	}
	if len(c.Files) > 1 {
		s := c.Summary
		parts := []string{fmt.Sprintf("%d ok", s.OK)}
		for _, p := range []struct {
			n    int
			what string
		}{{s.Regressed, "regressed"}, {s.Improved, "improved beyond tolerance"}, {s.Errors, "with errors"}} {
			if p.n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
			}
		}
		fmt.Fprintf(w, "check: %d files: %s; cells: %s\n", s.Files, strings.Join(parts, ", "), s.Cells)
	}
}

func (f CheckFile) human(w io.Writer) {
	if f.Error != "" {
		fmt.Fprintf(w, "%s: ERROR %s\n", f.File, f.Error)
	}
	for _, j := range f.judged {
		if j.Verdict == report.Stale {
			fmt.Fprintf(w, "%s: %s / %s: stale, not judged: %s\n", f.File, j.Row, j.Column, j.Baseline.Stale)
			continue
		}
		if !j.Failing() {
			continue
		}
		switch j.Verdict {
		case report.Missing, report.NoBaseline:
			fmt.Fprintf(w, "%s: %s / %s: %s %s\n", f.File, j.Row, j.Column, j.Verdict, j.Missing)
		default:
			ref := "paper"
			if j.Mode != report.ModePaper {
				ref = "baseline"
			}
			count := j.Count || (j.Baseline != nil && j.Baseline.Count)
			bound := fmt.Sprintf("tolerance %s", fmtNum(j.Tol, false))
			if j.Mode == report.ModeExact {
				bound = "exact"
				if count {
					bound = "exact (a count)"
				}
			}
			fmt.Fprintf(w, "%s: %s / %s: %s: ours %s, %s %s, diff %s, %s\n",
				f.File, j.Row, j.Column, j.Verdict, fmtNum(j.Ours, count), ref, fmtNum(j.Reference, count), fmtSigned(j.Diff(), count), bound)
		}
	}
	for _, a := range f.Ablations {
		switch a.Status {
		case "error":
			fmt.Fprintf(w, "%s: ERROR ablation %s: %s\n", f.File, a.Name, a.Error)
		case "no paper values":
			fmt.Fprintf(w, "%s: ablation %s: no paper values\n", f.File, a.Name)
		default:
			fmt.Fprintf(w, "%s: ablation %s: %s\n", f.File, a.Name, a.Agreement)
			for _, l := range a.Lines {
				fmt.Fprintf(w, "%s:   %s\n", f.File, l)
			}
		}
	}
	for _, n := range f.Notes {
		fmt.Fprintln(w, n)
	}
	if f.Error == "" && len(f.judged) > 0 && f.code <= report.Skipped {
		how := ""
		if f.Comparison != "" {
			how = "; " + f.Comparison
		}
		fmt.Fprintf(w, "%s: ok (%s; profile %s%s)\n", f.File, f.Tally, orPaper(f.Profile), how)
	} else if f.Error == "" && len(f.judged) > 0 {
		fmt.Fprintf(w, "%s: %s (%s; profile %s)\n", f.File, f.Status, f.Tally, orPaper(f.Profile))
	}
}

func orPaper(p string) string {
	if p == "" {
		return "paper"
	}
	return p
}

// fmtNum prints a value as the tables do (two decimals; four significant
// digits for unit-scale statistics; counts whole).
func fmtNum(v float64, count bool) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case count && v == math.Trunc(v) && math.Abs(v) < 1e15:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 1.5:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// fmtSigned prints a difference with a sign and the digits it needs: a
// change of 1e-7 in an exact check must not print as +0.00.
func fmtSigned(v float64, count bool) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v != 0 && math.Abs(v) < 0.005:
		return fmt.Sprintf("%+.3g", v)
	case v >= 0:
		return "+" + fmtNum(v, count)
	}
	return fmtNum(v, count)
}

// JUnit writes the check as JUnit XML: one test suite per file, one test
// case per judged cell (skipped: pending, no paper value, not comparable)
// and per ablation, a failure element for each failing one.
func (c *Check) JUnit(w io.Writer) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type skipped struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Error     *failure `xml:"error,omitempty"`
		Skipped   *skipped `xml:"skipped,omitempty"`
	}
	type suite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Errors   int        `xml:"errors,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type suites struct {
		XMLName xml.Name `xml:"testsuites"`
		Name    string   `xml:"name,attr"`
		Suites  []suite  `xml:"testsuite"`
	}
	out := suites{Name: "repro check"}
	for _, f := range c.Files {
		s := suite{Name: f.File + " (profile " + orPaper(f.Profile) + ")"}
		class := strings.TrimSuffix(f.File, ".hcl") + "." + orPaper(f.Profile)
		if f.Error != "" {
			s.Cases = append(s.Cases, testcase{Name: "load", Classname: class, Error: &failure{Message: f.Error, Type: "error"}})
			s.Errors++
		}
		for _, cell := range f.Cells {
			tc := testcase{Name: cell.Name, Classname: class}
			msg := fmt.Sprintf("%s / %s: %s", cell.Row, cell.Column, cell.Verdict)
			if cell.Value != nil && cell.Reference != nil {
				msg += fmt.Sprintf(": ours %s, %s %s", fmtNum(*cell.Value, cell.Count), cell.Against, fmtNum(*cell.Reference, cell.Count))
			}
			if cell.Why != "" {
				msg += " (" + cell.Why + ")"
			}
			switch cell.Class {
			case "regression", "improvement":
				tc.Failure = &failure{Message: msg, Type: cell.Class, Text: msg}
				s.Failures++
			case "error":
				tc.Error = &failure{Message: msg, Type: "error", Text: msg}
				s.Errors++
			case "skipped":
				tc.Skipped = &skipped{Message: msg}
				s.Skipped++
			}
			s.Cases = append(s.Cases, tc)
		}
		for _, a := range f.Ablations {
			tc := testcase{Name: "ablation " + a.Name, Classname: class}
			switch a.Status {
			case "below":
				tc.Failure = &failure{Message: a.Agreement.String(), Type: "agreement", Text: a.Agreement.String()}
				s.Failures++
			case "error":
				tc.Error = &failure{Message: a.Error, Type: "error", Text: a.Error}
				s.Errors++
			case "no paper values":
				tc.Skipped = &skipped{Message: "no paper values"}
				s.Skipped++
			}
			s.Cases = append(s.Cases, tc)
		}
		s.Tests = len(s.Cases)
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
