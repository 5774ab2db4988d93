package rake

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"repro/internal/rows"
	"repro/internal/text/words"
)

type goldenPhrase struct {
	Key   string  `json:"key"`
	Text  string  `json:"text"`
	Score float64 `json:"score"`
}

type goldenRow struct {
	Sentence string         `json:"sentence"`
	Phrases  []goldenPhrase `json:"phrases"`
}

// TestGolden compares the full ranking with testdata/rake_golden.py, an
// independent Python implementation, on real STS sentences and Rose et al.'s
// worked example.
func TestGolden(t *testing.T) {
	t.Parallel()
	gold, err := rows.Read[goldenRow]("testdata/golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(gold) < 200 {
		t.Fatalf("golden file has %d rows, want >= 200", len(gold))
	}
	for _, g := range gold {
		toks := words.Tokenize(g.Sentence)
		got := Extract(g.Sentence, toks, nil)
		if len(got) != len(g.Phrases) {
			t.Errorf("%q: %d phrases, golden %d\n got %v\nwant %v", g.Sentence, len(got), len(g.Phrases), keys(got), g.Phrases)
			continue
		}
		for i, p := range got {
			w := g.Phrases[i]
			if p.Key != w.Key || p.Text != w.Text || math.Abs(p.Score-w.Score) > 1e-12 {
				t.Errorf("%q: rank %d = %q %q %.6f, golden %q %q %.6f", g.Sentence, i, p.Key, p.Text, p.Score, w.Key, w.Text, w.Score)
			}
		}
	}
}

func keys(ps []Phrase) []string {
	var ks []string
	for _, p := range ps {
		ks = append(ks, p.Key)
	}
	return ks
}

// TestRoseExample checks the scores Rose et al. (2010) publish for their
// example abstract (their Table 1.1: 8.7, 8.5, 7.7 for the top three).
func TestRoseExample(t *testing.T) {
	t.Parallel()
	gold, err := rows.Read[goldenRow]("testdata/golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s := gold[len(gold)-1].Sentence
	if !strings.HasPrefix(s, "Compatibility of systems") {
		t.Fatalf("last golden row is not Rose et al.'s example: %q", s)
	}
	got := TopK(s, words.Tokenize(s), nil, 3)
	want := []struct {
		key   string
		score float64
	}{{"minimal generating sets", 26.0 / 3}, {"linear diophantine equations", 8.5}, {"minimal supporting set", 23.0 / 3}}
	for i, w := range want {
		if got[i].Key != w.key || math.Abs(got[i].Score-w.score) > 1e-9 {
			t.Errorf("rank %d: %q %.4f, want %q %.4f", i, got[i].Key, got[i].Score, w.key, w.score)
		}
	}
	// Every occurrence of a distinct phrase is kept (and so masked).
	for _, p := range Extract(s, words.Tokenize(s), nil) {
		if p.Key == "systems" && len(p.Spans) != 4 {
			t.Errorf("phrase %q has %d occurrences, want 4", p.Key, len(p.Spans))
		}
	}
}

func TestTieBreakFirstOccurrence(t *testing.T) {
	t.Parallel()
	s := "Dogs bark, cats purr and birds sing."
	got := Extract(s, words.Tokenize(s), nil)
	want := []string{"dogs bark", "cats purr", "birds sing"}
	if strings.Join(keys(got), "|") != strings.Join(want, "|") {
		t.Fatalf("got %v, want %v", keys(got), want)
	}
}

func TestMaskTopK(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s       string
		k       int
		masked  string
		targets []string
	}{
		{"A group of men play soccer on the beach.", 1, "A group of [MASK] [MASK] [MASK] on the beach.", []string{"men play soccer"}},
		{"A group of men play soccer on the beach.", 2, "A [MASK] of [MASK] [MASK] [MASK] on the beach.", []string{"men play soccer", "group"}},
		{"A girl is styling her hair.", 3, "A [MASK] is [MASK] her [MASK].", []string{"girl", "styling", "hair"}},
		{"Red car, red car.", 1, "[MASK] [MASK], [MASK] [MASK].", []string{"Red car"}},
		{"It is what it is.", 3, "It is what it is.", []string{}},
	} {
		got, err := MaskTopK(tc.s, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		if got.Sentence != tc.s || got.Masked != tc.masked || strings.Join(got.Targets, "|") != strings.Join(tc.targets, "|") {
			b, _ := json.Marshal(got)
			t.Errorf("MaskTopK(%q, %d) = %s, want masked %q targets %q", tc.s, tc.k, b, tc.masked, tc.targets)
		}
	}
}

func TestSMARTList(t *testing.T) {
	t.Parallel()
	st := SMART()
	if len(st) != 570 {
		t.Errorf("SMART list has %d words, want 570", len(st))
	}
	for _, w := range []string{"the", "don't", "DON’T", "zero", "a"} {
		if !st.Has(w) {
			t.Errorf("%q should be a stopword", w)
		}
	}
	for _, w := range []string{"soccer", "#", "hl=en"} {
		if st.Has(w) {
			t.Errorf("%q should not be a stopword", w)
		}
	}
}

// SMART returns the SMART stoplist (Salton 1971) that RAKE uses. The
// returned map is shared: do not modify it.
func SMART() Stoplist { return smart }
