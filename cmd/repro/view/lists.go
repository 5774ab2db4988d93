package view

import (
	"encoding/json"
	"time"

	"repro/registry"
	"repro/store"
)

// StageTypes is `repro stages --json`: every registered stage type, or one.
type StageTypes struct {
	FormatVersion string      `json:"format_version"`
	Types         []StageType `json:"types"`
}

// StageType documents one stage type.
type StageType struct {
	Name    string       `json:"name"`
	Version int          `json:"version"`
	Doc     string       `json:"doc"`
	Seeded  bool         `json:"seeded"`
	Tensor  bool         `json:"tensor"`
	Params  []StageParam `json:"params"`
	Inputs  []StagePort  `json:"inputs"`
	Outputs []StagePort  `json:"outputs"`
}

// StageParam is one parameter: its HCL type, its default (absent when
// required) and what it names on disk, if anything.
type StageParam struct {
	Name     string          `json:"name"`
	Type     string          `json:"type"`
	Required bool            `json:"required"`
	Default  json.RawMessage `json:"default,omitempty"`
	Path     string          `json:"path,omitempty"` // file, dir, checkpoint
	Doc      string          `json:"doc,omitempty"`
}

// StagePort is an input or output.
type StagePort struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Optional bool   `json:"optional,omitempty"`
	Doc      string `json:"doc,omitempty"`
}

// NewStageType documents t; format renders a default value as JSON.
func NewStageType(t *registry.StageType, format func(p registry.Param) json.RawMessage) (StageType, error) {
	ps, err := t.ParamSchema()
	if err != nil {
		return StageType{}, err
	}
	st := StageType{Name: t.Name, Version: t.Version, Doc: t.Doc, Seeded: t.Seeded, Tensor: t.Tensor,
		Params: []StageParam{}, Inputs: ports(t.Inputs), Outputs: ports(t.Outputs)}
	for _, p := range ps {
		sp := StageParam{Name: p.Name, Type: p.Type.FriendlyName(), Required: p.Required, Path: string(p.Path), Doc: p.Doc}
		if !p.Required {
			sp.Default = format(p)
		}
		st.Params = append(st.Params, sp)
	}
	return st, nil
}

func ports(pp []registry.Port) []StagePort {
	out := []StagePort{}
	for _, p := range pp {
		out = append(out, StagePort{Name: p.Name, Kind: string(p.Kind), Optional: p.Optional, Doc: p.Doc})
	}
	return out
}

// CacheRuns is `repro cache ls --json`.
type CacheRuns struct {
	FormatVersion string     `json:"format_version"`
	Dir           string     `json:"dir"`
	Runs          []CacheRun `json:"runs"`
	Bytes         int64      `json:"bytes"`
}

// CacheRun is one recorded stage run with its provenance.
type CacheRun struct {
	Key          string            `json:"key"`
	Stage        string            `json:"stage"`
	Type         string            `json:"type"`
	Version      int               `json:"version"`
	Params       json.RawMessage   `json:"params,omitempty"`
	Inputs       map[string]string `json:"inputs,omitempty"`
	Outputs      map[string]string `json:"outputs,omitempty"`
	Seed         *int64            `json:"seed,omitempty"`
	Seconds      float64           `json:"seconds"`
	Device       string            `json:"device,omitempty"`
	Backend      string            `json:"backend,omitempty"`
	ReproVersion string            `json:"repro_version,omitempty"`
	Host         string            `json:"host,omitempty"`
	Time         string            `json:"time"`
	Bytes        int64             `json:"bytes"`
}

// NewCacheRuns lists runs.
func NewCacheRuns(dir string, runs []*store.RunInfo) *CacheRuns {
	c := &CacheRuns{FormatVersion: FormatVersion, Dir: dir, Runs: []CacheRun{}}
	for _, r := range runs {
		cr := CacheRun{Key: r.Key, Stage: r.NodeID, Type: r.Type, Version: r.Version, Params: r.Params, Inputs: r.Inputs,
			Seconds: r.Duration.Seconds(), Device: r.Device, Backend: r.Backend, ReproVersion: r.ReproVersion, Host: r.Host,
			Time: r.Time.UTC().Format(time.RFC3339), Bytes: r.Size}
		if r.Seeded {
			s := r.Seed
			cr.Seed = &s
		}
		if len(r.Outputs) > 0 {
			cr.Outputs = map[string]string{}
			for p, a := range r.Outputs {
				cr.Outputs[p] = a.Digest
			}
		}
		c.Bytes += r.Size
		c.Runs = append(c.Runs, cr)
	}
	return c
}
