package data

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repro/internal/rows"
	"repro/registry"
)

// TestRerankSentencesFromFile: with source askubuntu_train the in-domain
// sentences are the lines of USEB's train.txt (GenSE's paper profile:
// AskUbuntu's unlabelled training set, -var askubuntu_train), the texts of
// exclude (the evaluation set) left out; the start check wants the texts
// from one place, and a path for the file.
func TestRerankSentencesFromFile(t *testing.T) {
	exDir := t.TempDir()
	if err := rows.Write(filepath.Join(exDir, registry.FileQueries), []rows.RerankQuery{
		{ID: "1", Query: "how to change the default terminal in nautilus", Positive: []string{"a related question"}},
	}); err != nil {
		t.Fatal(err)
	}
	ex := registry.Artifact{Kind: registry.KindRerank, Dir: exDir, Digest: "ex"}
	p := RerankSentencesParams{Fields: []string{"query"}, Split: false, MinWords: 1, MaxWords: 0,
		Source: "askubuntu_train", Path: fixture("askubuntu-train.txt")}
	out, err := runRerankSentencesOn(t, map[string]registry.Artifact{"exclude": ex}, p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range mustRead[rows.Sentence](t, filepath.Join(out, registry.FileSentences)) {
		got = append(got, s.Text)
	}
	want := []string{"how do i install a .deb file via the command line ?", "unable to mount windows partition ( ntfs ) after hibernation",
		"sound stops working after suspend on a thinkpad", "wifi keeps disconnecting after the upgrade to 12.04"}
	if !slices.Equal(got, want) {
		t.Errorf("sentences %q\nwant %q", got, want)
	}

	connected := func(ports ...string) func(string) bool {
		return func(p string) bool { return slices.Contains(ports, p) }
	}
	if err := p.CheckStart(connected("exclude")); err != nil {
		t.Errorf("file source: %v", err)
	}
	if err := p.CheckStart(connected("queries", "exclude")); err == nil || !strings.Contains(err.Error(), "queries: connected beside source") {
		t.Errorf("queries and source: %v", err)
	}
	noPath := p
	noPath.Path = ""
	var me *MissingDataError
	if err := noPath.CheckStart(connected()); !errors.As(err, &me) || me.Variable != "askubuntu_train" ||
		!strings.Contains(err.Error(), "-var askubuntu_train=FILE") || !strings.Contains(err.Error(), "connect queries to the SemEval-2016 CQA set's train_part2 split") {
		t.Errorf("file source without path: %v", err)
	}
	stand := RerankSentencesParams{Fields: []string{"query"}, Split: true, MinWords: 5}
	if err := stand.CheckStart(connected("queries")); err != nil {
		t.Errorf("queries input: %v", err)
	}
	if err := stand.CheckStart(connected()); err == nil || !strings.Contains(err.Error(), "queries: not connected") {
		t.Errorf("nothing to read: %v", err)
	}
	for _, bad := range []RerankSentencesParams{
		{Fields: []string{"query"}, Source: "cqadupstack_train", Path: "x.txt"},
		{Fields: []string{"query"}, Path: "x.txt"},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}
