package view

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"repro/runner"
)

// Plan is what `repro plan` found: each stage's action and reasons, the
// repeat blocks' decisions, and whether run would refuse to start.
type Plan struct {
	FormatVersion string      `json:"format_version"`
	File          string      `json:"file"`
	Profile       string      `json:"profile"`
	Backend       string      `json:"backend"`
	Stages        []PlanStage `json:"stages"`
	Summary       PlanSummary `json:"summary"`
	Loops         []string    `json:"loops,omitempty"`
	// Refused is set when run would refuse to start (nothing would run):
	// each stage that cannot work as declared, with why.
	Refused *PlanRefusal `json:"refused,omitempty"`
	// Requests are the language-model requests the run would send.
	Requests []PlanRequest `json:"requests,omitempty"`
}

// PlanStage is one stage's entry.
type PlanStage struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"`
	Key     string       `json:"key,omitempty"` // "" while an input's stage must run first
	Action  string       `json:"action"`        // "cached", "run", "not needed", "mirror"
	Reasons []PlanReason `json:"reasons,omitempty"`
	// Cost is the estimated arithmetic of a training stage that will run.
	Cost   *PlanCost `json:"cost,omitempty"`
	status runner.PlanStatus
}

// PlanCost is a stage's estimated arithmetic and, where earlier runs were
// measured, time.
type PlanCost struct {
	FLOPs          *float64 `json:"flops"` // null: the updates are unknown
	FLOPsPerUpdate float64  `json:"flops_per_update"`
	Updates        int      `json:"updates"` // 0: unknown
	// FLOPsPerSecond is the throughput of the store's earlier runs on the
	// same backend (MeasuredRuns of them); Seconds the time at it.
	FLOPsPerSecond float64  `json:"measured_flops_per_second,omitempty"`
	MeasuredRuns   int      `json:"measured_runs,omitempty"`
	Seconds        *float64 `json:"seconds,omitempty"`
	Text           string   `json:"text"` // as the human output words it
	Note           string   `json:"note,omitempty"`
}

func newPlanCost(c *runner.CostEstimate) *PlanCost {
	pc := &PlanCost{FLOPsPerUpdate: c.FLOPsPerUpdate, Updates: c.Updates, FLOPsPerSecond: c.FLOPsPerSecond,
		MeasuredRuns: c.MeasuredRuns, Note: c.Note}
	if c.Updates > 0 {
		pc.FLOPs = num(c.FLOPs())
	}
	if s := c.Seconds(); s > 0 {
		pc.Seconds = num(s)
	}
	pc.Text = pc.text()
	return pc
}

// text words the estimate: "~3.2 PFLOP (5000 updates x 640 GFLOP), ~2 h
// at 45 GFLOP/s measured (3 runs)"; an unknown number of updates gives the
// cost of one.
func (c *PlanCost) text() string {
	switch {
	case c.FLOPsPerUpdate <= 0:
		return "unknown"
	case c.FLOPs == nil:
		return fmt.Sprintf("~%s per update, updates unknown", si(c.FLOPsPerUpdate, "FLOP"))
	}
	s := fmt.Sprintf("~%s (%d updates x %s)", si(*c.FLOPs, "FLOP"), c.Updates, si(c.FLOPsPerUpdate, "FLOP"))
	if c.Seconds != nil {
		s += fmt.Sprintf(", ~%s at %s measured (%d run(s))", duration(*c.Seconds), si(c.FLOPsPerSecond, "FLOP/s"), c.MeasuredRuns)
	}
	return s
}

// si writes v with an SI prefix, to a unit under 10 to a tenth: 806
// kFLOP, 3.2 PFLOP.
func si(v float64, unit string) string {
	prefixes := []string{"", "k", "M", "G", "T", "P", "E", "Z"}
	i := 0
	for v >= 999.5 && i < len(prefixes)-1 {
		v /= 1000
		i++
	}
	if v >= 9.95 {
		return fmt.Sprintf("%.0f %s%s", v, prefixes[i], unit)
	}
	return fmt.Sprintf("%.1f %s%s", v, prefixes[i], unit)
}

// duration writes seconds roughly: 40 s, 12 min, 2.5 h, 3.1 d.
func duration(s float64) string {
	switch {
	case s < 90:
		return fmt.Sprintf("%.0f s", s)
	case s < 90*60:
		return fmt.Sprintf("%.0f min", s/60)
	case s < 48*3600:
		return fmt.Sprintf("%.1f h", s/3600)
	}
	return fmt.Sprintf("%.1f d", s/86400)
}

