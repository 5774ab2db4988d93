package remote

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"repro/store"
)

// Spec is one stage run, as the coordinator hands it to a job.
type Spec struct {
	// Node is the node's ID in the coordinator's graph, Source where it
	// was declared; for messages only.
	Node   string `json:"node"`
	Source string `json:"source,omitempty"`
	// The stage as declared: what the key is computed from.
	Type    string          `json:"type"`
	Version int             `json:"version"`
	Params  json.RawMessage `json:"params"` // canonical (graph.CanonicalParams)
	Seed    int64           `json:"seed"`
	Backend string          `json:"backend"`
	// Key is the key the coordinator computed, or "" when an input comes
	// from a job that has not run yet (the coordinator checks the key the
	// job reports instead).
	Key    string           `json:"key,omitempty"`
	Inputs map[string]Input `json:"inputs"`
	// Identity is the node's static identity (graph.Identities) with the
	// backend: a later coordinator adopts a job still running for a node
	// with the same identity instead of submitting another.
	Identity string `json:"identity"`
	// GPUs the job was given (the stage runs on cuda:0 when > 0 and the
	// scheduler set CUDA_VISIBLE_DEVICES).
	GPUs int `json:"gpus,omitempty"`
	// Store is the cache directory (shared file system).
	Store string `json:"store"`
	// Outcome is the file the job writes when it ends; Progress the file
	// it keeps its progress in; Journal where new language-model answers
	// go; Requests the snapshot of the request cache ("": the stage sends
	// no requests, so lookups find nothing).
	Outcome  string `json:"outcome"`
	Progress string `json:"progress,omitempty"`
	Journal  string `json:"journal"`
	Requests string `json:"requests,omitempty"`
	Partial  bool   `json:"partial,omitempty"`
}

// Input is one input of a job: an object already stored (Digest), or
// output Output of the job whose outcome file is From.
type Input struct {
	Kind   string `json:"kind"`
	Digest string `json:"digest,omitempty"`
	From   string `json:"from,omitempty"`
	Output string `json:"output,omitempty"`
	Node   string `json:"node,omitempty"` // the producing node, for messages
}

// Outcome is what a job reports: the provenance of the run it did (or
// why it did not).
type Outcome struct {
	Node    string            `json:"node"`
	Type    string            `json:"type"`
	Version int               `json:"version"`
	Key     string            `json:"key,omitempty"`
	Params  json.RawMessage   `json:"params"`
	Inputs  map[string]string `json:"inputs"` // port (or @external) -> digest
	Seed    int64             `json:"seed"`
	Seeded  bool              `json:"seeded"`
	Backend string            `json:"backend"`
	Device  string            `json:"device,omitempty"`
	Host    string            `json:"host,omitempty"`
	// Job is the scheduler's job ID ("123", "123_4"); Log the job's own
	// log file.
	Job      string         `json:"job,omitempty"`
	Log      string         `json:"log,omitempty"`
	Duration time.Duration  `json:"duration_ns"`
	Outputs  []store.Output `json:"outputs,omitempty"`
	Started  time.Time      `json:"started"`
	Finished time.Time      `json:"finished"`
	// Error says why the job stored nothing; Refused marks a key that
	// differs from the coordinator's (the job did not run the stage).
	Error   string `json:"error,omitempty"`
	Refused bool   `json:"refused,omitempty"`
}

// OK reports whether the job ran the stage and stored its outputs.
func (o *Outcome) OK() bool { return o.Error == "" && o.Key != "" }

// WriteJSON writes v to path atomically (a temporary file renamed over
// it, fsynced), so a reader never sees half a file.
func WriteJSON(path string, v any) error {
	// Not indented: MarshalIndent would re-indent the canonical
	// parameters (json.RawMessage), which must stay byte for byte.
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// ReadSpec reads a job's spec.
func ReadSpec(path string) (*Spec, error) {
	var s Spec
	if err := readJSON(path, &s); err != nil {
		return nil, fmt.Errorf("job spec: %w", err)
	}
	if s.Type == "" || s.Store == "" || s.Outcome == "" {
		return nil, fmt.Errorf("job spec %s: type, store and outcome are required", path)
	}
	return &s, nil
}

// ReadOutcome reads an outcome file; the error satisfies
// errors.Is(err, os.ErrNotExist) while the job has written none.
func ReadOutcome(path string) (*Outcome, error) {
	var o Outcome
	if err := readJSON(path, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// Progress is what a running job last reported.
type Progress struct {
	Done   int       `json:"done"`
	Total  int       `json:"total"`
	Status string    `json:"status,omitempty"`
	Time   time.Time `json:"time"`
}

// ReadProgress reads a job's progress file (nil when it has none yet).
func ReadProgress(path string) *Progress {
	var p Progress
	if path == "" || readJSON(path, &p) != nil {
		return nil
	}
	return &p
}
