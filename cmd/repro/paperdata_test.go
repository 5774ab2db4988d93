package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/cmd/repro/view"
	"repro/experiment"
	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
	"repro/registry/builtin"
)

// The fixtures the paper profiles' variables are given, relative to the
// repository root: the data files are internal/dataset's, each in its
// dataset's published layout (read by internal/dataset/paper.go's readers,
// whose tests use the same files); the weights are the tiny Hugging Face
// checkpoints registry/builtin's tests load (config.json, safetensors,
// tokenizer files).
const (
	fxSimCSENLI      = "internal/dataset/testdata/paper/nli_for_simcse.csv"              // SimCSE's NLI: CSV, header sent0,sent1,hard_neg
	fxWiki1M         = "internal/dataset/testdata/paper/wiki1m_for_simcse.txt"           // SimCSE's wiki1m: one sentence a line
	fxC4             = "internal/dataset/testdata/paper/c4-train.00000-of-01024.json.gz" // allenai/c4 en: gzipped JSON lines {text, timestamp, url}
	fxMIND           = "internal/dataset/testdata/paper/news.tsv"                        // MIND news.tsv: 8 TAB-separated columns, no header
	fxAskUbuntu      = "internal/dataset/testdata/paper/askubuntu-test.jsonl.gz"         // MTEB askubuntudupquestions-reranking test.jsonl.gz
	fxAskUbuntuTrain = "internal/dataset/testdata/paper/askubuntu-train.txt"             // USEB data-train/askubuntu/unsupervised/train.txt
	ckBERT           = "registry/builtin/testdata/hf/bert"                               // a tiny BertModel checkpoint
	ckGPT2           = "registry/builtin/testdata/hf/gpt2"                               // a tiny GPT-2 checkpoint
	ckT5             = "registry/builtin/testdata/hf/t5"                                 // a tiny T5 checkpoint
	// No RoBERTa checkpoint is committed: the BERT one stands for it (the
	// stages take either; plan reads its config.json for the cost).
	ckRoBERTa = ckBERT
)

// paperProfile is one experiment file's paper profile as a reviewer runs
// it: every variable that names a local file or directory, by what it is,
// with the fixture the test gives it.
type paperProfile struct {
	// data: a paper's dataset in its published format; run refuses to
	// start without it, naming it as -var NAME=FILE.
	data map[string]string
	// weights: the checkpoint the pipeline starts from; run refuses to
	// start without it, naming it as -var NAME=DIR.
	weights map[string]string
	// released: an authors' released model; given, it adds its rows;
	// unset, nothing refuses (TestReleasedRows).
	released map[string]string
	// noted: declared for a reader, read by no stage (a path to run the
	// file again with).
	noted []string
}

