package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures under testdata/released are in the authors' published
// layouts, written by Python as the authors' code writes them: DINO's JSON
// lines (json.dumps of DatasetEntry.__dict__: ", " and ": " separators,
// non-ASCII escaped, float labels), SynCSE's CSV (csv.writer: CRLF, quoted
// fields with commas and doubled quotes), and the TSV export of GenSE's
// SyNLI.
const releasedData = "testdata/released"

func TestReadDINOPairs(t *testing.T) {
	ps, err := ReadDINOPairs(filepath.Join(releasedData, "sts-dino-x2.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 5 {
		t.Fatalf("%d pairs, want 5", len(ps))
	}
	if p := ps[2]; p.Sentence1 != "A man is playing a guitar." || p.Sentence2 != "The café was closed on Sunday." || p.Label != 0 || p.X1 != 0 {
		t.Errorf("row 3 read as %+v", p)
	}
	if p := ps[1]; p.Label != 0.5 || p.Instruction != 0.5 || p.Origin != "released" {
		t.Errorf("row 2 read as %+v", p)
	}
	// The duplicate row is kept (post-processing drops duplicates) and
	// counted as the second sample of its x1 and label.
	if p := ps[4]; p.X1 != 1 || p.Sample != 1 || ps[3].Sample != 0 {
		t.Errorf("rows 4-5 read as %+v %+v", ps[3], p)
	}
}

func TestReadSynCSEAndGenSETriplets(t *testing.T) {
	ts, err := ReadSynCSETriplets(filepath.Join(releasedData, "syncse-partial-nli.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 || ts[1].Anchor != `She said, "hello" to him.` || ts[2].Anchor != "The train was late, again." || ts[2].Negative != "The train was early." {
		t.Errorf("SynCSE read as %+v", ts)
	}
	gs, err := ReadGenSETriplets(filepath.Join(releasedData, "synli.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 2 || gs[1].Anchor != `She said "hello" to him.` || gs[1].Positive != "She greeted him." || gs[1].Negative != "She ignored him." {
		t.Errorf("GenSE read as %+v", gs)
	}
}

// TestReleasedBadRows: bad rows and files in another format are
// *RowError naming the file and the line.
func TestReleasedBadRows(t *testing.T) {
	dir := t.TempDir()
	good := `{"text_a": "a", "text_b": "b", "label": 1.0}` + "\n"
	cases := []struct {
		name, file, text string
		read             func(string) error
		line             int
		reason           string
	}{
		{"dino extra key", "d.jsonl", good + `{"text_a": "a", "text_b": "b", "label": 1, "x": 2}` + "\n", dinoErr, 2, `key "x"`},
		{"dino null text_b", "d.jsonl", `{"text_a": "a", "text_b": null, "label": 1}` + "\n", dinoErr, 1, "text_b missing"},
		{"dino label range", "d.jsonl", good + good + `{"text_a": "a", "text_b": "b", "label": 2}` + "\n", dinoErr, 3, "outside [0, 1]"},
		{"dino label word", "d.jsonl", `{"text_a": "a", "text_b": "b", "label": "high"}` + "\n", dinoErr, 1, "not a number"},
		{"dino blank line", "d.jsonl", good + "\n" + good, dinoErr, 2, "blank line"},
		{"dino given a CSV", "d.jsonl", "sent0,sent1,hard_neg\na,b,c\n", dinoErr, 1, "not a DINO JSON line"},
		{"dino empty text", "d.jsonl", `{"text_a": " ", "text_b": "b", "label": 0}` + "\n", dinoErr, 1, "empty text_a"},
		{"gense given a CSV", "g.tsv", "sent0,sent1,hard_neg\na,b,c\n", gensErr, 1, "a CSV"},
		{"gense bad header", "g.tsv", "a\tb\tc\n", gensErr, 1, "header is"},
		{"gense two fields", "g.tsv", "premise\tentailment\tcontradiction\nx\ty\tz\nx\ty\n", gensErr, 3, "2 TAB-separated fields"},
		{"gense empty field", "g.tsv", "premise\tentailment\tcontradiction\nx\t \tz\n", gensErr, 2, "empty entailment"},
		{"gense header only", "g.tsv", "premise\tentailment\tcontradiction\n", gensErr, 0, "no rows"},
		{"syncse given a TSV", "s.csv", "premise\tentailment\tcontradiction\nx\ty\tz\n", syncErr, 1, "header is"},
		{"syncse short row", "s.csv", "sent0,sent1,hard_neg\na,b\n", syncErr, 2, "2 comma-separated fields"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.file)
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		err := c.read(path)
		var re *RowError
		if !errors.As(err, &re) {
			t.Errorf("%s: %v, want a *RowError", c.name, err)
			continue
		}
		if re.Path != path || re.Line != c.line || !strings.Contains(re.Reason, c.reason) {
			t.Errorf("%s: %v, want line %d and %q", c.name, err, c.line, c.reason)
		}
	}
	// A missing file is the operating system's error, naming it.
	var pe *os.PathError
	if _, err := ReadDINOPairs(filepath.Join(dir, "nope.jsonl")); !errors.As(err, &pe) {
		t.Errorf("missing file: %v", err)
	}
}

func dinoErr(p string) error { _, err := ReadDINOPairs(p); return err }
func gensErr(p string) error { _, err := ReadGenSETriplets(p); return err }
func syncErr(p string) error { _, err := ReadSynCSETriplets(p); return err }
