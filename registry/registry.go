// Package registry holds the stage types that HCL stage blocks name with
// `uses`, and the contract between a stage type and the runner.
//
// A stage type is a thin adapter: it decodes its parameters (a Go struct whose
// exported fields carry `cty:"name"` tags; the struct value given at
// registration holds the defaults), reads its input artifacts, calls a library
// under internal/, and writes its output artifacts into the directories the
// runner hands it. It knows nothing of HCL or of the cache.
//
// Registration is explicit: Default() (in package registry/builtin) builds the
// registry from each family's Register function; nothing registers itself in
// an init function, so tests build registries holding only the types they
// define.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/gocty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Kind names the format of an artifact. Every artifact is a directory; the
// kind says which files it holds (see the Kind constants in kinds.go).
type Kind string

// Port declares one input or output of a stage type.
type Port struct {
	Name     string
	Kind     Kind
	Doc      string
	Optional bool // inputs only: the stage block may leave it out
}

// StageType is one registered kind of stage.
type StageType struct {
	Name    string // "data.sts", "train.simcse", ...
	Version int    // bumped whenever the output for the same inputs changes
	Doc     string
	// Params is a struct value (not a pointer) whose exported fields carry
	// `cty:"name"` tags and optionally `doc:"..."` and `required:"true"`
	// tags. Its field values are the defaults. Embedded structs without a
	// cty tag are groups of parameters (see ParamSchema). A nil Params
	// means none.
	Params  any
	Inputs  []Port
	Outputs []Port
	// Seeded types get the stage's seed in their cache key and in Env.Seed;
	// for the others the seed is not part of the key (it cannot change
	// their output).
	Seeded bool
	// Tensor types do tensor work: the runner gives them a device and
	// serialises them on a GPU.
	Tensor bool
	// CPUOnly marks a tensor type that cannot use a GPU (its default
	// resources ask for none).
	CPUOnly bool
	// Light marks a tensor type whose runs need little (an evaluation:
	// encode a test set, score it): on the CPU the runner runs one beside
	// a long tensor stage within -j instead of after it, so a run stopped
	// early keeps every cell that was ready (see package runner).
	Light bool
	// Resources are the type's defaults for what one run needs (zero
	// fields: see DefaultResources).
	Resources Resources
	// Externals, when set, names the files and directories outside the
	// store that a run with these (decoded, validated) parameters reads.
	// The runner hashes each by content into the stage's key and
	// provenance, so a changed file re-runs the stage and a missing one
	// fails it; every byte a stage reads must reach its key this way (or
	// through its inputs, or the dataset catalogue's pinned checksums).
	Externals func(params any) ([]External, error)
	// StandIns, when set, names the datasets of the data directory that a
	// run with these (decoded, validated) parameters reads in place of a
	// paper's own data (internal/dataset's Dataset.StandIn): a paper
	// profile must declare each as a deviation.
	StandIns func(params any) []string
	// Datasets, when set, names every dataset of the data directory
	// (internal/dataset's catalogue) that a run with these parameters
	// reads: before anything starts the runner checks that each one's
	// files are in a data directory, so a missing file refuses the run,
	// naming the files and the directories searched, instead of failing
	// the stage at its turn.
	Datasets func(params any) []string
	Run      func(ctx context.Context, env *Env) error
	// Requests, set by types that send language-model requests, says what
	// a run would send without sending anything (`repro plan`). It gets an
	// Env with Params, Seed, Requests and the Inputs already computed (an
	// input whose stage has not run is absent).
	Requests func(ctx context.Context, env *Env) (*RequestEstimate, error)
	// Cost, set by training types, estimates the arithmetic a run with
	// these (decoded, validated) parameters would do (`repro plan`), from
	// the inputs already computed: an `init` model's shape, the data whose
	// size decides an epoch-based run's updates. A nil estimate means the
	// model's shape is not known before the run.
	Cost func(params any, in CostInputs) (*CostEstimate, error)
}

