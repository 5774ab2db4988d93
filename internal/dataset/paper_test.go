package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The fixtures under testdata/paper are written in the exact published
// layouts: SimCSE's nli_for_simcse.csv (header, RFC 4180 quoting with
// doubled quotes and commas inside fields), wiki1m_for_simcse.txt (its real
// first lines), allenai/c4's json.gz, MIND's news.tsv (real rows, one
// without an abstract), MTEB's reranking jsonl.gz and USEB's
// unsupervised train.txt (one sentence a line, lower-cased as AskUbuntu's
// texts are there; these lines are written for the test).
const paperData = "testdata/paper"

func TestReadSimCSENLI(t *testing.T) {
	ts, err := ReadSimCSENLI(filepath.Join(paperData, "nli_for_simcse.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 4 {
		t.Fatalf("%d triplets, want 4", len(ts))
	}
	if got := ts[2]; got.Anchor != "A man, wearing a hat, walks his dog." || got.Positive != "A person is outside." || got.Negative != `The man said "no" and sat inside.` {
		t.Errorf("quoted row read as %+v", got)
	}
	if !strings.HasPrefix(ts[0].Anchor, "you know during the season") || ts[0].Negative != "They never perform recalls on anything." {
		t.Errorf("first row read as %+v", ts[0])
	}
}

func TestReadWiki1MAndC4(t *testing.T) {
	ss, err := ReadWiki1M(filepath.Join(paperData, "wiki1m_for_simcse.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 4 || ss[0] != "YMCA in South Australia" {
		t.Errorf("wiki1m: %d lines, first %q", len(ss), ss[0])
	}
	c4, err := ReadC4(filepath.Join(paperData, "c4-train.00000-of-01024.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c4) != 6 || c4[0] != "Beginners BBQ Class Taking Place in Missoula!" || c4[5] != `When trying to restore using disk utility i'm given the error "Not enough space on disk ____ to restore"` {
		t.Errorf("c4: %d lines: %q", len(c4), c4)
	}
}

func TestReadUSEBTrain(t *testing.T) {
	ss, err := ReadUSEBTrain(filepath.Join(paperData, "askubuntu-train.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Six lines, one of them blank (skipped).
	if len(ss) != 5 || ss[0] != "how do i install a .deb file via the command line ?" || ss[4] != "wifi keeps disconnecting after the upgrade to 12.04" {
		t.Errorf("train.txt: %d sentences: %q", len(ss), ss)
	}
}

func TestReadMINDNews(t *testing.T) {
	ns, err := ReadMINDNews(filepath.Join(paperData, "news.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 5 || ns[0].ID != "N55528" || ns[0].Category != "lifestyle" || ns[0].SubCategory != "lifestyleroyals" ||
		ns[0].Title != "The Brands Queen Elizabeth, Prince Charles, and Prince Philip Swear By" || ns[4].Abstract != "" {
		t.Errorf("news.tsv read as %+v", ns)
	}
	// The abstract splits by the BBC rule: "Lt." does not end a sentence.
	got := SplitSentences(ns[2].Abstract)
	if len(got) != 2 || !strings.HasPrefix(got[0], "Lt. Ivan Molchanets") || !strings.HasPrefix(got[1], "Next to him") {
		t.Errorf("abstract split into %q", got)
	}
}

func TestSplitSentences(t *testing.T) {
	for in, want := range map[string][]string{
		"One. Two! Three?":                          {"One.", "Two!", "Three?"},
		"Mr. Smith went to the U.S. Army. He left.": {"Mr. Smith went to the U.S. Army.", "He left."},
		`He said "Go." "Now," she said.`:            {`He said "Go."`, `"Now," she said.`},
		"J. K. Rowling wrote it. In 1997 it sold.":  {"J. K. Rowling wrote it.", "In 1997 it sold."},
		"no capital after. so one sentence":         {"no capital after. so one sentence"},
		"  ":                                        nil,
	} {
		if got := SplitSentences(in); !slices.Equal(got, want) {
			t.Errorf("SplitSentences(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadMTEBRerank(t *testing.T) {
	qs, err := ReadMTEBRerank(filepath.Join(paperData, "askubuntu-test.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[1].ID != "2" || qs[1].Query != "wifi keeps disconnecting" || len(qs[1].Positive) != 2 || len(qs[1].Negative) != 1 {
		t.Errorf("read %+v", qs)
	}
}

// TestPaperReadersRefuse: every bad row and every file of the wrong format
// is a *RowError naming the file and the line.
func TestPaperReadersRefuse(t *testing.T) {
	dir := t.TempDir()
	mind := "N1\tnews\tnewsus\tTitle\tAbstract.\thttps://x\t[]\t[]\n"
	cases := []struct {
		name, data string
		read       func(string) error
		line       int
		reason     string
	}{
		{"nli header", "sent0\tentailment\tcontradiction\nA.\tB.\tC.\n", nli, 1, "header is"},
		{"nli fields", "sent0,sent1,hard_neg\nA.,B.,C.\nA.,B.\n", nli, 3, "2 comma-separated fields"},
		{"nli quote", "sent0,sent1,hard_neg\nA.,B.,C.\n\"A.,B.,C.\n", nli, 3, "not CSV"},
		{"nli empty", "sent0,sent1,hard_neg\nA.,,C.\n", nli, 2, "empty sent1"},
		{"nli no rows", "sent0,sent1,hard_neg\n", nli, 0, "no rows"},
		{"wiki blank", "One.\n\nTwo.\n", wiki, 2, "blank line"},
		{"wiki utf8", "One.\n\xff\n", wiki, 2, "not UTF-8"},
		{"wiki csv", "sent0,sent1,hard_neg\nA.,B.,C.\n", wiki, 1, "NLI CSV"},
		{"wiki json", `{"text": "x"}` + "\n", wiki, 1, "JSON"},
		{"c4 key", `{"text": "x", "url": "u"}` + "\n" + `{"text": "x", "url": "u", "id": 1}` + "\n", c4, 2, "unknown field"},
		{"c4 lines", "a sentence\n", c4, 1, "not a C4 JSON line"},
		{"c4 text", `{"text": "", "url": "u"}` + "\n", c4, 1, "missing text"},
		{"mind header", strings.Join(MINDColumns, "\t") + "\n" + mind, mindNews, 1, "not N and digits"},
		{"mind columns", mind + "N2\tnews\tTitle\n", mindNews, 2, "3 TAB-separated columns"},
		{"mind title", mind + "N2\tnews\tnewsus\t\tA.\thttps://x\t[]\t[]\n", mindNews, 2, "empty title"},
		{"mind entities", mind + "N2\tnews\tnewsus\tT\tA.\thttps://x\tnone\t[]\n", mindNews, 2, "not a JSON array"},
		{"mteb id", `{"id": "q1", "query": "q", "positive": ["p"], "negative": []}` + "\n", mteb, 1, "unknown field"},
		{"mteb empty", `{"query": "q", "positive": [], "negative": []}` + "\n", mteb, 1, "no candidates"},
		{"empty", "", wiki, 0, "empty file"},
		{"useb blank", "\n  \n", useb, 0, "every line is blank"},
		{"useb utf8", "one\n\xff\n", useb, 2, "not UTF-8"},
		{"useb nul", "one\ntw\x00o\n", useb, 2, "NUL byte"},
		{"useb csv", "sent0,sent1,hard_neg\nA.,B.,C.\n", useb, 1, "NLI CSV"},
		{"useb json", `{"query": "q", "positive": ["p"], "negative": []}` + "\n", useb, 1, "JSON"},
	}
	for i, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".txt")
		if err := os.WriteFile(path, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		err := c.read(path)
		var re *RowError
		if !errors.As(err, &re) {
			t.Errorf("%d %s: error %v, want a *RowError", i, c.name, err)
			continue
		}
		if re.Path != path || re.Line != c.line || !strings.Contains(re.Reason, c.reason) {
			t.Errorf("%s: %v, want line %d and %q", c.name, err, c.line, c.reason)
		}
	}
}

func nli(p string) error      { _, err := ReadSimCSENLI(p); return err }
func wiki(p string) error     { _, err := ReadWiki1M(p); return err }
func c4(p string) error       { _, err := ReadC4(p); return err }
func mindNews(p string) error { _, err := ReadMINDNews(p); return err }
func mteb(p string) error     { _, err := ReadMTEBRerank(p); return err }
func useb(p string) error     { _, err := ReadUSEBTrain(p); return err }
