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
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/gocty"
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
	// tags. Its field values are the defaults. A nil Params means none.
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
	Run    func(ctx context.Context, env *Env) error
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

// Device is where a tensor stage should run: "cpu" or "cuda:N".
type Device struct {
	Name string
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

// Param describes one parameter of a stage type, derived from the Params
// struct by reflection.
type Param struct {
	Name     string
	Type     cty.Type
	Default  cty.Value
	Doc      string
	Required bool
	field    int
}

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
func (t *StageType) ParamSchema() ([]Param, error) {
	if t.Params == nil {
		return nil, nil
	}
	v := reflect.ValueOf(t.Params)
	if v.Kind() != reflect.Struct {
		return nil, fmt.Errorf("Params must be a struct value, got %s", v.Kind())
	}
	rt := v.Type()
	var ps []Param
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		name := f.Tag.Get("cty")
		if name == "" || !f.IsExported() {
			continue
		}
		ty, err := gocty.ImpliedType(v.Field(i).Interface())
		if err != nil {
			return nil, fmt.Errorf("param %s: %v", name, err)
		}
		def, err := gocty.ToCtyValue(v.Field(i).Interface(), ty)
		if err != nil {
			return nil, fmt.Errorf("param %s default: %v", name, err)
		}
		ps = append(ps, Param{
			Name: name, Type: ty, Default: def,
			Doc: f.Tag.Get("doc"), Required: f.Tag.Get("required") == "true", field: i,
		})
	}
	return ps, nil
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
// t's Params struct type.
func (t *StageType) DecodeParams(obj cty.Value) (any, error) {
	if t.Params == nil {
		return nil, nil
	}
	ptr := reflect.New(reflect.TypeOf(t.Params))
	if err := gocty.FromCtyValue(obj, ptr.Interface()); err != nil {
		return nil, fmt.Errorf("%s: decoding parameters: %v", t.Name, err)
	}
	return ptr.Interface(), nil
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
