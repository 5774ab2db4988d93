package data

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/rows"
	"repro/registry"
)

func TestSample(t *testing.T) {
	docs := labelled(100)
	size := func(n int64) map[string]cty.Value { return map[string]cty.Value{"size": cty.NumberIntVal(n)} }
	res, _, err := runOnDocuments(t, "data.sample", docs, size(30), 42)
	if err != nil {
		t.Fatal(err)
	}
	got := ids(res["documents"])
	if len(got) != 30 {
		t.Fatalf("%d documents, want 30", len(got))
	}
	if !sort.StringsAreSorted(got) {
		t.Error("the sample is not in input order")
	}
	if got[0] == "d000" && got[29] == "d029" {
		t.Error("the sample is the first 30 documents, not a random draw")
	}
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] {
			t.Errorf("%s drawn twice", id)
		}
		seen[id] = true
	}
	again, _, _ := runOnDocuments(t, "data.sample", docs, size(30), 42)
	if strings.Join(ids(again["documents"]), ",") != strings.Join(got, ",") {
		t.Error("the same seed gives a different sample")
	}
	other, _, _ := runOnDocuments(t, "data.sample", docs, size(30), 1)
	if strings.Join(ids(other["documents"]), ",") == strings.Join(got, ",") {
		t.Error("the seed does not change the sample")
	}
	// A larger sample from the same seed is not required to contain a
	// smaller one, but every size up to the whole input must work.
	all, _, _ := runOnDocuments(t, "data.sample", docs, size(100), 42)
	if len(all["documents"]) != 100 {
		t.Errorf("size = n: %d documents", len(all["documents"]))
	}
}

// size = 0 writes the input back byte for byte: a profile that keeps the
// whole corpus must get the digest (and so the downstream cache keys) of
// the corpus itself.
func TestSampleZeroIsTheInput(t *testing.T) {
	docs := labelled(20)
	docs[3].Category = "tech"
	docs[5].Sentences = []string{"One.", "Two \"quoted\" £5."}
	_, dirs, err := runOnDocuments(t, "data.sample", docs, map[string]cty.Value{"size": cty.NumberIntVal(0)}, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(t.TempDir(), registry.FileDocuments)
	if err := rows.Write(want, docs); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(want)
	b, err := os.ReadFile(filepath.Join(dirs["documents"], registry.FileDocuments))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("size = 0 does not reproduce its input byte for byte")
	}
}

func TestSampleErrors(t *testing.T) {
	_, _, err := runOnDocuments(t, "data.sample", labelled(10), map[string]cty.Value{"size": cty.NumberIntVal(11)}, 1)
	if err == nil || !strings.Contains(err.Error(), "size 11 asks for more documents than the 10 there are") {
		t.Errorf("size > n: %v", err)
	}
	p := &SampleParams{Size: -1}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "size") {
		t.Errorf("negative size: %v", err)
	}
}