// CostInputs are a stage's inputs as a cost estimate sees them.
type CostInputs struct {
	// Computed holds the artifacts of the inputs already computed.
	Computed map[string]Artifact
	// Connected says which input ports are connected, computed or not.
	Connected map[string]bool
}

// CostEstimate is what a training run's arithmetic would come to.
type CostEstimate struct {
	// FLOPsPerUpdate counts one optimizer update's matrix products,
	// forward and backward (2 FLOPs a multiply-add, backward twice the
	// forward), every sequence at its maximum length: an upper bound on
	// the arithmetic of a batch, which pads only to its longest sequence.
	FLOPsPerUpdate float64
	// Updates is the number of optimizer updates; 0 means unknown (an
	// epoch-based run whose data is not computed yet). With early
	// stopping (patience) it is a maximum.
	Updates int
	// Note says what the count assumes or leaves out.
	Note string
}

// FLOPs is the whole run's estimate; 0 when Updates is unknown.
func (e *CostEstimate) FLOPs() float64 { return e.FLOPsPerUpdate * float64(e.Updates) }

// StartChecker is implemented by a parameter struct, or by a parameter
// group embedded in one, whose values alone (with which inputs are
// connected) can show that a run cannot work: a paper setting whose
// pretrained weights were not given. The runner asks every stage of a run
// before the first starts, so a paper profile without its -var refuses at
// once rather than failing at its first training stage after the data
// stages ran. `repro validate` does not ask: a paper profile is a valid
// file that needs a -var to run.
type StartChecker interface {
	CheckStart(connected func(port string) bool) error
}

// External is a file or directory outside the store that a stage reads.
type External struct {
	// Name says what it is, for provenance and `repro plan`: the parameter
	// that names it ("path", "hf_checkpoint"), or what the stage reads on
	// its own ("wordnet").
	Name string
	Path string
}

// Artifact is a finished, immutable artifact in the store.
type Artifact struct {
	Kind   Kind
	Dir    string // read-only directory holding its files
	Digest string // content digest of the directory
}

// Path returns the path of a file inside the artifact.
func (a Artifact) Path(name string) string { return filepath.Join(a.Dir, name) }

// Progress receives a stage's progress. Implementations are safe for
// concurrent use; a stage that never reports simply shows "running".
type Progress interface {
	// Update reports that done of total units are finished (total <= 0:
	// unknown), with a short status such as "loss 0.412".
	Update(done, total int, status string)
}

// Device is where a stage runs: Name "cpu" or "cuda:N", and Backend the
// tensor backend family declared for the run ("cpu", "openblas", "cuda"),
// whose kernels a tensor stage's arithmetic goes through.
type Device struct {
	Name    string
	Backend string
}

// Env is what a stage's Run receives.
type Env struct {
	// Params points to a fresh value of the same struct type as
	// StageType.Params, decoded from the stage block (defaults filled).
	Params any
	// Inputs maps each connected input port name to its artifact.
	Inputs map[string]Artifact
	// Outputs maps each output port name to an empty directory that the
	// stage fills; the runner hashes and stores it after Run returns nil.
	Outputs map[string]string
	// Work is a directory private to this stage key that survives a crash
	// (for resumable training checkpoints); removed once the run is stored.
	Work     string
	Seed     int64
	Device   Device
	Progress Progress
	Log      *slog.Logger
	// LogWriter is the raw log file behind Log, for tools that write text.
	LogWriter io.Writer
	// Requests is the cache of language-model requests (see RequestStore);
	// nil where the runner provides none.
	Requests RequestStore
	// Stage and StageKey name this stage run (its node ID and key) for the
	// requests it stores; "" outside the runner.
	Stage, StageKey string
}

// Input returns the named input, or an error naming it when it is absent.
func (e *Env) Input(name string) (Artifact, error) {
	a, ok := e.Inputs[name]
	if !ok {
		return Artifact{}, fmt.Errorf("input %q is not connected", name)
	}
	return a, nil
}