// paperProfiles covers every file under experiments/ (the test fails on a
// file or a path variable missing here).
var paperProfiles = map[string]paperProfile{
	// Nothing by -var: BERT's recipe on the local text, from scratch.
	"pretrained": {},
	// Nothing by -var: GloVe and TF-IDF on the data directory's sets.
	"baselines": {},
	"lm": {weights: map[string]string{
		"gpt2": ckGPT2, // GPT-2 (the paper profile's starting weights)
	}},
	"t5": {weights: map[string]string{
		"t5": ckT5, // T5-base, whose span corruption continues
	}},
	"simcse": {
		data: map[string]string{
			"wiki1m":     fxWiki1M,    // the unsup rows' sentences
			"simcse_nli": fxSimCSENLI, // the sup rows' triplets
		},
		weights: map[string]string{
			"bert":    ckBERT,    // bert-base-uncased
			"roberta": ckRoBERTa, // roberta-base
		},
		released: map[string]string{
			"released_unsup_bert":    ckBERT, // princeton-nlp/unsup-simcse-bert-base-uncased
			"released_unsup_roberta": ckBERT, // princeton-nlp/unsup-simcse-roberta-base
			"released_sup_bert":      ckBERT, // princeton-nlp/sup-simcse-bert-base-uncased
			"released_sup_roberta":   ckBERT, // princeton-nlp/sup-simcse-roberta-base
		},
	},
	"paser": {
		data: map[string]string{
			"simcse_nli": fxSimCSENLI, // the supervised stage's NLI
			"askubuntu":  fxAskUbuntu, // Table 3's reranking
		},
		weights: map[string]string{
			"bert": ckBERT, // bert-base-uncased
		},
	},
	"dino": {
		// X1 is STS-B train, in the data directory: no dataset by -var
		// beyond the authors' released ones.
		weights: map[string]string{
			"gpt2":    ckGPT2,    // GPT2-XL, the generator
			"bert":    ckBERT,    // bert-base-uncased, Table 1's [CLS]/avg rows
			"roberta": ckRoBERTa, // roberta-base, Sentence-RoBERTa
		},
		released: map[string]string{
			"released_x2":   fxReleasedDINO, // timoschick/dino's sts-dino-x2.jsonl
			"released_x1x2": fxReleasedDINO, // sts-dino-x1x2.jsonl: the same layout
		},
	},
	"infocse": {
		data: map[string]string{
			"mind": fxMIND, // MIND's news and headlines
		},
		weights: map[string]string{
			"bert": ckBERT, // bert-base-uncased
		},
	},
	"gense": {
		data: map[string]string{
			"simcse_nli":      fxSimCSENLI,      // the generator/discriminator's and the contrastive stage's NLI
			"c4":              fxC4,             // the unlabeled sentences
			"askubuntu":       fxAskUbuntu,      // Table 3's AskUbuntu column
			"askubuntu_train": fxAskUbuntuTrain, // domain adaptation's in-domain sentences
		},
		weights: map[string]string{
			"t5": ckT5, // T5-base: generator, discriminator and encoders
		},
		released: map[string]string{
			"released_gense":      ckT5,    // mattymchen/gense-base
			"released_gense_plus": ckT5,    // mattymchen/gense-base-plus
			"released_synli":      fxSyNLI, // mattymchen/synli, exported to TSV
		},
		noted: []string{"t5_small"}, // Table 5: the file run again with -var t5=<t5-small>
	},
	"syncse": {
		data: map[string]string{
			"simcse_nli": fxSimCSENLI, // SynCSE-partial's premises, the exemplars, the sup-SimCSE row
			"wiki1m":     fxWiki1M,    // the unsup-SimCSE row, the scratch calls' examples
			"askubuntu":  fxAskUbuntu, // Table 3's reranking
			"c4":         fxC4,        // Table 4's GenSE row (module gense's unlabeled sentences)
		},
		weights: map[string]string{
			"roberta": ckRoBERTa, // roberta-base
			"t5":      ckT5,      // T5-base, Table 4's GenSE row
		},
		released: map[string]string{
			"released_partial":       ckBERT,           // hkust-nlp/SynCSE-partial-RoBERTa-base
			"released_scratch":       ckBERT,           // hkust-nlp/SynCSE-scratch-RoBERTa-base
			"released_partial_large": ckBERT,           // hkust-nlp/SynCSE-partial-RoBERTa-large
			"released_scratch_large": ckBERT,           // hkust-nlp/SynCSE-scratch-RoBERTa-large
			"released_partial_data":  fxSynCSEReleased, // hkust-nlp/SynCSE-partial-NLI's train.csv
			"released_scratch_data":  fxSynCSEReleased, // hkust-nlp/SynCSE-scratch-NLI's train.csv
		},
	},
}

// repoPath is a repository-relative path as an absolute one.
func repoPath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// vars are p's -var values as absolute paths to their fixtures: its data
// and weights, and its released artifacts too when released is true.
func (p paperProfile) vars(t *testing.T, released bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	ms := []map[string]string{p.data, p.weights}
	if released {
		ms = append(ms, p.released)
	}
	for _, m := range ms {
		for k, v := range m {
			out[k] = repoPath(t, v)
		}
	}
	return out
}

// varArgs are vars as -var flags, in name order (a plan's output does not
// depend on it; a failure message reads the same run after run).
func varArgs(vars map[string]string) []string {
	var args []string
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		args = append(args, "-var", k+"="+vars[k])
	}
	return args
}

// planJSON is `repro plan FILE --json` with vars and the extra flags; a
// plan that fails, prints no plan or says the run would refuse fails the
// test.
func planJSON(t *testing.T, file string, vars map[string]string, extra ...string) view.Plan {
	t.Helper()
	args := append(append([]string{"plan", file, "--json"}, varArgs(vars)...), extra...)
	code, out, errs := repro(t, args...)
	var plan view.Plan
	if err := json.Unmarshal([]byte(out), &plan); code != 0 || err != nil {
		t.Fatalf("%s: plan: exit %d (%v)\n%s%s", file, code, err, out, errs)
	}
	if plan.Refused != nil {
		t.Fatalf("%s: plan says run would refuse: %+v", file, plan.Refused)
	}
	return plan
}

// paperVars are the -var values of every paper profile's data and weights
// (not the released models), as absolute paths to their fixtures.
func paperVars(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, p := range paperProfiles {
		maps.Copy(out, p.vars(t, false))
	}
	return out
}

// TestPaperProfilesNeedTheirData: every experiment's paper profile, run
// without its data and weights variables, refuses before any stage starts,
// naming each missing dataset's -var NAME=FILE and each checkpoint's -var
// NAME=DIR; given the fixtures (and the released models' checkpoints),
// `repro plan` plans the whole paper profile -- no refusal, every stage of
// the graph and every table cell's stage planned -- and each of its
// ablations.
func TestPaperProfilesNeedTheirData(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	t.Setenv("REPRO_CACHE", filepath.Join(t.TempDir(), "cache"))
	files, err := filepath.Glob("../../experiments/*.hcl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiments: %v", err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".hcl")
		seen[name] = true
		p, ok := paperProfiles[name]
		if !ok {
			t.Errorf("%s: not in paperProfiles: say which of its variables are data, weights or released models", file)
			continue
		}
		t.Run(name, func(t *testing.T) { checkPaperProfile(t, file, p) })
	}
	for name := range paperProfiles {
		if !seen[name] {
			t.Errorf("paperProfiles lists %s, which experiments/ does not hold", name)
		}
	}
}

