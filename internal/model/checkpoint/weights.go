package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"repro/internal/model/safetensors"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

// Weights is a checkpoint's weights opened for loading: every header read
// and validated, no tensor data read yet. A model is checked against the
// headers (Fit, Check) before it is allocated, and then reads only the
// tensors it uses (Load), one at a time, so that loading takes about the
// model's own memory whatever else the file holds.
type Weights struct {
	// Path is the file, or the index of a sharded checkpoint, that errors
	// name.
	Path    string
	infos   map[string]safetensors.Info
	from    map[string]*safetensors.Reader
	readers []*safetensors.Reader
}

// OpenWeights opens dir's model.safetensors, or the shards listed by
// model.safetensors.index.json. A shard that lacks a tensor the index
// assigns to it, or a tensor in two shards, is an error. Close releases
// the files.
func OpenWeights(dir string) (*Weights, error) {
	path := filepath.Join(dir, FileWeights)
	r, err := safetensors.Open(path)
	if err == nil {
		w := &Weights{Path: path, infos: map[string]safetensors.Info{}, from: map[string]*safetensors.Reader{}, readers: []*safetensors.Reader{r}}
		for _, n := range r.Names() {
			w.infos[n], _ = r.Info(n)
			w.from[n] = r
		}
		return w, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	index := filepath.Join(dir, FileWeightsIndex)
	raw, ierr := os.ReadFile(index)
	if errors.Is(ierr, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: %s has no %s or %s (only safetensors weights are read; convert pytorch_model.bin first)", dir, FileWeights, FileWeightsIndex)
	}
	if ierr != nil {
		return nil, fmt.Errorf("checkpoint: %w", ierr)
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %v", index, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("checkpoint: %s: empty weight_map", index)
	}
	shards := map[string][]string{} // shard -> tensors the index puts there
	for name, shard := range idx.WeightMap {
		if shard == "" || shard == "." || shard == ".." || filepath.Base(shard) != shard {
			return nil, &ShardNameError{Index: index, Tensor: name, Shard: shard}
		}
		shards[shard] = append(shards[shard], name)
	}
	names := make([]string, 0, len(shards))
	for s := range shards {
		names = append(names, s)
	}
	sort.Strings(names)
	w := &Weights{Path: index, infos: map[string]safetensors.Info{}, from: map[string]*safetensors.Reader{}}
	shardOf := map[string]string{}
	for _, shard := range names {
		sr, err := safetensors.Open(filepath.Join(dir, shard))
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("checkpoint: %s: shard %s: %w", index, shard, err)
		}
		w.readers = append(w.readers, sr)
		sort.Strings(shards[shard])
		for _, n := range shards[shard] {
			if _, ok := sr.Info(n); !ok {
				w.Close()
				return nil, fmt.Errorf("checkpoint: %s: shard %s lacks tensor %q, which the index assigns to it", index, shard, n)
			}
		}
		for _, n := range sr.Names() {
			if prev, dup := shardOf[n]; dup {
				w.Close()
				return nil, fmt.Errorf("checkpoint: %s: tensor %q is in shards %s and %s", index, n, prev, shard)
			}
			shardOf[n] = shard
			w.infos[n], _ = sr.Info(n)
			w.from[n] = sr
		}
	}
	return w, nil
}

// ShardNameError is an index entry whose shard is not a file name in the
// checkpoint's directory: a path elsewhere ("../x", "/etc/passwd"), "",
// "." or "..".
type ShardNameError struct {
	Index, Tensor, Shard string
}

func (e *ShardNameError) Error() string {
	return fmt.Sprintf("checkpoint: %s: tensor %q is assigned to %q, not a file name in the directory", e.Index, e.Tensor, e.Shard)
}

