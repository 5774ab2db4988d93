package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestDeviationsRendered: the text and markdown reports end with the
// deviation list, and the JSON carries it under "deviations" ([] when
// there is none) and reads it back.
func TestDeviationsRendered(t *testing.T) {
	t.Parallel()
	r := &Report{Experiment: "gense", Table: "Table 2", Cells: []Cell{{Name: "avg", Row: "GenSE", Column: "Avg", Paper: 82.1, HasPaper: true, Ours: 80, HasOurs: true, Tolerance: 1}},
		Notes: []string{"a note"},
		Deviations: Deviations{{Name: "placeholder", What: "generation prompts' placeholder", Paper: "[X1]", Ours: "[X]", Why: "one placeholder.",
			Tables: []string{"Table 1"}, Evidence: "gense.md Table 1"}, {Name: "cqa", What: "transfer tasks", Paper: "AskUbuntu", Ours: "SemEval CQA", Why: "not here", StandIns: []string{"semeval2016_cqa"}}}}
	var text bytes.Buffer
	WriteText(&text, r, Judge(r, nil, JudgeOptions{}))
	wantText := `
deviations from the paper (2):
  placeholder (Table 1): generation prompts' placeholder
    paper: [X1]
    ours:  [X]
    why:   one placeholder.
    evidence: gense.md Table 1
  cqa: transfer tasks
    paper: AskUbuntu
    ours:  SemEval CQA
    why:   not here
    stand-in data: semeval2016_cqa
`
	if !strings.HasSuffix(text.String(), wantText) {
		t.Errorf("text report does not end with the deviations:\n%s", text.String())
	}
	var md bytes.Buffer
	WriteMarkdown(&md, r)
	wantMD := "\n**Deviations from the paper**\n\n" +
		"- **generation prompts' placeholder** (`placeholder`; Table 1): paper: [X1]; ours: [X]; why: one placeholder. Evidence: gense.md Table 1.\n" +
		"- **transfer tasks** (`cqa`): paper: AskUbuntu; ours: SemEval CQA; why: not here. Stand-in data: semeval2016_cqa.\n"
	if !strings.HasSuffix(md.String(), wantMD) {
		t.Errorf("markdown does not end with the deviations:\n%s", md.String())
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || len(back.Deviations) != 2 || back.Deviations[1].StandIns[0] != "semeval2016_cqa" {
		t.Errorf("round trip: %v %+v", err, back.Deviations)
	}
	b, _ = json.Marshal(&Report{})
	if !bytes.Contains(b, []byte(`"deviations":[]`)) {
		t.Errorf("no deviations: %s", b)
	}
	text.Reset()
	WriteText(&text, &Report{}, nil)
	if strings.Contains(text.String(), "deviations") {
		t.Errorf("an empty list printed: %q", text.String())
	}
}

// TestModuleDeviationsRendered: a module's deviation says where it comes
// from -- its instances and file -- in the text (a "from:" line under its
// title), the markdown (after its name) and the JSON ("modules",
// "source"), which reads back; the experiment's own carry neither.
func TestModuleDeviationsRendered(t *testing.T) {
	t.Parallel()
	r := &Report{Experiment: "syncse", Table: "Table 2", Cells: []Cell{{Name: "avg", Row: "SynCSE", Column: "Avg", Ours: 80, HasOurs: true}},
		Deviations: Deviations{
			{Name: "local_text", What: "pretraining text", Paper: "BooksCorpus", Ours: "the local text", Why: "it is all here", Tables: []string{"MLM"}},
			{Name: "local_text", What: "the generator", Paper: "gpt-3.5-turbo", Ours: "a small GPT-2", Why: "no API here",
				Modules: []string{"module.chat"}, Source: "modules/syncse_chat.hcl", StandIns: []string{"nli"}},
			{Name: "split", What: "the split", Paper: "none", Ours: "5%", Why: "selection", Profile: "mini",
				Modules: []string{"module.open", "module.in"}, Source: "modules/gense_synthesis.hcl"}}}
	var text bytes.Buffer
	WriteText(&text, r, Judge(r, nil, JudgeOptions{}))
	wantText := `
deviations from the paper (3):
  local_text (MLM): pretraining text
    paper: BooksCorpus
    ours:  the local text
    why:   it is all here
  local_text: the generator
    from:  module.chat (modules/syncse_chat.hcl)
    paper: gpt-3.5-turbo
    ours:  a small GPT-2
    why:   no API here
    stand-in data: nli
  split: the split
    from:  module.open, module.in (modules/gense_synthesis.hcl)
    paper: none
    ours:  5%
    why:   selection
`
	if !strings.HasSuffix(text.String(), wantText) {
		t.Errorf("text report:\n%s\nwant it to end with:%s", text.String(), wantText)
	}
	var md bytes.Buffer
	WriteMarkdown(&md, r)
	wantMD := "\n**Deviations from the paper**\n\n" +
		"- **pretraining text** (`local_text`; MLM): paper: BooksCorpus; ours: the local text; why: it is all here.\n" +
		"- **the generator** (`local_text` of `module.chat` (`modules/syncse_chat.hcl`)): paper: gpt-3.5-turbo; ours: a small GPT-2; why: no API here. Stand-in data: nli.\n" +
		"- **the split** (`split` of `module.open`, `module.in` (`modules/gense_synthesis.hcl`)): paper: none; ours: 5%; why: selection.\n"
	if !strings.HasSuffix(md.String(), wantMD) {
		t.Errorf("markdown:\n%s\nwant it to end with:%s", md.String(), wantMD)
	}
	b, err := json.Marshal(r.Deviations)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `[{"name":"local_text","what":"pretraining text","paper":"BooksCorpus","ours":"the local text","why":"it is all here","tables":["MLM"]},` +
		`{"name":"local_text","what":"the generator","paper":"gpt-3.5-turbo","ours":"a small GPT-2","why":"no API here","stand_ins":["nli"],"modules":["module.chat"],"source":"modules/syncse_chat.hcl"},` +
		`{"name":"split","what":"the split","paper":"none","ours":"5%","why":"selection","profile":"mini","modules":["module.open","module.in"],"source":"modules/gense_synthesis.hcl"}]`
	if string(b) != wantJSON {
		t.Errorf("json:\n%s\nwant\n%s", b, wantJSON)
	}
	var back Deviations
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 3 || !back[1].Same(r.Deviations[1]) || back[0].Same(back[1]) || !back[2].Same(r.Deviations[2]) {
		t.Errorf("round trip: %v %+v", err, back)
	}
}
