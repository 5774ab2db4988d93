// Package dsl turns an experiment's HCL file into evaluated stage instances,
// expectations and ablation grids, with diagnostics (file:line:column and a
// source snippet) for every static error, all collected in one pass. It knows
// nothing of how stages run.
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
	Label  map[string]cty.Value
	Stages []*Stage // topological order
}

// Stage is one evaluated stage instance.
type Stage struct {
	Name   string // "train"; inside repeat "idc" round 2: "idc[2].train"
	Type   *registry.StageType
	Params cty.Value // complete object: every parameter, defaults filled, converted
	Inputs map[string]Ref
	Seed   int64
	Range  hcl.Range // the stage block's header
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