// Output returns the directory for the named output.
func (e *Env) Output(name string) string {
	d, ok := e.Outputs[name]
	if !ok {
		panic(fmt.Sprintf("registry: stage wrote undeclared output %q", name))
	}
	return d
}

// Report passes progress to the runner's display, if it has one.
func (e *Env) Report(done, total int, status string) {
	if e.Progress != nil {
		e.Progress.Update(done, total, status)
	}
}

// Logger returns the stage's logger, or one that discards (a stage run
// outside the runner, as in tests).
func (e *Env) Logger() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// Param describes one parameter of a stage type, derived from the Params
// struct by reflection.
type Param struct {
	Name     string
	Type     cty.Type
	Default  cty.Value
	Doc      string
	Required bool
	// GoKind is the kind of the Go field behind the parameter (an integer
	// kind tells a front end that only whole numbers decode).
	GoKind reflect.Kind
	// Added marks a parameter added to the type after results were cached
	// (tag `key:"added"`): at its default it is left out of the encoded
	// parameters, and so out of the cache key, and a missing attribute
	// decodes to the default. The default must reproduce the type's
	// behaviour from before the parameter existed; then adding it keeps
	// every cached output valid instead of re-running hours of
	// pretraining for a setting nobody changed, and a stage that sets it
	// gets a key of its own.
	Added bool
	// Path marks a string parameter that names something on disk (tag
	// `path:"file"`, `path:"dir"` or `path:"checkpoint"`, a directory with
	// a config.json): the loader resolves a relative value (against the
	// directory of the file that writes it, the working directory for a
	// command-line value) and reports one that does not exist at its line,
	// before anything runs.
	Path  PathKind
	index []int // reflect.Value.FieldByIndex path of the field
}

// PathKind is what a Path parameter names.
type PathKind string

// Path kinds.
const (
	PathFile       PathKind = "file"
	PathDir        PathKind = "dir"
	PathCheckpoint PathKind = "checkpoint" // a Hugging Face model directory: config.json inside
)

// CheckPath reports whether path is what kind says it must be, in words
// naming what is wrong.
func CheckPath(kind PathKind, path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", path)
	case err != nil:
		return err
	case kind == PathFile && fi.IsDir():
		return fmt.Errorf("%s is a directory, not a file", path)
	case (kind == PathDir || kind == PathCheckpoint) && !fi.IsDir():
		return fmt.Errorf("%s is not a directory", path)
	}
	if kind == PathCheckpoint {
		if _, err := os.Stat(filepath.Join(path, "config.json")); err != nil {
			return fmt.Errorf("%s has no config.json: not a Hugging Face model directory", path)
		}
	}
	return nil
}

// leftOut reports whether value v of p stays out of encoded parameters:
// an Added parameter at its default.
func (p Param) leftOut(v cty.Value) bool { return p.Added && v.Equals(p.Default).True() }

// Registry maps stage type names to stage types.
type Registry struct {
	types map[string]*StageType
}

// New returns an empty registry.
func New() *Registry { return &Registry{types: map[string]*StageType{}} }

// Add registers a stage type. It panics on a programming error (duplicate
// name, malformed Params): those are bugs in repro, not user input.
func (r *Registry) Add(t *StageType) {
	if t.Name == "" || t.Run == nil {
		panic("registry: stage type needs a name and a Run function")
	}
	if _, dup := r.types[t.Name]; dup {
		panic("registry: duplicate stage type " + t.Name)
	}
	if _, err := t.ParamSchema(); err != nil {
		panic(fmt.Sprintf("registry: %s: %v", t.Name, err))
	}
	r.types[t.Name] = t
}

// Lookup returns the named stage type.
func (r *Registry) Lookup(name string) (*StageType, bool) {
	t, ok := r.types[name]
	return t, ok
}

