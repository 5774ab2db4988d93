package trainer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"

	"github.com/nlpodyssey/spago/mat"
)

// Recipe is one training objective made ready to run: what Drive trains.
// Recipes are built by the model families' packages (internal/mlm,
// internal/clm, internal/seq2seq, internal/contrastive) from a model and
// its data; the stage types only decode parameters, read inputs and call
// one.
type Recipe struct {
	Params []Param
	N      int // training examples (micro-batches of Config.BatchSize of them)
	// Unit names the examples in errors ("examples" when empty).
	Unit string
	Step StepFunc
	// Eval is the model-selection metric, higher is better (nil: no
	// evaluation, the last weights are kept).
	Eval EvalFunc
	// Show formats an evaluation for the progress line and may undo the
	// metric's sign ("dev 78.12 (best 80.01)" by default).
	Show func(metric, best float64) string
	// Record, when set, returns what to keep of update p in the run's
	// journal (nil: nothing): measures an artifact reports per update or
	// per evaluation (a loss curve, an evaluation's parts), which must
	// survive a resume as the weights do. A record is a JSON object whose
	// "step" is p.Step; Result.Records holds them all at the end.
	Record func(p Progress) any
	// Train, when set, switches training-only settings on (dropout) and
	// returns what switches them back, called when training ends.
	Train func() (restore func())
}

// Output is where a driven run reports: the stage's progress line and log.
type Output struct {
	Log    *slog.Logger                         // nil: discard
	Report func(done, total int, status string) // nil: none
}

// Logger is out.Log, or a logger that discards.
func (out Output) Logger() *slog.Logger {
	if out.Log != nil {
		return out.Log
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// JournalFile is the journal's file name inside Config.Work.
const JournalFile = "steps.jsonl"

// Drive trains rec under cfg: the shared Trainer, with progress reported
// to out.Report, a log line every 50 updates, at each evaluation and at
// the last update, and rec's journal kept beside the resumable state.
func Drive(ctx context.Context, rec Recipe, cfg Config, out Output) (*Result, error) {
	return driveWith(ctx, rec, cfg, out, nil)
}

// driveWith is Drive with the Trainer's Backward (nil: the default).
func driveWith(ctx context.Context, rec Recipe, cfg Config, out Output, backward func(mat.Tensor) error) (*Result, error) {
	if cfg.BatchSize > rec.N {
		unit := rec.Unit
		if unit == "" {
			unit = "examples"
		}
		return nil, fmt.Errorf("batch_size: %d is larger than the %d training %s", cfg.BatchSize, rec.N, unit)
	}
	log := out.Logger()
	show := rec.Show
	if show == nil {
		show = func(m, best float64) string { return fmt.Sprintf("dev %.2f (best %.2f)", m, best) }
	}
	var j *journal
	if rec.Record != nil {
		path := ""
		if cfg.Work != "" {
			path = filepath.Join(cfg.Work, JournalFile)
		}
		var err error
		if j, err = openJournal(path); err != nil {
			return nil, fmt.Errorf("train: journal: %w", err)
		}
		defer j.close()
	}
	if rec.Train != nil {
		defer rec.Train()()
	}
	tr := &Trainer{Params: rec.Params, N: rec.N, Step: rec.Step, Eval: rec.Eval, Config: cfg, Backward: backward}
	var recErr error
	tr.OnStep = func(p Progress) {
		status := fmt.Sprintf("loss %.4f", p.Loss)
		if !math.IsNaN(p.Metric) {
			status += " " + show(p.Metric, p.Best)
		}
		// The runner's display computes the ETA from the reported steps.
		if out.Report != nil {
			out.Report(p.Step, p.Total, status)
		}
		if p.Evaluated || p.Step == p.Total || p.Step%50 == 0 {
			args := []any{"step", p.Step, "total", p.Total, "loss", p.Loss, "lr", p.LR, "grad_norm", p.GradNorm, "dev", p.Metric, "best", p.Best}
			if p.OnDevice {
				args = append(args, "copied_up_bytes", p.CopiedUp, "copied_down_bytes", p.CopiedDown)
			}
			log.Info("train", args...)
		}
		if j != nil && recErr == nil {
			if r := rec.Record(p); r != nil {
				recErr = j.add(p.Step, r)
			}
		}
	}
	if j != nil {
		tr.OnStart = j.start
		tr.OnSave = j.sync
	}
	res, err := tr.Run(ctx)
	if err != nil {
		return nil, err
	}
	if recErr != nil {
		return nil, fmt.Errorf("train: journal: %w", recErr)
	}
	if res.Resumed {
		log.Info("resumed from the saved training state", "dir", cfg.Work)
	}
	if d := res.Device; d != nil {
		logDevice(log, d)
	}
	if j != nil {
		res.Records = j.lines
	}
	return res, nil
}

// Records decodes a run's journal records into T.
func Records[T any](res *Result) ([]T, error) {
	if len(res.Records) == 0 {
		return nil, nil
	}
	out := make([]T, len(res.Records))
	for i, r := range res.Records {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			return nil, fmt.Errorf("train: journal record %d: %w", i+1, err)
		}
	}
	return out, nil
}

// WriteJSON writes v to path as indented JSON ending in a newline, the
// format of the histories (training.json, pretraining.json) and metrics
// the training stages write: no timings, so identical runs write
// identical bytes.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// logDevice logs what a run on a device copied: per update (mean and
// largest, bytes up and down; the last update by label) and apart from
// the updates (placing, evaluations, snapshots, the end).
func logDevice(log *slog.Logger, d *DeviceReport) {
	mean := func(n int64) int64 {
		if d.Updates == 0 {
			return 0
		}
		return n / int64(d.Updates)
	}
	log.Info("device copies", "device", d.Device, "precision", d.Precision.String(), "updates", d.Updates,
		"per_update_up_bytes", mean(d.StepUp), "per_update_down_bytes", mean(d.StepDown),
		"max_update_up_bytes", d.MaxStepUp, "max_update_down_bytes", d.MaxStepDown,
		"other_up_bytes", d.Other.UpBytes, "other_down_bytes", d.Other.DownBytes)
	log.Info("device copies of the last update", "copies", d.LastStep.String())
	log.Info("device copies outside the updates (placing, evaluations, snapshots, the end)", "copies", d.Other.String())
	if d.Leaked > 0 {
		log.Warn("device buffers still allocated after the run", "buffers", d.Leaked)
	}
}