func checkPaperProfile(t *testing.T, file string, p paperProfile) {
	// Every variable the paper profile leaves an empty path is in the
	// table, and everything in the table is declared.
	x, _, _, err := experiment.Load(builtin.Default(), file, experiment.Options{})
	if err != nil {
		t.Fatalf("load without variables: %v", err)
	}
	listed := map[string]bool{}
	for _, m := range []map[string]string{p.data, p.weights, p.released} {
		for k := range m {
			listed[k] = true
		}
	}
	for _, k := range p.noted {
		listed[k] = true
	}
	for k, v := range x.Config.Variables {
		if v.Type() == cty.String && v.IsKnown() && !v.IsNull() && v.AsString() == "" && !listed[k] {
			t.Errorf("variable %q (empty by default) is not in paperProfiles: data, weights, released or noted?", k)
		}
	}
	for k := range listed {
		if _, ok := x.Config.Variables[k]; !ok {
			t.Errorf("paperProfiles names variable %q, which the file does not declare", k)
		}
	}

	// Without its data and weights: exit 1 before any stage starts, each
	// missing one named. (A file that needs nothing would run: not here.)
	if len(p.data)+len(p.weights) > 0 {
		code, out, errs := repro(t, "run", file)
		all := out + errs
		if code != 1 || strings.Contains(all, "running ") || !strings.Contains(all, "the run cannot start (nothing ran)") {
			t.Errorf("run without its variables: exit %d, want 1 and nothing run:\n%s", code, all)
		}
		for k := range p.data {
			if !strings.Contains(all, "-var "+k+"=FILE") {
				t.Errorf("the refusal does not name -var %s=FILE:\n%s", k, all)
			}
		}
		for k := range p.weights {
			if !strings.Contains(all, "-var "+k+"=DIR") {
				t.Errorf("the refusal does not name -var %s=DIR:\n%s", k, all)
			}
		}
	}

	// With the fixtures: the whole paper profile plans, and each ablation.
	vars := p.vars(t, true)
	args := varArgs(vars)
	for _, ablation := range append([]string{""}, x.Config.Ablations...) {
		x, _, _, err := experiment.Load(builtin.Default(), file, experiment.Options{Vars: vars, Ablation: ablation})
		if err != nil {
			t.Errorf("ablation %q: load with the fixtures: %v", ablation, err)
			continue
		}
		cmd := append([]string{"plan", file, "--json"}, args...)
		if ablation != "" {
			cmd = append(cmd, "--ablation", ablation)
		}
		code, out, errs := repro(t, cmd...)
		var plan view.Plan
		if err := json.Unmarshal([]byte(out), &plan); code != 0 || err != nil {
			t.Errorf("ablation %q: plan with the fixtures: exit %d (%v)\n%s%s", ablation, code, err, out, errs)
			continue
		}
		if plan.Refused != nil {
			t.Errorf("ablation %q: plan says run would refuse: %+v", ablation, plan.Refused)
		}
		var planned []string
		for _, s := range plan.Stages {
			if s.Action != "run" && s.Action != "cached" && s.Action != "mirror" {
				t.Errorf("ablation %q: stage %s: %s, want planned to run or cached", ablation, s.ID, s.Action)
			}
			planned = append(planned, s.ID)
		}
		var nodes []string
		for _, n := range x.Graph.Nodes {
			nodes = append(nodes, n.ID)
		}
		slices.Sort(planned)
		slices.Sort(nodes)
		if !slices.Equal(planned, nodes) || len(nodes) == 0 {
			t.Errorf("ablation %q: planned %d stages %v; the paper profile's graph has %d: %v", ablation, len(planned), planned, len(nodes), nodes)
		}
		if ablation != "" {
			continue
		}
		// Every table cell's stage is among them: the whole table, the
		// released rows included.
		ids := x.IDMaps[0]
		cells := 0
		for _, e := range x.Config.Expects {
			if e.Pending != "" || (e.Profile != "" && e.Profile != x.Profile) {
				continue
			}
			cells++
			if id, ok := ids[e.Value.Stage]; !ok || !slices.Contains(planned, id) {
				t.Errorf("cell %s: its stage %s is not planned", e.Name, e.Value.Stage)
			}
		}
		for k := range p.released {
			// released_KEY["KEY"] (a block per model) or released["KEY"].
			one := fmt.Sprintf("released[%q]", strings.TrimPrefix(k, "released_"))
			if !strings.Contains(strings.Join(planned, " "), k) && !slices.Contains(planned, one) {
				t.Errorf("-var %s given: no stage of its row is planned", k)
			}
		}
		if cells == 0 {
			t.Errorf("the paper profile has no cell to compute")
		}
	}
}
