package dsl

import (
	"repro/graph"
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
	// Slurm holds the file's and the profile's slurm { } settings.
	Slurm Slurm
	// Deviations are the declared differences from the paper of the
	// selected profile: the file's top-level deviation blocks that hold for
	// it (their profiles list), then the profile's own.
	Deviations []*Deviation

	mod *module // the file's static model (TargetProblem)
}

// Deviation is one declared difference from the paper: what differs, the
// paper's value or reading, ours, why, and the tables it touches.
type Deviation struct {
	Name     string
	Profile  string // the profile that declares it; "" at top level
	What     string
	Paper    string
	Ours     string
	Why      string
	Evidence string // where the paper says what the reading rests on ("" if none given)
	Tables   []string
	// Profiles are the profiles a top-level deviation is limited to
	// ("paper": the default profile); nil: every profile.
	Profiles []string
	// StandIns are the data directory's stand-in datasets the paper
	// profile reads in the paper's place because of this deviation.
	StandIns []string
	// Modules are the module instances that declare it ("module.chat";
	// nested: "module.chat.module.lm"), nil for the file's own; one
	// entry names every instance of a module file used twice when the
	// text is the same (deviation.go). Source is that module's file,
	// relative to the including file's directory.
	Modules []string
	Source  string
	Range   hcl.Range
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
	// MinAgreement is the experiment's `min_agreement`: the share of the
	// paper's orderings an ablation with paper values must reproduce
	// (0: no minimum), unless the ablation declares its own.
	MinAgreement float64
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
	// Graph is the pipeline of Stages as the runner takes it: one node per
	// stage instance, in the same order, with its source position.
	Graph *graph.Graph
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
	// Resources is what one run needs (the stage type's defaults under the
	// resources blocks that apply).
	Resources registry.Resources

	Block  string // the stage block's name ("train" for "idc[2].train" and train["sts"])
	Key    string // a for_each instance's key ("sts" for train["sts"]; "1k" for pp["1k"][2].ft, an instance of a for_each repeat), else ""
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

// Expect is one cell of a paper's table. An expect block with for_each
// yields one Expect per element, named "BLOCK[KEY]" in source order.
type Expect struct {
	Name   string // "sts_avg"; from a for_each block "simcse_unsup[STS12]"
	Block  string // the expect block's label ("simcse_unsup")
	Key    string // the for_each key ("STS12"); "" without for_each
	Row    string // table row label (e.g. "SimCSE-BERT-base (unsup)")
	Column string // table column label (e.g. "STS12")
	Value  Ref    // our number
	// Paper is the paper's number, or NaN when the block gives none (or
	// `paper = null`): a cell only we report, such as TF-IDF. Test with
	// math.IsNaN; NaN is never judged against a tolerance.
	Paper     float64
	Tolerance float64
	// LowerIsBetter marks metrics where a smaller number is better
	// (alignment, uniformity): `lower_is_better = true`.
	LowerIsBetter bool
	// Count marks a count (kept triplets, clusters, pairs, tokens):
	// `count = true`; a baseline records it exactly and check compares it
	// exactly on every backend.
	Count bool
	// MaxTolerance is the widest tolerance a baseline may record for the
	// cell (`max_tolerance`; 0: none declared, the value itself bounds it).
	MaxTolerance float64
	// Profile restricts the expectation to one profile ("" = every
	// profile; judged against the paper only in the paper profile).
	Profile string
	// Pending, set by `pending = "why"` in a block without `value`, marks
	// a cell we do not compute -- a row the paper copied from another
	// paper, or one waiting on other work -- shown with the paper's value
	// and the reason, never judged.
	Pending string
	Range   hcl.Range
}

// Ablation is a declared grid of overrides and the metrics it tabulates.
type Ablation struct {
	Name   string
	Title  string
	Vary   []Axis
	Report []Ref
	// Columns labels the Report columns: the block's `columns`, else each
	// reference's metric key path ("stsb.spearman"), prefixed by the stage
	// name ("eval.avg") for all columns when two would read the same.
	Columns []string
	// Paper holds the paper's numbers per variant, aligned with Report,
	// keyed by Variant.Name as the declared grid names it ("none",
	// "mask.top_k=1", "mask.top_k=1, train.layers=2"). A null in the HCL
	// list is NaN (a cell the paper leaves empty). Variants that --set
	// lists add or change have no entry.
	Paper map[string][]float64
	// Figure is the plot to draw of Report[0] against the single numeric
	// axis; nil when the block has no `figure`.
	Figure *Figure
	// MinAgreement is the share of the paper's pairwise orderings of the
	// cells that ours must reproduce for `repro check` to pass (the
	// ablation's `min_agreement`, else the experiment's; 0: none).
	MinAgreement float64
	// PaperResolution is the ablation's `paper_resolution`: per column, the
	// smallest difference between two of the paper's cells that counts as
	// the paper ordering them (report.Resolved); nil when not declared.
	PaperResolution []float64
	Range           hcl.Range
}

// Figure describes an ablation's line plot (e.g. PaSeR's decoder-depth
// figure): the first Report column against the varied axis Axis.
type Figure struct {
	File   string // output file name, e.g. "figure4.png"
	Title  string
	XLabel string // default: Axis
	YLabel string // default: Columns[0]
	Axis   string // the varied path, e.g. "stage.train.decoder_layers"
	Range  hcl.Range
}

// Axis is one varied attribute ("stage.mask.top_k") and its values.
type Axis struct {
	Path   string
	Values []cty.Value
}
