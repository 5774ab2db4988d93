package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"repro/internal/report"
	"repro/internal/tensor/backend"
	"repro/registry"
	"repro/runner"
	"repro/store"
)

// RunOptions are how to execute an experiment.
type RunOptions struct {
	Jobs    int
	Devices []string // cpu, cuda:0, ...
	// Backend is the tensor backend family for the run: "cpu" (default),
	// "openblas" or "cuda" in builds with that tag.
	Backend string
	// AnyBackend serves tensor stages from results of another backend.
	AnyBackend bool
	Version    string // repro's version, recorded in provenance
	Events     func(runner.Event)
	// Executor runs the stages (nil: in this process, runner.Local).
	Executor runner.Executor
}

// Outcome is what a run produced.
type Outcome struct {
	Result *runner.Result
	Report *report.Report
	// Saved reports whether the report became the scope's latest (not for
	// --target runs, which are partial).
	Saved bool
	// Markdown is the markdown report written beside the cache (empty for
	// --target runs), Figures the PNGs written with it.
	Markdown string
	Figures  []string
	// Excerpts are the stages' samples.md (generated text), in graph order.
	Excerpts []Excerpt
	// RunErr is the runner's error when a stage failed or the run was
	// cancelled (the report is still built from what finished).
	RunErr error
}

// Run executes the experiment against st, builds its report, saves it as
// the scope's latest (unless --target narrowed the run) and writes the
// markdown report and figures under the store's reports/ directory. The
// error is non-nil only when nothing could be reported; a stage failure is
// Outcome.RunErr.
func (x *Experiment) Run(ctx context.Context, st *store.Store, ro RunOptions) (*Outcome, error) {
	if ro.Backend == "" {
		ro.Backend = "cpu"
	}
	if _, err := backend.ByName(ro.Backend); err != nil {
		return nil, fmt.Errorf("--backend: %v", err)
	}
	var exec runner.Executor = &runner.Local{Store: st, Bind: bindDevice}
	if ro.Executor != nil {
		exec = ro.Executor
	}
	ropts := runner.Options{
		Jobs: ro.Jobs, Devices: ro.Devices, Backend: ro.Backend, AnyBackend: ro.AnyBackend, Version: ro.Version,
		Scope: x.Scope, Partial: len(x.Config.Variants) > 1, Events: ro.Events, Executor: exec, Mirror: x.Mirror,
	}
	var out *Outcome
	for attempt := 0; ; attempt++ {
		res, runErr := runner.Run(ctx, st, x.Graph, ropts)
		if res == nil {
			return nil, runErr
		}
		out = &Outcome{Result: res, RunErr: runErr}
		// Every metric the table reads comes from an object verified now: a
		// damaged metrics.json is quarantined and its stage run again, so
		// an edited number is never reported or saved.
		corrupt := 0
		verified := map[string]bool{}
		out.Report = x.BuildReport(func(nodeID, output string) (registry.Artifact, string, bool) {
			nodeID = res.Resolve(nodeID) // repeat.R.last of a block with until: its selected round
			nr := res.Node(nodeID)
			if nr == nil {
				return registry.Artifact{}, "stage " + nodeID + " is not in this run", false
			}
			a, ok := nr.Outputs[output]
			if !ok {
				return registry.Artifact{}, fmt.Sprintf("stage %s %s", nodeID, nr.Status), false
			}
			if !verified[a.Digest] {
				if err := st.VerifyObject(a.Digest); err != nil {
					if _, qerr := st.Quarantine(context.WithoutCancel(ctx), a.Digest, err.Error()); qerr == nil {
						corrupt++
					}
					return registry.Artifact{}, fmt.Sprintf("stage %s: %v", nodeID, err), false
				}
				verified[a.Digest] = true
			}
			return a, "", true
		})
		if corrupt == 0 || attempt == 1 || ctx.Err() != nil {
			break
		}
	}
	out.Report.Notes = loopNotes(out.Result.Loops)
	out.Report.Backend, out.Report.AnyBackend = ro.Backend, ro.AnyBackend
	if x.Targeted {
		return out, nil
	}
	var errs []error
	if err := x.SaveReport(context.WithoutCancel(ctx), st, out.Report); err != nil {
		errs = append(errs, fmt.Errorf("saving the report: %w", err))
	} else {
		out.Saved = true
	}
	dir := filepath.Join(st.Dir(), "reports")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		errs = append(errs, err)
	} else {
		figs, err := x.writeFigures(dir, out.Report, out.Result)
		if err != nil {
			errs = append(errs, err)
		}
		out.Figures = figs
		out.Excerpts = stageExcerpts(out.Result)
		if md, err := x.writeMarkdown(dir, out.Report, figs, out.Excerpts); err == nil {
			out.Markdown = md
		} else {
			errs = append(errs, err)
		}
	}
	// Report-writing problems do not hide the table: they come back with it.
	if len(errs) > 0 && out.RunErr == nil {
		out.RunErr = &OutputError{Err: errors.Join(errs...)}
	}
	return out, nil
}

