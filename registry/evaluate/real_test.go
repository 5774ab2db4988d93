package evaluate

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"repro/internal/datadir/datadirtest"
	"repro/internal/rows"
	"repro/registry"
)

// Real-data runs with the bag-of-words test encoder: they check the stages
// end to end on the actual files (counts, duplicate handling) and that word
// overlap, a real if weak signal, scores well above chance.

// readSTSTSV reads a data-directory STS file (header, then
// score<TAB>sentence1<TAB>sentence2).
func readSTSTSV(t testing.TB, path, task, subset string) []rows.STSPair {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var out []rows.STSPair
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			continue
		}
		fs := strings.Split(sc.Text(), "\t")
		s, err := strconv.ParseFloat(fs[0], 64)
		if len(fs) != 3 || err != nil {
			t.Fatalf("%s:%d: malformed", path, line)
		}
		out = append(out, rows.STSPair{Task: task, Subset: subset, Sentence1: fs[1], Sentence2: fs[2], Score: s})
	}
	return out
}

func TestRealSTSB(t *testing.T) {
	dir := datadirtest.Dir(t)
	ps := readSTSTSV(t, filepath.Join(dir, "sts", "STSB", "test.tsv"), "stsb", "test")
	if len(ps) != 1379 {
		t.Fatalf("STS-B test: %d pairs, want 1379", len(ps))
	}
	data := artifact(t, registry.KindSTS, registry.FilePairs, ps)
	enc := newEncoder(t, 64, "")
	m, err := run(t, "evaluate.sts", nil, enc, data)
	if err != nil {
		t.Fatal(err)
	}
	s := num(t, m, "stsb")
	t.Logf("STS-B test, hashed bag of words (64-d): Spearman %.2f, alignment %.3f, uniformity %.3f", s, num(t, m, "alignment"), num(t, m, "uniformity"))
	if s < 30 || s > 90 {
		t.Errorf("STS-B Spearman %.2f: outside the plausible range for word overlap", s)
	}
	if _, ok := m["avg"]; ok {
		t.Error("avg written with only stsb present")
	}
	d, err := run(t, "evaluate.cosine_density", nil, enc, data)
	if err != nil {
		t.Fatal(err)
	}
	if n := num(t, d, "n"); n != 1379 {
		t.Errorf("density over %v pairs, want 1379", n)
	}
	if lo, hi := num(t, d, "levels", "0-1", "mean"), num(t, d, "levels", "4-5", "mean"); lo >= hi {
		t.Errorf("mean cosine of level 0-1 (%v) not below level 4-5 (%v)", lo, hi)
	}
}

func TestRealRerank(t *testing.T) {
	dir := datadirtest.Dir(t)
	qs := readGz[rows.RerankQuery](t, filepath.Join(dir, "rerank", "semeval2016_cqa_dev.jsonl.gz"))
	m, err := run(t, "evaluate.rerank", nil, newEncoder(t, 64, ""), artifact(t, registry.KindRerank, registry.FileQueries, qs))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SemEval-2016 CQA dev, hashed bag of words: MAP %.2f, MRR@10 %.2f", num(t, m, "map"), num(t, m, "mrr10"))
	if num(t, m, "queries") != 41 || num(t, m, "dropped") != 0 {
		t.Errorf("queries %v dropped %v, want 41 and 0", m["queries"], m["dropped"])
	}
	// 194 of 410 candidates are positive: random ranking gives MAP near 50.
	if mp := num(t, m, "map"); mp < 50 || mp > 100 {
		t.Errorf("MAP %.2f not above chance", mp)
	}
}

// bbcDoc is the data file's row (it has dup_of, which documents.jsonl lacks).
type bbcDoc struct {
	rows.Document
	DupOf string `json:"dup_of"`
}

