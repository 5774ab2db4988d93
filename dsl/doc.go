// Package dsl turns an experiment's HCL file into evaluated stage instances,
// expectations and ablation grids, with diagnostics (file:line:column and a
// source snippet) for every static error, all collected in one pass. It knows
// nothing of how stages run: it needs only a *registry.Registry for stage
// types, their parameter schemas and their typed input/output ports.
//
// # Pipeline
//
// Load parses (hclsyntax), decodes the top level with Body.Content into a
// static model of unevaluated expressions (decode.go, after Terraform's
// configs package), then evaluates that model once per variant (eval.go):
// variables, locals, stage parameters, input references, repeat rounds, and
// finally a topological sort of the stage instances (graph.go). Syntax errors
// stop the load before decoding, since a broken tree only yields misleading
// follow-up errors; from decoding on, every error is collected, deduplicated
// (each variant and round re-evaluates the same expressions) and sorted by
// position.
//
// # Stage attributes
//
// In a stage block, `uses` names the type and `seed` overrides the
// experiment's seed; every other attribute is an input (its name is a
// declared input port: the value must be a reference, and the referenced
// output's kind must equal the port's kind) or a parameter (evaluated with
// var., local. and go-cty's pure stdlib functions, converted to the schema
// type; null means "use the default"). Params is the complete parameter
// object in canonical form: it is decoded into the type's Go struct and
// encoded back, so `lr = 3e-5`, `lr = 0.00003` and an omitted default of
// 3e-5 are the same value, and formatting, comments, attribute order and
// other stages' names never change it (the runner's cache key hashes it).
// A relative path resolves where its value is written, through locals,
// each.value and conditionals: a -var's against the working directory, one
// written in a file (a literal, a variable's default, a profile's or module
// argument's value) against that file's directory (paths.go).
//
// # References
//
//	stage.S.OUT[.key...]           an output of stage S (keys only for metrics)
//	previous.X                     inside a repeat: start.X in round 1, else next.X of the round before
//	repeat.R.last.X[.key...]       next.X of the last round
//	repeat.R.round[N].X[.key...]   next.X of round N
//	local.NAME[.key...]            an output a local value holds (locals { m = { bert = stage.b.model } })
//	repeat.R["KEY"].last.X         the same, for instance KEY of a repeat with for_each
//
// Edges of the DAG come from these references alone (a local that holds
// references gives the edges of the references it holds; local_refs.go). Stage names are one
// namespace across the file, including stages inside repeat blocks; inside a
// repeat, stage.S for an inner S means this round's instance, named
// "R[round].S". Because a round's instances depend only on earlier rounds,
// raising `rounds` adds instances and leaves earlier rounds' instances
// (names, parameters, inputs) unchanged. `next` keys without a `start`
// counterpart are per-round results (metrics) that are never carried.
// `until = { metric = stage.S.metrics.KEY, patience = N }` makes `rounds` the
// most rounds: after each round the runner reads that round's metric and
// stops once N rounds in a row have not beaten the best; repeat.R.last then
// reads the best round, and repeat.R.round[N] cannot be read from outside
// (which rounds run is known only at run time). See loop.go.
//
// # for_each
//
// A top-level stage block with `for_each` (a list or set of strings, a map
// or object, or stage.NAME of another for_each stage, or stages listed by
// key, { bert = stage.bert }) is one instance per key, named NAME["KEY"],
// with each.key and each.value in scope. References
// name an instance as stage.NAME["KEY"].OUTPUT (the key may be computed) or
// each.value.OUTPUT; override paths as stage.NAME["KEY"].ATTR. for_each must
// be known at load time, so it never reads a stage output. See foreach.go.
// A repeat block with for_each is one loop per key, R["KEY"], its inner
// stages R["KEY"][N].S, each.key and each.value in its rounds, until,
// start, next and stages. See repeat_foreach.go.
//
// # Modules
//
// A `module "M" { source = "./file.hcl" }` block makes the stages of another
// file usable as module.M.STAGE.OUTPUT, so that a stage several experiments
// share (the pretrained mini encoders) is declared once. Only the module
// stages the including file reaches become instances ("module.M.STAGE"); the
// selected profile propagates by name; diagnostics point into the file at
// fault. See module.go. A module file declares the artifacts it takes
// (`input "NAME" { kind = "..." }`, read as input.NAME) and may name what it
// gives (`output "NAME" { value = ... }`, read as module.M.NAME); each module
// block is its own set of instances. See module_inputs.go. Of a module's
// experiment block, seed seeds its stages and title names its tables in the
// including file's deviation list; its expect, table and ablation blocks
// are ignored.
//
// # Deviations
//
// A `deviation "NAME" { what, paper, ours, why, tables, evidence, stand_ins, profiles }`
// block declares one difference from the paper as data: at top level for
// every profile (or those its `profiles` list names, "paper" the default
// one), inside a profile block for that profile; the report prints
// the selected profile's under the table (Config.Deviations), then those of
// the modules whose stages it runs, each naming its module instances and
// file, the module's tables named with its title up to the first colon
// ("GenSE Table 2"). In the paper profile a stage that reads a dataset the
// catalogue marks as a stand-in (registry.StageType.StandIns) must be named
// by a top-level deviation's stand_ins (the file's, or for a module's stage its
// module's), or the file does not load. See deviation.go.
//
// # Expectations
//
// An expect block is one cell of a paper's table: `value` (a metrics
// reference with a key path), optional `paper` (absent or null: Expect.Paper
// is NaN, a cell only we report), `tolerance`, `row`, `column`, `profile`,
// `lower_is_better`, `count` (a count: recorded and checked exactly on every
// backend) and `max_tolerance` (the widest tolerance a baseline may record
// for the cell); instead of `value`, `pending = "why"` declares a
// cell only the paper reports (shown with its reason, never judged). With `for_each` (a map or object, Terraform-style)
// a block is a whole table row: one Expect per element, named BLOCK[KEY],
// with each.key and each.value in scope; elements keep the order written in
// an object constructor (directly or as local.NAME), since a paper's column
// order is meaningful and cty objects have none. In `value`, the keys after
// stage.NAME.OUTPUT may be computed (metrics[lower(each.key)],
// metrics[local.metric[each.key]]); the stage and output stay literal, being
// DAG edges. See expect.go.
//
// A `table "T" { columns = ..., row "NAME" { stage, paper, ... } }` block
// states a paper table as rows x columns and lowers to exactly the Expects of
// the equivalent expect blocks (cells ROW[COLUMN]). A row with for_each is
// one row per key (named by `name`, else LABEL[KEY]); `enabled = false`
// leaves a row out before the rest of it is evaluated (a row that reads an
// instance present only with its -var). See table.go.
//
// # Ablation tables
//
// An ablation may carry the paper's numbers (`paper`, per variant name,
// aligned with `report`), column labels (`columns`) and a line figure of the
// first report column over its single numeric axis (`figure`). They are
// checked only when the ablation is expanded, against the declared grid
// (not --set lists), because variant names come from evaluated values. The
// exact key forms are in ablation.go. A `variant` block with `for_each` is
// one variant per key (named by the key; `each` in its `set` and `paper`),
// evaluated once before the grid is built; `report` may be any expression
// giving metric keys (a local shared by several ablations).
//
// # Overrides and variants
//
// Profiles, ablations, -var and --set all produce (path, expression)
// overrides, evaluated exactly like attributes written in the file. Paths are
// stage.S.ATTR (any input, parameter or seed), module.M.S.ATTR (a stage of a
// module block, the value evaluated here: module_paths.go), repeat.R.rounds
// and var.NAME.
// A profile's stage block may name several stages or instances,
// stage "A" "B" { ... }, as one block per label (a stage's own block wins;
// profile_shared.go).
// Precedence, lowest first: the file, the selected profile (stage blocks,
// repeat blocks, `variables = {...}`), -var, the grid cell (ablation `vary`
// axes, explicit `variant` blocks as one more axis, --set lists), then
// single-valued --set. A --set list on a path the ablation varies replaces
// that axis. Each cell of the cartesian product is a full Variant; identical
// stage instances across variants are the same cached unit.
//
// Command-line values live in synthetic files ("--set", "-var",
// "--profile", "--ablation"), one flag per line, so their diagnostics carry
// ranges and snippets like any other (see Loader.Files and Render).
package dsl
