package text

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
	"repro/internal/rows"
	"repro/internal/text/mask"
	"repro/internal/text/wordnet"
	"repro/registry"
)

// stsSentences returns the first n sentence1 of STS-B test.
func stsSentences(t *testing.T, n int) []rows.Sentence {
	t.Helper()
	f, err := os.Open(filepath.Join(datadirtest.Dir(t), "sts", "STSB", "test.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	var out []rows.Sentence
	for sc.Scan() && len(out) < n {
		out = append(out, rows.Sentence{Text: strings.Split(sc.Text(), "\t")[1]})
	}
	return out
}

func registryForTest(t *testing.T) *registry.Registry {
	r := registry.New()
	Register(r)
	if got := strings.Join(r.Names(), ","); got != "text.eda,text.mask_phrases,text.seq2seq,text.span_corrupt,text.unigram_vocab" {
		t.Fatalf("registered %s", got)
	}
	return r
}

// run runs stage type name with params on an input artifact directory and
// returns the output rows.
func run(t *testing.T, r *registry.Registry, name string, params any, inDir string, kind registry.Kind, seed int64) ([]mask.MaskedPair, error) {
	t.Helper()
	st, ok := r.Lookup(name)
	if !ok {
		t.Fatalf("no stage type %s", name)
	}
	out := t.TempDir()
	env := &registry.Env{
		Params:  params,
		Inputs:  map[string]registry.Artifact{"input": {Kind: kind, Dir: inDir}},
		Outputs: map[string]string{"pairs": out},
		Work:    t.TempDir(),
		Seed:    seed,
	}
	if err := st.Call(context.Background(), env); err != nil {
		return nil, err
	}
	return rows.Read[mask.MaskedPair](filepath.Join(out, registry.FilePairs))
}

func writeSentences(t *testing.T, ss []rows.Sentence) string {
	dir := t.TempDir()
	if err := rows.Write(filepath.Join(dir, registry.FileSentences), ss); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMaskRAKE(t *testing.T) {
	r := registryForTest(t)
	st, _ := r.Lookup("text.mask_phrases")
	if st.Params.(MaskParams) != (MaskParams{Method: "rake", TopK: 3}) {
		t.Errorf("defaults %+v", st.Params)
	}
	in := stsSentences(t, 40)
	pairs, err := run(t, r, "text.mask_phrases", &MaskParams{Method: "rake", TopK: 3}, writeSentences(t, in), registry.KindSentences, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != len(in) {
		t.Fatalf("%d pairs for %d sentences", len(pairs), len(in))
	}
	if p := pairs[0]; p.Sentence != "A girl is styling her hair." || p.Masked != "A [MASK] is [MASK] her [MASK]." ||
		strings.Join(p.Targets, "|") != "girl|styling|hair" {
		t.Errorf("row 1: %+v", p)
	}
	for i, p := range pairs {
		if p.Sentence != in[i].Text {
			t.Errorf("row %d: sentence %q, want %q", i+1, p.Sentence, in[i].Text)
		}
		if len(p.Targets) > 3 {
			t.Errorf("row %d: %d targets", i+1, len(p.Targets))
		}
		words := 0
		for _, tg := range p.Targets {
			words += len(strings.Fields(tg))
		}
		if n := strings.Count(p.Masked, mask.MaskToken); n < words {
			t.Errorf("row %d: %d masks for %d target words: %+v", i+1, n, words, p)
		}
	}
	// top_k = 1 masks a subset of what top_k = 3 masks.
	one, err := run(t, r, "text.mask_phrases", &MaskParams{Method: "rake", TopK: 1}, writeSentences(t, in), registry.KindSentences, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range one {
		if len(one[i].Targets) > 0 && one[i].Targets[0] != pairs[i].Targets[0] {
			t.Errorf("row %d: top-1 %q but top-3 starts with %q", i+1, one[i].Targets[0], pairs[i].Targets[0])
		}
	}
}

func TestMaskChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the Brown tagger (about 5 s)")
	}
	// The stage finds the Brown Corpus through REPRO_DATA_DIR.
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	r := registryForTest(t)
	in := []rows.Sentence{{Text: "A man is playing a large flute."}, {Text: "The old man can not run to the big house."}}
	dir := writeSentences(t, in)
	want := map[string][]mask.MaskedPair{
		"np": {
			{Masked: "[MASK] [MASK] is playing [MASK] [MASK] [MASK].", Targets: []string{"A man", "a large flute"}},
			{Masked: "[MASK] [MASK] [MASK] can not run to [MASK] [MASK] [MASK].", Targets: []string{"The old man", "the big house"}},
		},
		"vp": {
			{Masked: "A man [MASK] [MASK] a large flute.", Targets: []string{"is playing"}},
			{Masked: "The old man [MASK] [MASK] [MASK] to the big house.", Targets: []string{"can not run"}},
		},
		"np+vp": {
			{Masked: "[MASK] [MASK] [MASK] [MASK] [MASK] [MASK] [MASK].", Targets: []string{"A man", "is playing", "a large flute"}},
			{Masked: "[MASK] [MASK] [MASK] [MASK] [MASK] [MASK] to [MASK] [MASK] [MASK].", Targets: []string{"The old man", "can not run", "the big house"}},
		},
	}
	for _, m := range []string{"np", "vp", "np+vp"} {
		got, err := run(t, r, "text.mask_phrases", &MaskParams{Method: m, TopK: 3}, dir, registry.KindSentences, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want[m] {
			if got[i].Masked != w.Masked || strings.Join(got[i].Targets, "|") != strings.Join(w.Targets, "|") {
				t.Errorf("%s row %d: %q %q, want %q %q", m, i+1, got[i].Masked, got[i].Targets, w.Masked, w.Targets)
			}
		}
	}
}

// TestMaskOneChunk: with one_chunk the NP/VP methods mask one chunk of the
// kinds per sentence, the paper's "a random sub-tree" -- not every chunk,
// which is still the default -- drawn with draw_seed row by row: the same
// seed draws the same chunks, and over seeds every chunk of a sentence is
// drawn; with np+vp the draw is over both kinds.
func TestMaskOneChunk(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the Brown tagger (about 5 s)")
	}
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	r := registryForTest(t)
	in := []rows.Sentence{{Text: "A man is playing a large flute."}, {Text: "The old man can not run to the big house."}, {Text: "Quickly!"}}
	dir := writeSentences(t, in)
	// Every chunk, as TestMaskChunks has it: what one_chunk draws from.
	chunks := map[string][][]string{
		"np":    {{"A man", "a large flute"}, {"The old man", "the big house"}, nil},
		"vp":    {{"is playing"}, {"can not run"}, nil},
		"np+vp": {{"A man", "is playing", "a large flute"}, {"The old man", "can not run", "the big house"}, nil},
	}
	for _, m := range []string{"np", "vp", "np+vp"} {
		drawn := make([]map[string]bool, len(in))
		for i := range drawn {
			drawn[i] = map[string]bool{}
		}
		for seed := int64(1); seed <= 12; seed++ {
			p := &MaskParams{Method: m, TopK: 3, OneChunk: true, DrawSeed: seed}
			got, err := run(t, r, "text.mask_phrases", p, dir, registry.KindSentences, 0)
			if err != nil {
				t.Fatal(err)
			}
			again, err := run(t, r, "text.mask_phrases", p, dir, registry.KindSentences, 99)
			if err != nil {
				t.Fatal(err)
			}
			for i, row := range got {
				if strings.Join(again[i].Targets, "|") != strings.Join(row.Targets, "|") || again[i].Masked != row.Masked {
					t.Errorf("%s seed %d row %d: %+v, then %+v (the stage's seed must not matter, draw_seed decides)", m, seed, i+1, row, again[i])
				}
				if len(chunks[m][i]) == 0 {
					if len(row.Targets) != 0 || row.Masked != in[i].Text {
						t.Errorf("%s row %d without chunks: %+v", m, i+1, row)
					}
					continue
				}
				if len(row.Targets) != 1 {
					t.Fatalf("%s seed %d row %d: %d targets %q, want one chunk", m, seed, i+1, len(row.Targets), row.Targets)
				}
				tg := row.Targets[0]
				if !slices.Contains(chunks[m][i], tg) {
					t.Errorf("%s seed %d row %d: target %q is not a chunk of %q", m, seed, i+1, tg, chunks[m][i])
				}
				if n, w := strings.Count(row.Masked, mask.MaskToken), len(strings.Fields(tg)); n != w {
					t.Errorf("%s seed %d row %d: %d masks for the %d words of %q: %q", m, seed, i+1, n, w, tg, row.Masked)
				}
				drawn[i][tg] = true
			}
		}
		for i, cs := range chunks[m] {
			if len(drawn[i]) != len(cs) {
				t.Errorf("%s row %d: 12 seeds drew %v of the chunks %q", m, i+1, drawn[i], cs)
			}
		}
	}
}

func TestMaskErrors(t *testing.T) {
	r := registryForTest(t)
	dir := writeSentences(t, []rows.Sentence{{Text: "A dog runs."}})
	for _, p := range []*MaskParams{{Method: "rake", TopK: 0}, {Method: "sbar", TopK: 3}} {
		if _, err := run(t, r, "text.mask_phrases", p, dir, registry.KindSentences, 0); err == nil || !strings.Contains(err.Error(), "text.mask_phrases") {
			t.Errorf("%+v: error %v", p, err)
		}
	}
	// A draw seed without one_chunk draws nothing: refused at load time.
	if err := (&MaskParams{Method: "np", TopK: 3, DrawSeed: 7}).Validate(); err == nil || !strings.Contains(err.Error(), "draw_seed") {
		t.Errorf("draw_seed without one_chunk: %v", err)
	}
	if err := (&MaskParams{Method: "np", TopK: 3, OneChunk: true, DrawSeed: 7}).Validate(); err != nil {
		t.Errorf("one_chunk with draw_seed: %v", err)
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, registry.FileSentences), []byte("{\"text\": \"ok\"}\n{\"txt\": \"typo\"}\n"), 0o644)
	if _, err := run(t, r, "text.mask_phrases", &MaskParams{Method: "rake", TopK: 3}, bad, registry.KindSentences, 0); err == nil || !strings.Contains(err.Error(), "sentences.jsonl:2") {
		t.Errorf("malformed row: error %v", err)
	}
	if _, err := run(t, r, "text.mask_phrases", &MaskParams{Method: "rake", TopK: 3}, t.TempDir(), registry.KindSentences, 0); err == nil {
		t.Error("missing input file: no error")
	}
}

func maskedInput(t *testing.T, r *registry.Registry, n int) (string, []mask.MaskedPair) {
	pairs, err := run(t, r, "text.mask_phrases", &MaskParams{Method: "rake", TopK: 3}, writeSentences(t, stsSentences(t, n)), registry.KindSentences, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := rows.Write(filepath.Join(dir, registry.FilePairs), pairs); err != nil {
		t.Fatal(err)
	}
	return dir, pairs
}

func TestEDA(t *testing.T) {
	r := registryForTest(t)
	st, _ := r.Lookup("text.eda")
	if !st.Seeded || st.Params.(EDAParams) != (EDAParams{SynonymReplacement: 0.1}) {
		t.Errorf("text.eda: seeded %v, defaults %+v", st.Seeded, st.Params)
	}
	dir, in := maskedInput(t, r, 40)
	params := &EDAParams{RandomDeletion: 0.2, RandomSwap: 0.1}
	if _, err := wordnet.Dir(); err == nil {
		params.SynonymReplacement = 0.1
	} else {
		t.Logf("WordNet missing, testing RD and RS only: %v", err)
	}
	a, err := run(t, r, "text.eda", params, dir, registry.KindMaskedPairs, 42)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := run(t, r, "text.eda", params, dir, registry.KindMaskedPairs, 42)
	c, _ := run(t, r, "text.eda", params, dir, registry.KindMaskedPairs, 43)
	changedS, changedM, differ := 0, 0, 0
	for i := range in {
		if a[i].Sentence != b[i].Sentence || a[i].Masked != b[i].Masked {
			t.Fatalf("row %d differs between two runs with seed 42", i+1)
		}
		if a[i].Sentence != c[i].Sentence || a[i].Masked != c[i].Masked {
			differ++
		}
		if strings.Join(a[i].Targets, "|") != strings.Join(in[i].Targets, "|") {
			t.Errorf("row %d: targets changed", i+1)
		}
		if strings.Count(a[i].Masked, mask.MaskToken) != strings.Count(in[i].Masked, mask.MaskToken) {
			t.Errorf("row %d: masks changed: %q -> %q", i+1, in[i].Masked, a[i].Masked)
		}
		if a[i].Sentence != in[i].Sentence {
			changedS++
		}
		if a[i].Masked != in[i].Masked {
			changedM++
		}
	}
	if changedS < len(in)/2 || changedM < len(in)/2 || differ < len(in)/2 {
		t.Errorf("changed %d sentences and %d masked sentences of %d; seeds 42 and 43 differ on %d", changedS, changedM, len(in), differ)
	}
	// All operations off: the pairs pass through unchanged.
	same, err := run(t, r, "text.eda", &EDAParams{}, dir, registry.KindMaskedPairs, 42)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if same[i].Sentence != in[i].Sentence || same[i].Masked != in[i].Masked {
			t.Errorf("row %d changed with EDA disabled", i+1)
		}
	}
	if _, err := run(t, r, "text.eda", &EDAParams{RandomSwap: 1.5}, dir, registry.KindMaskedPairs, 42); err == nil || !strings.Contains(err.Error(), "random_swap") {
		t.Errorf("random_swap 1.5: error %v", err)
	}
}