// PlanReason is one cause of a stage running.
type PlanReason struct {
	Kind string `json:"kind"`           // never_run, param_changed, backend_changed, ...
	Text string `json:"text"`           // as the human output words it
	Name string `json:"name,omitempty"` // parameter, input port, file
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

// PlanSummary counts the actions.
type PlanSummary struct {
	Run       int `json:"run"`
	Cached    int `json:"cached"`
	NotNeeded int `json:"not_needed"`
	Mirror    int `json:"mirror,omitempty"` // imported from the mirror, not run
}

// PlanRefusal is why run would not start.
type PlanRefusal struct {
	Stages []PlanRefusedStage `json:"stages"`
	Detail string             `json:"detail"`
	raw    string             // Detail as the human output prints it
}

// PlanRefusedStage is one stage run would refuse.
type PlanRefusedStage struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

// PlanRequest is one stage's language-model requests, estimated.
type PlanRequest struct {
	Stage            string   `json:"stage"`
	Provider         string   `json:"provider"`
	Model            string   `json:"model"`
	Requests         int      `json:"requests"`
	Exact            bool     `json:"exact"` // false: an upper bound (0: unknown)
	Cached           int      `json:"cached"`
	PromptTokens     int64    `json:"prompt_tokens"`
	CompletionTokens int64    `json:"completion_tokens"`
	Cost             *float64 `json:"cost_usd,omitempty"` // nil: no price for the model
	Note             string   `json:"note,omitempty"`
}

// AddRequests adds the language-model request estimates.
func (p *Plan) AddRequests(rps []runner.RequestPlan) {
	for _, r := range rps {
		q := PlanRequest{Stage: r.ID, Provider: r.Provider, Model: r.Model, Requests: r.Requests, Exact: r.Exact,
			Cached: r.Cached, PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Note: r.Note}
		if r.Priced {
			q.Cost = num(r.Cost())
		}
		p.Requests = append(p.Requests, q)
	}
}

var reasonKinds = map[runner.ReasonKind]string{
	runner.ReasonNeverRun: "never_run", runner.ReasonTypeChanged: "type_changed",
	runner.ReasonVersionChanged: "version_changed", runner.ReasonParamChanged: "param_changed",
	runner.ReasonSeedChanged: "seed_changed", runner.ReasonInputRuns: "input_runs",
	runner.ReasonInputChanged: "input_changed", runner.ReasonInputAdded: "input_added",
	runner.ReasonInputRemoved: "input_removed", runner.ReasonMissing: "missing_from_cache",
	runner.ReasonExternalChanged: "file_changed", runner.ReasonExternalError: "file_error",
	runner.ReasonUntil: "until", runner.ReasonBackendChanged: "backend_changed",
	runner.ReasonMirror: "mirror",
}

// NewPlan builds the plan's value from the runner's entries.
func NewPlan(file, profile, backend string, entries []runner.PlanEntry) *Plan {
	p := &Plan{FormatVersion: FormatVersion, File: file, Profile: orPaper(profile), Backend: backend, Stages: []PlanStage{}}
	for _, e := range entries {
		s := PlanStage{ID: e.ID, Type: e.Type, Key: e.Key, status: e.Status}
		switch e.Status {
		case runner.PlanRun:
			s.Action = "run"
			p.Summary.Run++
		case runner.PlanStopped:
			s.Action = "not needed"
			p.Summary.NotNeeded++
		case runner.PlanMirror:
			s.Action = "mirror"
			p.Summary.Mirror++
		default:
			s.Action = "cached"
			p.Summary.Cached++
		}
		for _, r := range e.Reasons {
			s.Reasons = append(s.Reasons, PlanReason{Kind: reasonKinds[r.Kind], Text: r.String(), Name: r.Name, Old: r.Old, New: r.New})
		}
		if e.Cost != nil {
			s.Cost = newPlanCost(e.Cost)
		}
		p.Stages = append(p.Stages, s)
	}
	return p
}

// Refuse records run's refusal to start.
func (p *Plan) Refuse(e *runner.StartError) {
	r := &PlanRefusal{Detail: strings.TrimSpace(e.Detail()), raw: e.Detail()}
	for _, s := range e.Stages {
		r.Stages = append(r.Stages, PlanRefusedStage{ID: s.ID, Type: s.Type, Reason: s.Err.Error()})
	}
	p.Refused = r
}

// Human prints the plan's table, its summary and the refusal; the request
// table and Slurm's jobs are printed by their own code after it.
func (p *Plan) Human(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tTYPE\tKEY\tSTATUS\tWHY")
	for _, s := range p.Stages {
		key := "-"
		if s.Key != "" {
			key = s.Key[:12]
		}
		var why []string
		for _, r := range s.Reasons {
			why = append(why, r.Text)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.Type, key, s.status, strings.Join(why, "; "))
	}
	tw.Flush()
	p.humanCosts(w)
	n := len(p.Stages)
	mirror := ""
	if p.Summary.Mirror > 0 {
		mirror = fmt.Sprintf("; %d from the mirror", p.Summary.Mirror)
	}
	if p.Summary.NotNeeded > 0 {
		fmt.Fprintf(w, "\n%d of %d stage(s) will run; %d cached%s; %d not needed (until).\n", p.Summary.Run, n, p.Summary.Cached, mirror, p.Summary.NotNeeded)
	} else {
		fmt.Fprintf(w, "\n%d of %d stage(s) will run; %d cached%s.\n", p.Summary.Run, n, p.Summary.Cached, mirror)
	}
	for _, l := range p.Loops {
		fmt.Fprintf(w, "repeat %s\n", l)
	}
	if p.Refused != nil {
		fmt.Fprintf(w, "\nrepro run would refuse to start: %d stage(s) cannot work as declared%s\n", len(p.Refused.Stages), p.Refused.raw)
	}
}

// humanCosts prints, when a stage that will run has an estimate, a line
// per such stage: its cost and what it assumes.
func (p *Plan) humanCosts(w io.Writer) {
	var with []PlanStage
	for _, s := range p.Stages {
		if s.Cost != nil {
			with = append(with, s)
		}
	}
	if len(with) == 0 {
		return
	}
	fmt.Fprintln(w, "\nEstimated cost (matrix products, forward and backward, at max length):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range with {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.ID, s.Cost.Text, s.Cost.Note)
	}
	tw.Flush()
}
