package data

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/datadir/datadirtest"
	"repro/internal/dataset"
	"repro/internal/rows"
	"repro/registry"
)

// rerankArtifact runs data.rerank for split into an artifact.
func rerankArtifact(t *testing.T, split string) registry.Artifact {
	t.Helper()
	out, err := run(t, "data.rerank", map[string]cty.Value{"split": cty.StringVal(split)})
	if err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Kind: registry.KindRerank, Dir: out, Digest: split}
}

func runRerankSentencesOn(t *testing.T, in map[string]registry.Artifact, p RerankSentencesParams) (string, error) {
	out := t.TempDir()
	env := &registry.Env{Params: &p, Inputs: in, Outputs: map[string]string{"sentences": out}, Seed: 42}
	return out, rerankSentencesType().Call(context.Background(), env)
}

func TestRerankSentences(t *testing.T) {
	useData(t)
	train, dev := rerankArtifact(t, "train_part2"), rerankArtifact(t, "dev")
	p := RerankSentencesParams{Fields: []string{"query", "positive", "negative"}, Split: true, MinWords: 5, MaxWords: 40}
	out, err := runRerankSentencesOn(t, map[string]registry.Artifact{"queries": train, "exclude": dev}, p)
	if err != nil {
		t.Fatal(err)
	}
	ss := mustRead[rows.Sentence](t, filepath.Join(out, registry.FileSentences))
	var c struct{ Texts, Excluded, Kept int }
	b, err := os.ReadFile(filepath.Join(out, "rerank_sentences.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	// 57 queries and 570 related questions; dev and train_part2 share 66
	// texts, whose sentences must all go.
	if c.Texts != 57+256+314 || c.Kept != len(ss) || c.Excluded == 0 || len(ss) < 500 {
		t.Fatalf("counts %+v, %d sentences", c, len(ss))
	}
	devTexts := map[string]bool{}
	qs := mustRead[rows.RerankQuery](t, dev.Path(registry.FileQueries))
	for _, x := range rerankTexts(qs, []string{"query", "positive", "negative"}) {
		devTexts[strings.Join(strings.Fields(x), " ")] = true
	}
	for _, s := range ss {
		if n := len(strings.Fields(s.Text)); n < 5 || n > 40 {
			t.Errorf("%q: %d words", s.Text, n)
		}
		if devTexts[s.Text] {
			t.Errorf("%q is an evaluation text", s.Text)
		}
	}
	// max takes a seeded sample.
	p.Max = 50
	out, err = runRerankSentencesOn(t, map[string]registry.Artifact{"queries": train, "exclude": dev}, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead[rows.Sentence](t, filepath.Join(out, registry.FileSentences)); len(got) != 50 || got[0] == ss[0] && got[1] == ss[1] {
		t.Errorf("max 50: %d sentences, first %q", len(got), got[0].Text)
	}
}

func TestRerankSentencesBadInput(t *testing.T) {
	useData(t)
	dev := rerankArtifact(t, "dev")
	p := RerankSentencesParams{Fields: []string{"query"}, Split: true, MinWords: 1}
	// The evaluation split as training text.
	if _, err := runRerankSentencesOn(t, map[string]registry.Artifact{"queries": dev, "exclude": dev}, p); err == nil ||
		!strings.Contains(err.Error(), `split = "train_part2"`) {
		t.Errorf("dev as queries: %v", err)
	}
	other := registry.Artifact{Kind: registry.KindRerank, Dir: dev.Dir, Digest: "copy"}
	if _, err := runRerankSentencesOn(t, map[string]registry.Artifact{"queries": other, "exclude": dev}, p); err == nil ||
		!strings.Contains(err.Error(), "no in-domain sentences left") || !strings.Contains(err.Error(), "train_part2") {
		t.Errorf("a copy of dev as queries: %v", err)
	}
	for _, bad := range []RerankSentencesParams{
		{Fields: []string{"answer"}},
		{Fields: []string{"query"}, MinWords: 10, MaxWords: 5},
		{Fields: nil},
	} {
		if _, err := runRerankSentencesOn(t, map[string]registry.Artifact{"queries": dev}, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	// A data directory without the training split says which file is
	// missing.
	src := datadirtest.Dir(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "rerank"), 0o755)
	b, err := os.ReadFile(filepath.Join(src, "rerank/semeval2016_cqa_dev.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "rerank/semeval2016_cqa_dev.jsonl.gz"), b, 0o644)
	catalogue = func() *dataset.Catalogue { return &dataset.Catalogue{Dirs: []string{dir}} }
	if _, err := run(t, "data.rerank", map[string]cty.Value{"split": cty.StringVal("train_part2")}); err == nil ||
		!strings.Contains(err.Error(), "semeval2016_cqa_train_part2") {
		t.Errorf("no train split in the data directory: %v", err)
	}
	if _, err := run(t, "data.rerank", map[string]cty.Value{"split": cty.StringVal("train")}); err == nil ||
		!strings.Contains(err.Error(), "train_part2") {
		t.Errorf("split train: %v", err)
	}
}
