package wordnet

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"repro/internal/rows"
)

var (
	loadOnce sync.Once
	shared   *WordNet
	loadErr  error
)

// open loads the system WordNet once per test binary, skipping when it is
// not installed (it is a system package, not repository data).
func open(t testing.TB) *WordNet {
	t.Helper()
	dir, err := Dir()
	if err != nil {
		if os.Getenv("REPRO_REQUIRE_DATA") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	loadOnce.Do(func() { shared, loadErr = Open(dir) })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return shared
}

type goldenRow struct {
	Word     string   `json:"word"`
	Synonyms []string `json:"synonyms"`
}

// TestSynonymsGolden compares with EDA's get_synonyms run on NLTK's
// WordNet reader (testdata/synonyms_golden.py) for every word of 150 STS-B
// test pairs plus inflected forms.
func TestSynonymsGolden(t *testing.T) {
	t.Parallel()
	wn := open(t)
	gold, err := rows.Read[goldenRow]("testdata/synonyms.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(gold) < 300 {
		t.Fatalf("golden file has %d words", len(gold))
	}
	nonEmpty := 0
	for _, g := range gold {
		got := wn.Synonyms(g.Word)
		if strings.Join(got, "|") != strings.Join(g.Synonyms, "|") {
			t.Errorf("Synonyms(%q):\n got %q\nwant %q", g.Word, got, g.Synonyms)
		}
		if len(got) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < len(gold)/2 {
		t.Errorf("only %d of %d words have synonyms", nonEmpty, len(gold))
	}
}

func TestMorphy(t *testing.T) {
	t.Parallel()
	wn := open(t)
	for _, tc := range []struct {
		form string
		pos  POS
		want string
	}{
		{"dogs", Noun, "dog"},
		{"geese", Noun, "goose"},
		{"ran", Verb, "run"},
		{"running", Verb, "run"},
		{"better", Adj, "better|good|well"},
		{"churches", Noun, "church"},
		{"xyzzy", Noun, ""},
	} {
		if got := strings.Join(wn.Morphy(tc.form, tc.pos), "|"); got != tc.want {
			t.Errorf("Morphy(%q, %c) = %q, want %q", tc.form, tc.pos, got, tc.want)
		}
	}
}

func TestSynsetsKnownFacts(t *testing.T) {
	t.Parallel()
	wn := open(t)
	ss := wn.Synsets("dog")
	if len(ss) != 8 { // 7 noun senses + 1 verb sense in WordNet 3.0
		t.Fatalf("dog has %d synsets, want 8", len(ss))
	}
	if ss[0].Offset != 2084071 || strings.Join(ss[0].Lemmas, ",") != "dog,domestic_dog,Canis_familiaris" {
		t.Errorf("first synset of dog = %d %v", ss[0].Offset, ss[0].Lemmas)
	}
	// Adjective markers are stripped: "ready_to_hand(p)" -> "ready_to_hand".
	found := false
	for _, s := range wn.Synonyms("handy") {
		found = found || s == "ready to hand"
	}
	if !found {
		t.Errorf("handy: synonyms %v lack %q", wn.Synonyms("handy"), "ready to hand")
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "index.noun") {
		t.Fatalf("Open(empty dir) error = %v, want one naming index.noun", err)
	}
	// A malformed index line is reported with file and line.
	for _, n := range []string{"noun", "verb", "adj", "adv"} {
		body := "  1 licence header\ndog n 1 0 1 0 02084071\n"
		if n == "verb" {
			body = "  1 licence header\nrun v x 0 1 0 0\n"
		}
		if err := os.WriteFile(filepath.Join(dir, "index."+n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "data."+n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n+".exc"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Open(dir)
	if err == nil || !strings.Contains(err.Error(), "index.verb:2") {
		t.Fatalf("Open(bad index) error = %v, want one naming index.verb:2", err)
	}
	t.Setenv(EnvDir, filepath.Join(dir, "missing"))
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), EnvDir) {
		t.Fatalf("Dir() with a missing directory: %v", err)
	}
}