// OutputError is a failure to save or write a report after the stages ran.
type OutputError struct{ Err error }

func (e *OutputError) Error() string { return e.Err.Error() }
func (e *OutputError) Unwrap() error { return e.Err }

// bindDevice selects the tensor backend for a stage's device. The backend
// is process-wide (see runner.Local), so the runner serialises tensor stages
// around it.
func bindDevice(d registry.Device) (func(), error) {
	name := d.Backend
	if name == "" {
		name = "cpu"
	}
	if strings.HasPrefix(d.Name, "cuda") && name != "cuda" {
		return nil, fmt.Errorf("a GPU device needs --backend cuda (the run declared %s)", name)
	}
	be, err := backend.ByName(name)
	if err != nil {
		return nil, err
	}
	prev := backend.Current()
	backend.Use(be)
	return func() { backend.Use(prev) }, nil
}

// Plan says what a run with that tensor backend ("" = cpu) would do and
// why, without running anything. A nil store is an empty cache.
func (x *Experiment) Plan(ctx context.Context, st *store.Store, backend string) ([]runner.PlanEntry, error) {
	return runner.Plan(ctx, st, x.Graph, runner.PlanOptions{Scope: x.Scope, Fallback: []string{x.BaseScope}, Backend: backend, Mirror: x.Mirror})
}

// SaveReport stores rep as the scope's latest report.
func (x *Experiment) SaveReport(ctx context.Context, st *store.Store, rep *report.Report) error {
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	return st.SaveReport(ctx, x.Scope, b)
}

// ErrNoResults says the scope has no recorded report.
var ErrNoResults = errors.New("no recorded results")

// LatestReport reads the scope's latest saved report.
func (x *Experiment) LatestReport(ctx context.Context, st *store.Store) (*report.Report, error) {
	b, _, err := st.LatestReport(ctx, x.Scope)
	if errors.Is(err, store.ErrNoReport) {
		return nil, fmt.Errorf("%w for profile %s in %s: run `repro run %s%s` first",
			ErrNoResults, x.ProfileName(), st.Dir(), x.File, profileFlag(x.Profile))
	}
	if err != nil {
		return nil, err
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("recorded report: %v", err)
	}
	return &rep, nil
}

func profileFlag(p string) string {
	if p == "" {
		return ""
	}
	return " --profile " + p
}

// writeMarkdown writes the table as markdown, with links to the figures
// beside it, for pasting into a README or a review.
func (x *Experiment) writeMarkdown(dir string, rep *report.Report, figures []string, xs []Excerpt) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\nprofile: %s\n\n", x.Config.Experiment.Title, x.Config.Experiment.Table, x.ProfileName())
	if len(x.Overrides) > 0 {
		fmt.Fprintf(&b, "overrides: `%s`\n\n", strings.Join(x.Overrides, " "))
	}
	report.WriteMarkdown(&b, rep)
	for _, f := range figures {
		fmt.Fprintf(&b, "\n![%s](%s)\n", filepath.Base(f), filepath.Base(f))
	}
	WriteExcerpts(&b, xs)
	path := filepath.Join(dir, x.Name()+".md")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}