// Names returns the registered type names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.types))
	for n := range r.types {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParamSchema lists the parameters of t in declaration order.
//
// A field of the Params struct is a parameter when it is exported and has a
// `cty:"name"` tag. An embedded (anonymous) field of an exported struct type
// without a cty tag is a group of parameters: its parameters are t's as if
// declared in its place (recursively), with their defaults taken from the
// embedded value. A group shared by several stage types may need another
// wording for one of them: a `doc.NAME:"..."` tag on the embedded field
// replaces the doc of parameter NAME of that group. Two parameters with
// one name are an error.
func (t *StageType) ParamSchema() ([]Param, error) {
	if t.Params == nil {
		return nil, nil
	}
	v := reflect.ValueOf(t.Params)
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("Params must be a struct value, got %s", v.Kind())
	}
	var ps []Param
	if err := appendParams(&ps, v, nil, ""); err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for _, p := range ps {
		where := fieldPath(v.Type(), p.index)
		if prev, dup := seen[p.Name]; dup {
			return nil, fmt.Errorf("param %s declared twice (fields %s and %s)", p.Name, prev, where)
		}
		seen[p.Name] = where
	}
	return ps, nil
}

// appendParams appends the parameters of struct value v, whose fields lie
// at index (from the Params struct) and prefix (their Go path, for errors).
func appendParams(ps *[]Param, v reflect.Value, index []int, prefix string) error {
	rt := v.Type()
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		fv := v.Field(i)
		idx := append(append([]int(nil), index...), i)
		name := f.Tag.Get("cty")
		if name == "" && f.Anonymous && (f.Type.Kind() == reflect.Struct || f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct) {
			if f.Type.Kind() != reflect.Struct || !f.IsExported() {
				return fmt.Errorf("embedded field %s%s: a parameter group must be an embedded exported struct type (not a pointer)", prefix, f.Name)
			}
			first := len(*ps)
			if err := appendParams(ps, fv, idx, prefix+f.Name+"."); err != nil {
				return err
			}
			docs, err := docOverrides(f.Tag)
			if err != nil {
				return fmt.Errorf("embedded field %s%s: %v", prefix, f.Name, err)
			}
			for _, n := range slices.Sorted(maps.Keys(docs)) {
				found := false
				for j := first; j < len(*ps); j++ {
					if (*ps)[j].Name == n {
						(*ps)[j].Doc, found = docs[n], true
					}
				}
				if !found {
					return fmt.Errorf("embedded field %s%s: tag doc.%s names no parameter of %s", prefix, f.Name, n, f.Type)
				}
			}
			continue
		}
		if name == "" || !f.IsExported() {
			continue
		}
		ty, err := gocty.ImpliedType(fv.Interface())
		if err != nil {
			return fmt.Errorf("param %s: %v", name, err)
		}
		def, err := gocty.ToCtyValue(fv.Interface(), ty)
		if err != nil {
			return fmt.Errorf("param %s default: %v", name, err)
		}
		*ps = append(*ps, Param{
			Name: name, Type: ty, Default: def,
			Doc: f.Tag.Get("doc"), Required: f.Tag.Get("required") == "true",
			GoKind: f.Type.Kind(), Added: f.Tag.Get("key") == "added", Path: PathKind(f.Tag.Get("path")), index: idx,
		})
	}
	return nil
}

// fieldPath spells the Go path of the field at index in struct type rt.
func fieldPath(rt reflect.Type, index []int) string {
	var parts []string
	for _, i := range index {
		f := rt.Field(i)
		parts = append(parts, f.Name)
		rt = f.Type
	}
	return strings.Join(parts, ".")
}

