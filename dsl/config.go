package dsl

import (
	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Options select what Load evaluates.
type Options struct {
	Profile string            // "" = the paper settings (no profile deltas)
	Vars    map[string]string // -var name=value (values parsed as HCL expressions, else strings)
	// Sets are --set overrides "stage.S.attr=v" or "stage.S.attr=v1,v2,..."
	// (a comma list expands into variants, like an ablation).
	Sets     []string
	Ablation string // "" = none; else the ablation block to expand
}

// Config is a loaded, validated experiment.
type Config struct {
	File       string
	Experiment Experiment
	// Variants holds one entry without --set lists or an ablation; else one
	// per grid cell. Each variant is a full pipeline; identical stage
	// instances across variants are the same cached unit.
	Variants  []*Variant
	Expects   []*Expect
	Ablation  *Ablation // the selected ablation, if any
	Profiles  []string  // profile names declared in the file
	Ablations []string  // ablation names declared in the file

	// Varied lists, in axis order, the paths that vary across Variants
	// (the keys of Variant.Label): the columns of an ablation table.
	Varied []string
	// Variables holds the value of every declared variable in the first
	// variant (after -var and profile overrides).
	Variables map[string]cty.Value
	// Repeats describes each repeat block as evaluated in the first variant.
	Repeats []*Repeat
}

// Repeat is an evaluated repeat block.
type Repeat struct {
	Name   string
	Rounds int
	// Outputs are the names usable as repeat.NAME.last.X (the keys of next).
	Outputs []string
	Range   hcl.Range
}

// Experiment is the experiment block.
type Experiment struct {
	Name  string
	Title string
	Table string
	Paper string // citation or file under ../shared/papers
}

// Variant is one cell of an ablation grid (or the single default pipeline).
type Variant struct {
	// Label maps each varied path ("stage.mask.top_k") to this cell's
	// value; empty for the default pipeline.
	Label map[string]cty.Value
	// Name is a short label for people: an explicit variant block's name,
	// "top_k=3" for a grid cell, both joined by ", "; "" for the default
	// pipeline.
	Name   string
	Stages []*Stage // topological order
}

// Stage returns the stage instance with that name, or nil.
func (v *Variant) Stage(name string) *Stage {
	for _, s := range v.Stages {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Stage is one evaluated stage instance.
type Stage struct {
	Name   string // "train"; inside repeat "idc" round 2: "idc[2].train"
	Type   *registry.StageType
	Params cty.Value // complete object: every parameter, defaults filled, converted
	Inputs map[string]Ref
	Seed   int64
	Range  hcl.Range // the stage block's header

	Block  string // the stage block's name ("train" for "idc[2].train")
	Repeat string // the enclosing repeat block, "" at top level
	Round  int    // 1-based round inside Repeat, 0 at top level
}

// Ref points at an output of another stage, and optionally at a path of keys
// inside it (metrics: stage.eval.metrics.avg -> Output "metrics", Path ["avg"]).
type Ref struct {
	Stage  string
	Output string
	Path   []string
	Range  hcl.Range
}

// Expect is one cell of a paper's table.
type Expect struct {
	Name      string
	Row       string // table row label (e.g. "SimCSE-BERT-base (unsup)")
	Column    string // table column label (e.g. "STS12")
	Value     Ref    // our number
	Paper     float64
	Tolerance float64
	// Profile restricts the expectation to one profile ("" = every
	// profile; judged against the paper only in the paper profile).
	Profile string
	Range   hcl.Range
}

// Ablation is a declared grid of overrides and the metrics it tabulates.
type Ablation struct {
	Name   string
	Title  string
	Vary   []Axis
	Report []Ref
	Range  hcl.Range
}

// Axis is one varied attribute ("stage.mask.top_k") and its values.
type Axis struct {
	Path   string
	Values []cty.Value
}