func TestRealBBCRetrieval(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes 41,687 sentences")
	}
	dir := datadirtest.Dir(t)
	raw := readGz[bbcDoc](t, filepath.Join(dir, "news", "bbc.jsonl.gz"))
	var all, kept []rows.Document
	for _, d := range raw {
		all = append(all, d.Document)
		if d.DupOf == "" {
			kept = append(kept, d.Document)
		}
	}
	// Kept duplicates: the body-equality classes must contain the 136
	// dup_of documents (more only where distinct stories share a headline).
	class, merged := duplicateClasses(all)
	idx := map[string]int{}
	for i, d := range raw {
		idx[d.ID] = i
	}
	dups := 0
	for i, d := range raw {
		if d.DupOf != "" {
			dups++
			if class[i] != class[idx[d.DupOf]] {
				t.Errorf("%s (dup_of %s) not in its original's class", d.ID, d.DupOf)
			}
		}
	}
	if dups != 136 || merged < 136 {
		t.Errorf("%d dup_of documents, %d merged; want 136 and at least 136", dups, merged)
	}
	enc := newEncoder(t, 64, "")
	m, err := run(t, "evaluate.retrieval", nil, enc, artifact(t, registry.KindDocuments, registry.FileDocuments, all))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := run(t, "evaluate.retrieval", nil, enc, artifact(t, registry.KindDocuments, registry.FileDocuments, kept))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("BBC document->headline, hashed bag of words: all 2225 (merged %v): r5 %.2f r10 %.2f r20 %.2f; deduplicated 2089: r5 %.2f r10 %.2f r20 %.2f",
		m["duplicates"], num(t, m, "r5"), num(t, m, "r10"), num(t, m, "r20"), num(t, m2, "r5"), num(t, m2, "r10"), num(t, m2, "r20"))
	if num(t, m, "n") != 2225 || num(t, m2, "n") != 2089 {
		t.Errorf("n = %v and %v, want 2225 and 2089", m["n"], m2["n"])
	}
	// 2089 candidates: chance recall@20 is under 1%.
	if r := num(t, m2, "r20"); r < 4 {
		t.Errorf("recall@20 %.2f: not above chance", r)
	}
	if !(num(t, m2, "r5") <= num(t, m2, "r10") && num(t, m2, "r10") <= num(t, m2, "r20")) {
		t.Errorf("recall not monotone in k: %v", m2)
	}
}

// stsTestSets reads the test pairs of the seven STS tasks, as the data.sts
// stage gives them to evaluate.sts.
func stsTestSets(b testing.TB) []rows.STSPair {
	dir := filepath.Join(datadirtest.Dir(b), "sts")
	var ps []rows.STSPair
	for _, task := range []struct{ name, dir string }{
		{"sts12", "STS12"}, {"sts13", "STS13"}, {"sts14", "STS14"}, {"sts15", "STS15"}, {"sts16", "STS16"}, {"stsb", "STSB"}, {"sickr", "SICKR"},
	} {
		files, err := filepath.Glob(filepath.Join(dir, task.dir, "*.tsv"))
		if err != nil || len(files) == 0 {
			b.Fatalf("%s: no .tsv files (%v)", filepath.Join(dir, task.dir), err)
		}
		for _, f := range files {
			subset := strings.TrimSuffix(filepath.Base(f), ".tsv")
			if (task.name == "stsb" || task.name == "sickr") && subset != "test" {
				continue
			}
			ps = append(ps, readSTSTSV(b, f, task.name, subset)...)
		}
	}
	return ps
}

// BenchmarkSTSStageSparse8192 is evaluate.sts on the seven STS test sets
// with a bag of words as sparse as TF-IDF at 8192 dimensions: encoding,
// 13k cosines, the correlations, alignment and uniformity over the 2.5k
// distinct STS-B sentences (42 s in uniformity with per-pair loops).
func BenchmarkSTSStageSparse8192(b *testing.B) {
	data := artifact(b, registry.KindSTS, registry.FilePairs, stsTestSets(b))
	enc := newEncoder(b, 8192, "sparse")
	for b.Loop() {
		if _, err := run(b, "evaluate.sts", nil, enc, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRetrievalStageSparse8192 is evaluate.retrieval on the BBC
// documents with the same encoder (48 s with per-pair loops).
func BenchmarkRetrievalStageSparse8192(b *testing.B) {
	raw := readGz[bbcDoc](b, filepath.Join(datadirtest.Dir(b), "news", "bbc.jsonl.gz"))
	docs := make([]rows.Document, len(raw))
	for i, d := range raw {
		docs[i] = d.Document
	}
	data := artifact(b, registry.KindDocuments, registry.FileDocuments, docs)
	enc := newEncoder(b, 8192, "sparse")
	for b.Loop() {
		if _, err := run(b, "evaluate.retrieval", nil, enc, data); err != nil {
			b.Fatal(err)
		}
	}
}