// docOverrides returns the `doc.NAME:"..."` entries of a struct tag, by
// NAME. It parses the tag as reflect.StructTag.Lookup does.
func docOverrides(tag reflect.StructTag) (map[string]string, error) {
	out := map[string]string{}
	s := string(tag)
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return out, nil
		}
		i := 0
		for i < len(s) && s[i] > ' ' && s[i] != ':' && s[i] != '"' && s[i] != 0x7f {
			i++
		}
		if i == 0 || i+1 >= len(s) || s[i] != ':' || s[i+1] != '"' {
			return nil, fmt.Errorf("malformed struct tag %q", string(tag))
		}
		key := s[:i]
		s = s[i+1:]
		i = 1
		for i < len(s) && s[i] != '"' {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(s) {
			return nil, fmt.Errorf("malformed struct tag %q", string(tag))
		}
		val, err := strconv.Unquote(s[:i+1])
		if err != nil {
			return nil, fmt.Errorf("malformed struct tag %q", string(tag))
		}
		s = s[i+1:]
		if n, ok := strings.CutPrefix(key, "doc."); ok {
			if n == "" {
				return nil, fmt.Errorf("tag %s names no parameter", key)
			}
			out[n] = val
		}
	}
}

// ParamsFromJSON reads an encoded parameter object back from its JSON (a
// cluster job's spec): an Added parameter the JSON leaves out stays out.
func (t *StageType) ParamsFromJSON(b []byte) (cty.Value, error) {
	var present map[string]json.RawMessage
	if err := json.Unmarshal(b, &present); err != nil {
		return cty.NilVal, err
	}
	names := map[string]bool{}
	for k := range present {
		names[k] = true
	}
	return ctyjson.Unmarshal(b, t.ParamTypeOf(names))
}

// ParamTypeOf is the cty object type of an encoded parameter object whose
// attribute names are present: ParamType less the Added parameters that
// EncodeParams left out (they are at their defaults). A reader of encoded
// parameters (a cluster job) decodes with it, so that an absent parameter
// stays absent instead of becoming null.
func (t *StageType) ParamTypeOf(present map[string]bool) cty.Type {
	ps, _ := t.ParamSchema()
	attrs := map[string]cty.Type{}
	for _, p := range ps {
		if present[p.Name] || !p.Added {
			attrs[p.Name] = p.Type
		}
	}
	return cty.Object(attrs)
}

// ParamType is the cty object type of t's parameters.
func (t *StageType) ParamType() cty.Type {
	ps, _ := t.ParamSchema()
	attrs := map[string]cty.Type{}
	for _, p := range ps {
		attrs[p.Name] = p.Type
	}
	return cty.Object(attrs)
}

// DecodeParams turns a complete parameter object (every attribute present,
// already converted to the schema's types) into a pointer to a new value of
// t's Params struct type, field by field (embedded groups included).
func (t *StageType) DecodeParams(obj cty.Value) (any, error) {
	if t.Params == nil {
		return nil, nil
	}
	ps, err := t.ParamSchema()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", t.Name, err)
	}
	fail := func(err error) (any, error) {
		return nil, fmt.Errorf("%s: decoding parameters: %w", t.Name, err)
	}
	if obj.Type() == cty.NilType {
		return fail(fmt.Errorf("no parameter object"))
	}
	if !obj.Type().IsObjectType() {
		return fail(fmt.Errorf("parameters must be an object, got %s", obj.Type().FriendlyName()))
	}
	if obj.IsNull() || !obj.IsKnown() {
		return fail(fmt.Errorf("parameters must be a known, non-null object"))
	}
	attrs := obj.Type().AttributeTypes()
	names := map[string]bool{}
	for _, p := range ps {
		names[p.Name] = true
	}
	extra := make([]string, 0)
	for k := range attrs {
		if !names[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fail(cty.GetAttrPath(extra[0]).NewErrorf("unsupported attribute %q", extra[0]))
	}
	ptr := reflect.New(reflect.TypeOf(t.Params))
	for _, p := range ps {
		field := ptr.Elem().FieldByIndex(p.index)
		if _, ok := attrs[p.Name]; !ok {
			if p.Added {
				if err := gocty.FromCtyValue(p.Default, field.Addr().Interface()); err != nil {
					return fail(cty.GetAttrPath(p.Name).NewError(err))
				}
				continue
			}
			switch field.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
				continue // left nil, as gocty leaves a missing attribute
			}
			return fail(cty.GetAttrPath(p.Name).NewErrorf("missing required attribute %q", p.Name))
		}
		if err := gocty.FromCtyValue(obj.GetAttr(p.Name), field.Addr().Interface()); err != nil {
			return fail(cty.GetAttrPath(p.Name).NewError(err))
		}
	}
	return ptr.Interface(), nil
}

