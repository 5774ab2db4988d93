package text

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/rows"
	"repro/registry"
)

func runSeq2SeqStage(t *testing.T, p *Seq2SeqParams, triplets []rows.Triplet, prepend string) ([]rows.Seq2Seq, string, error) {
	t.Helper()
	r := registryForTest(t)
	st, _ := r.Lookup("text.seq2seq")
	in := t.TempDir()
	if err := rows.Write(filepath.Join(in, registry.FileTriplets), triplets); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]registry.Artifact{"data": {Kind: registry.KindTriplets, Dir: in}}
	if prepend != "" {
		inputs["prepend"] = registry.Artifact{Kind: registry.KindSeq2Seq, Dir: prepend}
	}
	if err := st.ValidateParams(p); err != nil {
		return nil, "", err
	}
	out := t.TempDir()
	env := &registry.Env{Params: p, Inputs: inputs, Outputs: map[string]string{"instances": out}, Work: t.TempDir()}
	if err := st.Call(context.Background(), env); err != nil {
		return nil, "", err
	}
	rs, err := rows.Read[rows.Seq2Seq](filepath.Join(out, registry.FileInstances))
	return rs, out, err
}

// TestSeq2SeqGenSE builds GenSE's generation and discrimination instances
// (Table 1) in a chain of stages.
func TestSeq2SeqGenSE(t *testing.T) {
	ts := []rows.Triplet{{Anchor: "A man sleeps.", Positive: "A person rests.", Negative: "A man runs."},
		{Anchor: "Kids play.", Positive: "Children play."}}
	te := &Seq2SeqParams{Source: `Write two sentences that are entailment. Sentence 1: "[X1]" Sentence 2:`, Target: "[X2]", Hypothesis: "positive"}
	rs, dir, err := runSeq2SeqStage(t, te, ts, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Source != `Write two sentences that are entailment. Sentence 1: "A man sleeps." Sentence 2:` || rs[0].Target != "A person rests." {
		t.Fatalf("entailment instances %+v", rs)
	}
	td := &Seq2SeqParams{Source: `if "[X1]", does this mean that "[X2]"? true or false`, Target: "false", Hypothesis: "negative"}
	rs, _, err = runSeq2SeqStage(t, td, ts, dir)
	if err != nil {
		t.Fatal(err)
	}
	// The triplet without a negative is skipped; the prepended rows come first.
	if len(rs) != 3 || rs[2].Source != `if "A man sleeps.", does this mean that "A man runs."? true or false` || rs[2].Target != "false" || rs[1].Target != "Children play." {
		t.Fatalf("chained instances %+v", rs)
	}
}

func TestSeq2SeqTemplateErrors(t *testing.T) {
	ts := []rows.Triplet{{Anchor: "a", Positive: "b"}}
	for _, tc := range []struct {
		p    Seq2SeqParams
		want string
	}{
		{Seq2SeqParams{Source: "no placeholder", Target: "[X2]", Hypothesis: "positive"}, "source: template \"no placeholder\" has no placeholder"},
		{Seq2SeqParams{Source: "[X1] [X2]", Target: "[X3]", Hypothesis: "positive"}, "target: template \"[X3]\": placeholder [X3]"},
		{Seq2SeqParams{Source: "[X1] [X2]", Target: " ", Hypothesis: "positive"}, "target: empty"},
		{Seq2SeqParams{Source: "[X]", Target: "x", Hypothesis: "both"}, `hypothesis: "both" is not one of`},
	} {
		if _, _, err := runSeq2SeqStage(t, &tc.p, ts, ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.p, err, tc.want)
		}
	}
}
