package trainer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"repro/internal/model/safetensors"
	"repro/internal/tensor/optim"
)

// StateFile is the resumable state's file name inside Config.Work.
const StateFile = "train_state.safetensors"

func (t *Trainer) statePath() string { return filepath.Join(t.Config.Work, StateFile) }

// save writes the whole state in one atomic file.
func (t *Trainer) save(st *state, params [][]float32, opt *optim.AdamW, best [][]float32) error {
	if err := os.MkdirAll(t.Config.Work, 0o755); err != nil {
		return fmt.Errorf("train: save state: %w", err)
	}
	meta, err := marshalState(st)
	if err != nil {
		return fmt.Errorf("train: save state: %w", err)
	}
	ts := make(map[string]safetensors.Tensor, 4*len(params))
	for i, p := range t.Params {
		shape := p.Param.Shape()
		ts["param/"+p.Name] = safetensors.Tensor{Shape: shape, Data: params[i]}
		ts["m/"+p.Name] = safetensors.Tensor{Shape: shape, Data: opt.M[i]}
		ts["v/"+p.Name] = safetensors.Tensor{Shape: shape, Data: opt.V[i]}
		if best != nil {
			ts["best/"+p.Name] = safetensors.Tensor{Shape: shape, Data: best[i]}
		}
	}
	if err := safetensors.WriteFile(t.statePath(), ts, map[string]string{"repro_train_state": meta}); err != nil {
		return fmt.Errorf("train: save state: %w", err)
	}
	return nil
}

// StateMismatchError is a saved state written by a run with another
// configuration or model (its fingerprint differs): resuming from it would
// mix two runs, so it is refused.
type StateMismatchError struct {
	Path, Saved, Now string
}

func (e *StateMismatchError) Error() string {
	return fmt.Sprintf("train: resume: %s was written by a run with a different configuration or model:\n saved: %s\n now:   %s\n(delete it to start over)", e.Path, e.Saved, e.Now)
}

// load restores a saved state into params and opt; it returns nil when
// there is none.
func (t *Trainer) load(fingerprint string, params [][]float32, opt *optim.AdamW) (*state, [][]float32, error) {
	path := t.statePath()
	f, err := safetensors.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("train: resume: %w (delete it to start over)", err)
	}
	raw, ok := f.Metadata["repro_train_state"]
	if !ok {
		return nil, nil, fmt.Errorf("train: resume: %s has no repro_train_state metadata", path)
	}
	var st state
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return nil, nil, fmt.Errorf("train: resume: %s: state metadata: %v", path, err)
	}
	if st.Fingerprint != fingerprint {
		return nil, nil, &StateMismatchError{Path: path, Saved: st.Fingerprint, Now: fingerprint}
	}
	st.BestMetric = math.NaN()
	if st.BestJSON != nil {
		st.BestMetric = *st.BestJSON
	}
	get := func(prefix string, i int) ([]float32, error) {
		name := prefix + t.Params[i].Name
		tt, ok := f.Tensors[name]
		if !ok {
			return nil, fmt.Errorf("train: resume: %s lacks tensor %q", path, name)
		}
		if len(tt.Data) != len(params[i]) {
			return nil, fmt.Errorf("train: resume: %s: tensor %q has %d values, parameter has %d", path, name, len(tt.Data), len(params[i]))
		}
		return tt.Data, nil
	}
	var best [][]float32
	if st.BestStep >= 0 {
		best = make([][]float32, len(params))
	}
	for i := range params {
		p, err := get("param/", i)
		if err != nil {
			return nil, nil, err
		}
		m, err := get("m/", i)
		if err != nil {
			return nil, nil, err
		}
		v, err := get("v/", i)
		if err != nil {
			return nil, nil, err
		}
		copy(params[i], p)
		copy(opt.M[i], m)
		copy(opt.V[i], v)
		if best != nil {
			if best[i], err = get("best/", i); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(st.AdamT) != len(opt.T) {
		return nil, nil, fmt.Errorf("train: resume: %s: %d optimizer step counts for %d parameters", path, len(st.AdamT), len(opt.T))
	}
	copy(opt.T, st.AdamT)
	return &st, best, nil
}