// EncodeParams is DecodeParams' inverse: the parameter object (of type
// ParamType) holding the field values of params, a value of t's Params
// struct type or a pointer to one. An Added parameter at its default is
// left out (see Param.Added).
func (t *StageType) EncodeParams(params any) (cty.Value, error) {
	ps, err := t.ParamSchema()
	if err != nil {
		return cty.NilVal, fmt.Errorf("%s: %v", t.Name, err)
	}
	if t.Params == nil {
		return cty.NilVal, fmt.Errorf("%s: the stage type has no parameters", t.Name)
	}
	v := reflect.ValueOf(params)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if want := reflect.TypeOf(t.Params); !v.IsValid() || v.Type() != want {
		return cty.NilVal, fmt.Errorf("%s: encoding parameters: got %T, want %s or a pointer to it", t.Name, params, want)
	}
	if len(ps) == 0 {
		return cty.EmptyObjectVal, nil
	}
	attrs := make(map[string]cty.Value, len(ps))
	for _, p := range ps {
		a, err := gocty.ToCtyValue(v.FieldByIndex(p.index).Interface(), p.Type)
		if err != nil {
			return cty.NilVal, fmt.Errorf("%s: encoding parameters: %w", t.Name, cty.GetAttrPath(p.Name).NewError(err))
		}
		if p.leftOut(a) {
			continue // at its default: the key of before the parameter existed
		}
		attrs[p.Name] = a
	}
	return cty.ObjectVal(attrs), nil
}

// Output returns the declared output port with that name.
func (t *StageType) Output(name string) (Port, bool) {
	for _, p := range t.Outputs {
		if p.Name == name {
			return p, true
		}
	}
	return Port{}, false
}

// Input returns the declared input port with that name.
func (t *StageType) Input(name string) (Port, bool) {
	for _, p := range t.Inputs {
		if p.Name == name {
			return p, true
		}
	}
	return Port{}, false
}

// Family is the part of the name before the first dot ("data" in "data.sts").
func (t *StageType) Family() string {
	f, _, _ := strings.Cut(t.Name, ".")
	return f
}

// ParamObject is the complete parameter object of t (every parameter, of
// ParamType) holding the defaults with over's values in their place: what
// the dsl makes of a stage block, for callers that build nodes in code
// (tests, tools). An unknown name in over is an error.
func (t *StageType) ParamObject(over map[string]cty.Value) (cty.Value, error) {
	ps, err := t.ParamSchema()
	if err != nil {
		return cty.NilVal, err
	}
	if len(ps) == 0 {
		for k := range over {
			return cty.NilVal, fmt.Errorf("%s has no parameter %q", t.Name, k)
		}
		return cty.EmptyObjectVal, nil
	}
	attrs := map[string]cty.Value{}
	for _, p := range ps {
		attrs[p.Name] = p.Default
	}
	for k, v := range over {
		if _, ok := attrs[k]; !ok {
			return cty.NilVal, fmt.Errorf("%s has no parameter %q", t.Name, k)
		}
		attrs[k] = v
	}
	for _, p := range ps {
		if p.leftOut(attrs[p.Name]) {
			delete(attrs, p.Name) // as EncodeParams leaves it out
		}
	}
	return cty.ObjectVal(attrs), nil
}