// Close closes the files.
func (w *Weights) Close() error {
	var first error
	for _, r := range w.readers {
		if err := r.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Names returns the tensor names, sorted.
func (w *Weights) Names() []string {
	ns := make([]string, 0, len(w.infos))
	for n := range w.infos {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// Read reads one tensor.
func (w *Weights) Read(name string) (safetensors.Tensor, error) {
	info, ok := w.infos[name]
	if !ok {
		return safetensors.Tensor{}, fmt.Errorf("checkpoint: %s: no tensor %q", w.Path, name)
	}
	t := safetensors.Tensor{Shape: info.Shape, Data: make([]float32, info.Count())}
	if err := w.from[name].ReadInto(name, t.Data); err != nil {
		return safetensors.Tensor{}, fmt.Errorf("checkpoint: %w", err)
	}
	return t, nil
}

// shapes maps every tensor name to its shape.
func (w *Weights) shapes() map[string][]int {
	m := make(map[string][]int, len(w.infos))
	for n, i := range w.infos {
		m[n] = i.Shape
	}
	return m
}

// Check reports, without reading any data, whether params (only names
// and shapes are used: Param may be nil) would load: the same problems,
// in the same words, as ApplyNaming, in a *MismatchError.
func (w *Weights) Check(params []transformer.NamedParam, naming Naming) error {
	_, _, err := plan(params, w.shapes(), naming)
	return err
}

// Load reads the tensors params use into them (see ApplyNaming for the
// matching) and returns the names of the file tensors it ignored, which
// it never reads. A tensor holding NaN or an infinity fails the load with
// a *NonFiniteError naming it; a mismatch is a *MismatchError, behind
// the weights' path. The tensors are read one by one into the
// parameters, so a load that fails on a tensor's data (non-finite values,
// an I/O error) leaves params partly overwritten: callers load into a
// model they discard on error.
func (w *Weights) Load(params []transformer.NamedParam, naming Naming) (ignored []string, err error) {
	wanted, ignored, err := plan(params, w.shapes(), naming)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.Path, err)
	}
	for _, m := range wanted {
		dst := tensor.Data(m.param.Param)
		if len(dst) != w.infos[m.file].Count() {
			return nil, fmt.Errorf("%s: %w", w.Path, &MismatchError{Problems: []string{fmt.Sprintf("tensor %q has %d values, parameter %q holds %d", m.file, w.infos[m.file].Count(), m.param.Name, len(dst))}})
		}
		r := w.from[m.file]
		if err := r.ReadInto(m.file, dst); err != nil {
			return nil, err
		}
		if err := checkFinite(r.Path(), m.file, dst); err != nil {
			return nil, err
		}
	}
	return ignored, nil
}

// NonFiniteError is a tensor holding NaN or an infinity: no trained model
// has one, and a NaN in a row no batch touches would otherwise train, be
// saved and be cached unnoticed.
type NonFiniteError struct {
	File, Tensor string
	Index        int // the first non-finite element, row-major
	Value        float32
}

func (e *NonFiniteError) Error() string {
	return fmt.Sprintf("%s: tensor %q holds %v at element %d (weights must be finite)", e.File, e.Tensor, e.Value, e.Index)
}

func checkFinite(file, name string, d []float32) error {
	for i, v := range d {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return &NonFiniteError{File: file, Tensor: name, Index: i, Value: v}
		}
	}
	return nil
}

// MismatchError is a checkpoint whose tensors do not fit the model:
// missing, unexpected or misshapen tensors, all listed.
type MismatchError struct{ Problems []string }

func (e *MismatchError) Error() string { return strings.Join(e.Problems, "; ") }

// ConfigError is a config.json key whose value the weights contradict,
// found before the model it describes is allocated.
type ConfigError struct {
	Config  string // config.json's path
	Field   string // the key
	Against string // the file that contradicts it (weights, tokenizer)
	Msg     string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s: %s %s (%s)", e.Config, e.Field, e.Msg, e.Against)
}

// Dim ties a config.json key to the size of one axis of the tensor it
// decides (the model's name for the tensor).
type Dim struct {
	Field  string
	Value  int
	Tensor string
	Axis   int
}

// Stack ties a layer count to the numbered tensors of a stack: names
// Prefix + index + ".".
type Stack struct {
	Field  string
	Value  int
	Prefix string
}

// Fit checks, before the model config.json describes is allocated, that
// its sizes agree with the weights' header: each Dim's tensor, when the
// file has it, has that size on that axis, and each Stack has at least
// that many layers in the file. The sizes decide allocations, so a hostile
// vocab_size or layer count must be refused here, naming the key, rather
// than exhaust memory. What Fit cannot see (a tensor the file lacks) Check
// then reports (see Prepare).
func (w *Weights) Fit(config string, naming Naming, dims []Dim, stacks []Stack) error {
	byName := map[string]string{}
	for n := range w.infos {
		byName[naming.canonical(n)] = n
	}
	for _, d := range dims {
		fn, ok := byName[d.Tensor]
		if !ok {
			continue
		}
		shape := w.infos[fn].Shape
		if d.Axis >= len(shape) || shape[d.Axis] == d.Value {
			continue
		}
		return &ConfigError{Config: config, Field: d.Field, Against: w.Path,
			Msg: fmt.Sprintf("is %d, but tensor %q has %d on axis %d (shape %v)", d.Value, fn, shape[d.Axis], d.Axis, shape)}
	}
	for _, s := range stacks {
		layers := map[int]bool{}
		for cn := range byName {
			rest, ok := strings.CutPrefix(cn, s.Prefix)
			if !ok {
				continue
			}
			num, _, ok := strings.Cut(rest, ".")
			if i, err := strconv.Atoi(num); ok && err == nil && i >= 0 {
				layers[i] = true
			}
		}
		if s.Value > len(layers) {
			return &ConfigError{Config: config, Field: s.Field, Against: w.Path,
				Msg: fmt.Sprintf("is %d, but the weights hold %d layers (%s*)", s.Value, len(layers), s.Prefix)}
		}
	}
	return nil
}

// Prepare is what a loader does between reading config.json and
// allocating the model it describes: Fit, then the model's parameter
// list from shapes (names and shapes only, at most limit entries: a few
// times the tensors the file holds, so that a layer count the file cannot
// back is refused before its names are even listed, while a checkpoint
// with a few tensors missing still gets Check's list of them), then
// Check. The errors are a *ConfigError naming the key or a
// *MismatchError naming the tensors; once Prepare passes, every parameter
// the model allocates has a tensor of its shape in the file (or is one of
// the optional ones), so the allocation is bounded by the file's size.
func (w *Weights) Prepare(config string, naming Naming, dims []Dim, stacks []Stack, optional int,
	shapes func(limit int) ([]transformer.NamedParam, bool)) error {
	if err := w.Fit(config, naming, dims, stacks); err != nil {
		return err
	}
	ps, ok := shapes(2*len(w.infos) + optional + 64)
	if !ok {
		var fields []string
		for _, s := range stacks {
			fields = append(fields, fmt.Sprintf("%s %d", s.Field, s.Value))
		}
		return &ConfigError{Config: config, Field: strings.Join(fields, ", "), Against: w.Path,
			Msg: fmt.Sprintf("imply more tensors than the weights' %d", len(w.infos))}
	}
	if err := w.Check(ps, naming); err != nil {
		return fmt.Errorf("%s: %w", w.Path, err)
	}
	return nil
}

// match pairs a parameter with the file tensor that loads it.
type match struct {
	param transformer.NamedParam
	file  string
}

// plan matches params to the file tensors (names and shapes only) as
// ApplyNaming documents.
func plan(params []transformer.NamedParam, file map[string][]int, naming Naming) (wanted []match, ignored []string, err error) {
	byName := map[string]string{} // canonical -> file name
	var problems []string
	// In name order, so that which of two clashing names is reported
	// first does not depend on map order.
	names := make([]string, 0, len(file))
	for fn := range file {
		names = append(names, fn)
	}
	sort.Strings(names)
	for _, fn := range names {
		cn := naming.canonical(fn)
		if other, dup := byName[cn]; dup {
			problems = append(problems, fmt.Sprintf("tensors %q and %q both map to %q", other, fn, cn))
			continue
		}
		byName[cn] = fn
	}
	used := map[string]bool{}
	var missing []string
	for _, p := range params {
		fn, ok := byName[p.Name]
		if !ok {
			if naming.Optional == nil || !naming.Optional(p.Name) {
				missing = append(missing, fmt.Sprintf("%s %v", p.Name, p.Shape))
			}
			continue
		}
		used[fn] = true
		if !sameShape(file[fn], p.Shape) {
			problems = append(problems, fmt.Sprintf("tensor %q has shape %v, model parameter %q has shape %v", fn, file[fn], p.Name, p.Shape))
			continue
		}
		wanted = append(wanted, match{p, fn})
	}
	var unexpected []string
	for _, fn := range names {
		if used[fn] {
			continue
		}
		if naming.Ignore != nil && naming.Ignore(naming.canonical(fn)) {
			ignored = append(ignored, fn)
		} else {
			unexpected = append(unexpected, fmt.Sprintf("%s %v", fn, file[fn]))
		}
	}
	sort.Strings(missing)
	sort.Strings(unexpected)
	sort.Strings(problems)
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("missing tensors: %s", strings.Join(missing, ", ")))
	}
	if len(unexpected) > 0 {
		problems = append(problems, fmt.Sprintf("unexpected tensors (not parameters of this model): %s", strings.Join(unexpected, ", ")))
	}
	if len(problems) > 0 {
		return nil, nil, &MismatchError{Problems: problems}
	}
	return wanted, ignored, nil
}
