package view

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"repro/internal/report"
	"repro/runner"
)

// Events streams `repro run --json`: one JSON object per line, as the run
// goes (stage waiting for nothing is not reported; progress at most every
// few seconds per stage), then one "cell" object per table cell and a
// final "summary". Every object has "type" and "time" (RFC 3339, UTC), so
// a CI system can follow a run while it goes and read its table after.
type Events struct {
	mu       sync.Mutex
	enc      *json.Encoder
	lastProg map[string]time.Time
	now      func() time.Time
}

// NewEvents writes the stream to w.
func NewEvents(w io.Writer) *Events {
	return &Events{enc: json.NewEncoder(w), lastProg: map[string]time.Time{}, now: time.Now}
}

// StageEvent is one stage's change of state.
type StageEvent struct {
	Type      string            `json:"type"` // "stage"
	Time      string            `json:"time"`
	Event     string            `json:"event"` // cached, started, progress, finished, failed, skipped, stopped, decided, warning
	Stage     string            `json:"stage"`
	StageType string            `json:"stage_type,omitempty"`
	Key       string            `json:"key,omitempty"`
	Device    string            `json:"device,omitempty"`
	Done      int               `json:"done,omitempty"`
	Total     int               `json:"total,omitempty"`
	Status    string            `json:"status,omitempty"`
	Seconds   float64           `json:"seconds,omitempty"` // finished, failed: the stage's duration; else time since it started
	Outputs   map[string]string `json:"outputs,omitempty"` // port -> digest
	Error     string            `json:"error,omitempty"`
	Log       string            `json:"log,omitempty"`
}

var eventNames = map[runner.EventKind]string{
	runner.EventCached: "cached", runner.EventRunning: "started", runner.EventProgress: "progress",
	runner.EventDone: "finished", runner.EventFailed: "failed", runner.EventSkipped: "skipped",
	runner.EventStopped: "stopped", runner.EventDecided: "decided", runner.EventWarning: "warning",
}

// progressEvery is the least time between two progress lines of a stage.
const progressEvery = 5 * time.Second

// Event is the runner's callback.
func (e *Events) Event(ev runner.Event) {
	name, ok := eventNames[ev.Kind]
	if !ok {
		return // waiting: chatter a log does not need
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	if ev.Kind == runner.EventProgress {
		if now.Sub(e.lastProg[ev.Node]) < progressEvery && !(ev.Total > 0 && ev.Done >= ev.Total) {
			return
		}
		e.lastProg[ev.Node] = now
	}
	se := StageEvent{Type: "stage", Time: stamp(now), Event: name, Stage: ev.Node, StageType: ev.Type, Key: ev.Key,
		Device: ev.Device, Done: ev.Done, Total: ev.Total, Status: ev.Status, Seconds: ev.Elapsed.Seconds(),
		Outputs: ev.Outputs, Log: ev.Log}
	if ev.Err != nil {
		se.Error = ev.Err.Error()
	}
	_ = e.enc.Encode(se)
}

// CellEvent is one judged table cell, after the run.
type CellEvent struct {
	Type string `json:"type"` // "cell"
	Time string `json:"time"`
	CheckCell
}

// SummaryEvent ends the stream.
type SummaryEvent struct {
	Type       string           `json:"type"` // "summary"
	Time       string           `json:"time"`
	Experiment string           `json:"experiment"`
	Profile    string           `json:"profile"`
	Backend    string           `json:"backend,omitempty"`
	Seed       *int64           `json:"seed,omitempty"`
	Stages     int              `json:"stages"`
	Ran        int              `json:"ran"`
	Cached     int              `json:"cached"`
	Mirror     int              `json:"mirror,omitempty"` // of the cached: imported from the mirror
	Failed     int              `json:"failed"`
	Cells      report.Tally     `json:"cells"`
	Error      string           `json:"error,omitempty"`
	Report     string           `json:"report,omitempty"` // the markdown report's path
	Figures    []string         `json:"figures,omitempty"`
	Ablation   *report.Ablation `json:"ablation,omitempty"`
	// Deviations are the report's declared differences from the paper
	// ([] when there are none), last as in every report.
	Deviations report.Deviations `json:"deviations"`
}

// Result writes the cells and the summary.
func (e *Events) Result(rep *report.Report, js []report.Judged, sum SummaryEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := stamp(e.now())
	for _, j := range js {
		sum.Cells.Add(j)
		_ = e.enc.Encode(CellEvent{Type: "cell", Time: now, CheckCell: cellOf(j)})
	}
	sum.Type, sum.Time = "summary", now
	sum.Experiment, sum.Profile, sum.Backend, sum.Seed = rep.Experiment, orPaper(rep.Profile), rep.Backend, rep.Seed
	sum.Ablation, sum.Deviations = rep.Ablation, rep.Deviations
	_ = e.enc.Encode(sum)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
