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
