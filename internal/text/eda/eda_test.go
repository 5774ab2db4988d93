package eda

import (
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"repro/internal/text/wordnet"
)

type fakeSyn map[string][]string

func (f fakeSyn) Synonyms(w string) []string { return f[w] }

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }

const masked = "A [MASK] [MASK] is playing the guitar on [MASK]."

func TestDeterministic(t *testing.T) {
	t.Parallel()
	a := New(fakeSyn{"playing": {"acting", "performing"}, "guitar": {"axe"}})
	opt := Options{SynonymReplacement: 0.3, RandomDeletion: 0.2, RandomSwap: 0.2}
	outs := map[string]bool{}
	for seed := uint64(0); seed < 30; seed++ {
		x := a.Augment(masked, opt, rng(seed))
		if y := a.Augment(masked, opt, rng(seed)); x != y {
			t.Fatalf("seed %d: %q then %q", seed, x, y)
		}
		outs[x] = true
	}
	if len(outs) < 5 {
		t.Errorf("30 seeds gave only %d distinct outputs: %v", len(outs), outs)
	}
}

func maskPositions(ws []string) []int {
	var p []int
	for i, w := range ws {
		if Protected(w) {
			p = append(p, i)
		}
	}
	return p
}

func TestRandomSwapKeepsMultisetAndMasks(t *testing.T) {
	t.Parallel()
	words := strings.Fields(masked)
	for seed := uint64(0); seed < 50; seed++ {
		got := RandomSwap(words, 3, rng(seed))
		a, b := slices.Clone(words), slices.Clone(got)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Fatalf("seed %d: multiset changed: %q", seed, got)
		}
		for _, i := range maskPositions(words) {
			if got[i] != words[i] {
				t.Fatalf("seed %d: mask at %d moved: %q", seed, i, got)
			}
		}
	}
	if got := RandomSwap([]string{"[MASK]", "word"}, 5, rng(1)); strings.Join(got, " ") != "[MASK] word" {
		t.Errorf("one free word: %q", got)
	}
}

func TestRandomDeletion(t *testing.T) {
	t.Parallel()
	words := strings.Fields(masked)
	total, deleted := 0, 0
	for seed := uint64(0); seed < 200; seed++ {
		got := RandomDeletion(words, 0.3, rng(seed))
		// The result is a subsequence holding every mask.
		j := 0
		for _, w := range got {
			for j < len(words) && words[j] != w {
				if Protected(words[j]) {
					t.Fatalf("seed %d: mask %q deleted: %q", seed, words[j], got)
				}
				j++
			}
			if j == len(words) {
				t.Fatalf("seed %d: %q is not a subsequence of %q", seed, got, words)
			}
			j++
		}
		total += 6
		deleted += len(words) - len(got)
	}
	// 6 free words, p = 0.3: about 1.8 deletions per sentence.
	if rate := float64(deleted) / float64(total); rate < 0.22 || rate > 0.38 {
		t.Errorf("deletion rate %.3f, want about 0.3", rate)
	}
	// p = 1 deletes all but one free word; masks stay.
	got := RandomDeletion(words, 1, rng(3))
	if len(got) != 4 || len(maskPositions(got)) != 3 {
		t.Errorf("p=1: %q", got)
	}
	if got := RandomDeletion([]string{"alone", "[MASK]"}, 1, rng(3)); len(got) != 2 {
		t.Errorf("single free word deleted: %q", got)
	}
}

func TestSynonymReplacement(t *testing.T) {
	t.Parallel()
	a := New(fakeSyn{"guitar": {"axe"}, "playing": {"acting"}, "the": {"thee"}, "man": {"adult male"}})
	words := strings.Fields("The man is playing the guitar, the Guitar [MASK].")
	got := a.SynonymReplacement(words, 10, rng(1))
	want := "The adult male is acting the axe, the Axe [MASK]."
	if strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
	// n = 1 replaces exactly one distinct word.
	for seed := uint64(0); seed < 20; seed++ {
		got := strings.Join(a.SynonymReplacement(words, 1, rng(seed)), " ")
		n := 0
		for _, s := range []string{"adult male", "acting", "axe"} {
			if strings.Contains(strings.ToLower(got), s) {
				n++
			}
		}
		if n != 1 || !strings.Contains(got, "[MASK].") || !strings.HasPrefix(got, "The ") {
			t.Errorf("seed %d: %q", seed, got)
		}
	}
}

// TestWithWordNet runs SR on real STS sentences against the installed
// WordNet: every changed word must be one of the original word's WordNet
// synonyms, and stopwords and masks never change.
func TestWithWordNet(t *testing.T) {
	t.Parallel()
	dir, err := wordnet.Dir()
	if err != nil {
		// CI installs WordNet (wordnet-base) and says so with
		// REPRO_REQUIRE_DATA=1: there a missing database is a failure.
		if os.Getenv("REPRO_REQUIRE_DATA") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	wn, err := wordnet.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := New(wn)
	changed := 0
	for i, s := range []string{
		"A girl is styling her [MASK].",
		"A group of men play soccer on the beach.",
		"One woman is measuring another woman's ankle.",
		"A man is cutting up a cucumber.",
		"The [MASK] [MASK] is running quickly down the road.",
	} {
		got := a.Augment(s, Options{SynonymReplacement: 0.1}, rng(uint64(i)))
		in, out := strings.Fields(s), strings.Fields(got)
		if got == s {
			continue
		}
		changed++
		// Compare by aligning the unchanged prefix and suffix.
		p := 0
		for p < len(in) && p < len(out) && in[p] == out[p] {
			p++
		}
		q := 0
		for q < len(in)-p && q < len(out)-p && in[len(in)-1-q] == out[len(out)-1-q] {
			q++
		}
		orig := strings.Join(in[p:len(in)-q], " ")
		rep := strings.ToLower(strings.Trim(strings.Join(out[p:len(out)-q], " "), ".,"))
		orig = strings.ToLower(strings.Trim(orig, ".,"))
		if IsStopword(orig) || Protected(orig) {
			t.Errorf("%q -> %q replaced a stopword or mask %q", s, got, orig)
		}
		if !slices.Contains(wn.Synonyms(orig), rep) {
			t.Errorf("%q -> %q: %q is not a WordNet synonym of %q", s, got, rep, orig)
		}
	}
	if changed < 4 {
		t.Errorf("only %d of 5 sentences changed", changed)
	}
}

// IsStopword reports whether w (lower case) is on EDA's stopword list.
func IsStopword(w string) bool { return stopWords[w] }
