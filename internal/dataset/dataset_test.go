package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"repro/internal/datadir/datadirtest"
)

// testCatalogue reads the real data directory with a private hash cache.
func testCatalogue(t *testing.T) *Catalogue {
	t.Helper()
	return &Catalogue{Dirs: []string{datadirtest.Dir(t)}, CacheFile: filepath.Join(t.TempDir(), "verified.json")}
}

func TestCatalogueMatchesSHA256SUMS(t *testing.T) {
	dir := datadirtest.Dir(t)
	b, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		sum, path, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", sc.Text())
		}
		sums[path] = sum
	}
	declared := map[string]bool{}
	for _, d := range catalogue {
		if d.Name == "" || d.Source == "" || d.Licence == "" || len(d.Files) == 0 {
			t.Errorf("dataset %q lacks a name, source, licence or files", d.Name)
		}
		for _, f := range append(append([]File(nil), d.Files...), d.Docs...) {
			if declared[f.Path] {
				t.Errorf("%s declared twice", f.Path)
			}
			declared[f.Path] = true
			if sums[f.Path] != f.SHA256 {
				t.Errorf("%s: catalogue sha256 %s, SHA256SUMS %s", f.Path, f.SHA256, sums[f.Path])
			}
		}
	}
	for p := range sums {
		if !declared[p] && p != "README.md" {
			t.Errorf("%s is in SHA256SUMS but in no dataset", p)
		}
	}
}

func TestSTSLayoutAndCounts(t *testing.T) {
	c := testCatalogue(t)
	want := map[string]map[string]int{
		"sts12": {"test": 3108},
		"sts13": {"test": 1500},
		"sts14": {"test": 3750},
		"sts15": {"test": 3000},
		"sts16": {"test": 1186},
		"stsb":  {"train": 5749, "dev": 1500, "test": 1379},
		"sickr": {"train": 4500, "dev": 500, "test": 4927},
	}
	subsets := map[string][]string{
		"sts12": {"MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"},
		"sts13": {"FNWN", "headlines", "OnWN"},
		"sts14": {"deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"},
		"sts15": {"answers-forums", "answers-students", "belief", "headlines", "images"},
		"sts16": {"answer-answer", "headlines", "plagiarism", "postediting", "question-question"},
	}
	for _, task := range STSTasks {
		for split, n := range want[task] {
			ps, err := c.STS(task, split)
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != n {
				t.Errorf("%s %s: %d pairs, want %d", task, split, len(ps), n)
			}
			var seen []string
			for _, p := range ps {
				if p.Task != task {
					t.Fatalf("%s: pair labelled task %q", task, p.Task)
				}
				if len(seen) == 0 || seen[len(seen)-1] != p.Subset {
					seen = append(seen, p.Subset)
				}
				lo, hi := 0.0, 5.0
				if p.Score < lo || p.Score > hi {
					t.Errorf("%s/%s: score %v out of range", task, p.Subset, p.Score)
				}
			}
			if ws, ok := subsets[task]; ok && strings.Join(seen, ",") != strings.Join(ws, ",") {
				t.Errorf("%s subsets %v, want %v", task, seen, ws)
			}
		}
	}
	// The first MSRpar pair, read with its bare quotes intact.
	ps, _ := c.STS("sts12", "test")
	if ps[0].Score != 4.4 || !strings.HasPrefix(ps[0].Sentence1, "The problem likely will mean") {
		t.Errorf("first STS12 pair %+v", ps[0])
	}
	if _, err := c.STS("sts12", "train"); err == nil || !strings.Contains(err.Error(), "no split") {
		t.Errorf("sts12 train: err %v", err)
	}
	if _, err := c.STS("sts99", "test"); err == nil || !strings.Contains(err.Error(), "unknown STS task") {
		t.Errorf("sts99: err %v", err)
	}
}

func TestOtherCorporaCounts(t *testing.T) {
	c := testCatalogue(t)
	total := 0
	for key, n := range map[string]int{"snli_dev": 2954, "mnli_dev_matched": 2933, "snli_test_ptbtok": 2929} {
		ts, err := c.NLI(key)
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != n {
			t.Errorf("%s: %d triplets, want %d", key, len(ts), n)
		}
		total += len(ts)
	}
	if total != 8816 {
		t.Errorf("NLI total %d, want 8816", total)
	}
	wiki, err := c.Wiki()
	if err != nil {
		t.Fatal(err)
	}
	if len(wiki) != 11914 || wiki[0] != "YMCA in South Australia" {
		t.Errorf("wiki: %d lines, first %q", len(wiki), wiki[0])
	}
	bbc, err := c.BBC()
	if err != nil {
		t.Fatal(err)
	}
	sents, dups := 0, 0
	for _, d := range bbc {
		sents += len(d.Sentences)
		if d.DupOf != "" {
			dups++
		}
	}
	if len(bbc) != 2225 || sents != 41687 || dups != 136 {
		t.Errorf("bbc: %d docs, %d sentences, %d duplicates; want 2225, 41687, 136", len(bbc), sents, dups)
	}
	brown, err := c.Brown()
	if err != nil {
		t.Fatal(err)
	}
	sents = 0
	for _, d := range brown {
		sents += len(d.Sentences)
	}
	if len(brown) != 500 || sents != 57340 {
		t.Errorf("brown: %d docs, %d sentences; want 500, 57340", len(brown), sents)
	}
	if got := brown[0].Sentences[0].Text(); !strings.Contains(got, `produced " no evidence " that`) {
		t.Errorf("brown first sentence %q", got)
	}
	for split, want := range map[string][3]int{"dev": {41, 194, 216}, "train_part2": {57, 256, 314}} {
		qs, err := c.Rerank(split)
		if err != nil {
			t.Fatal(err)
		}
		pos, neg := 0, 0
		for _, q := range qs {
			pos += len(q.Positive)
			neg += len(q.Negative)
		}
		if got := [3]int{len(qs), pos, neg}; got != want {
			t.Errorf("rerank %s: (queries, pos, neg) = %v, want %v", split, got, want)
		}
	}
}

func TestGloVe(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 33 MB of vectors")
	}
	v, err := testCatalogue(t).GloVe("glove.6B.100d")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Words) != 100000 || v.Dim != 100 || v.Words[0] != "the" {
		t.Fatalf("%d words, dim %d, first %q", len(v.Words), v.Dim, v.Words[0])
	}
	if got := v.Vector(0)[0]; got != -0.038194 {
		t.Errorf("the[0] = %v, want -0.038194", got)
	}
	if _, err := testCatalogue(t).GloVe("sts12"); err == nil {
		t.Error("sts12 accepted as word vectors")
	}
}

func TestListAndHashCache(t *testing.T) {
	c := testCatalogue(t)
	for _, s := range c.List() {
		if !s.Present || !s.Verified || s.Error != "" || s.Path == "" || s.Licence == "" {
			t.Errorf("%+v", s)
		}
	}
	var cf cacheFile
	b, err := os.ReadFile(c.CacheFile)
	if err != nil {
		t.Fatalf("hash cache not written: %v", err)
	}
	if err := json.Unmarshal(b, &cf); err != nil || len(cf.Entries) == 0 { // files hashed earlier in this process come from the in-memory memo
		t.Fatalf("hash cache: %d entries, err %v", len(cf.Entries), err)
	}

	// A cached hash is trusted while path, size and mtime are unchanged:
	// plant a wrong hash for a fresh file and see it reported, which proves
	// the file was not hashed again.
	dir := t.TempDir()
	p := filepath.Join(dir, "sts", "STSB", "test.tsv")
	copyFile(t, filepath.Join(datadirtest.Dir(t), "sts/STSB/test.tsv"), p)
	st, _ := os.Stat(p)
	bogus := strings.Repeat("0", 64)
	cf.Entries[p] = cacheEntry{Size: st.Size(), MtimeNS: st.ModTime().UnixNano(), SHA256: bogus}
	if err := writeCache(c.CacheFile, cf); err != nil {
		t.Fatal(err)
	}
	c2 := &Catalogue{Dirs: []string{dir}, CacheFile: c.CacheFile}
	if _, err := c2.Path("stsb", "test"); err == nil || !strings.Contains(err.Error(), bogus) {
		t.Errorf("planted cache entry not used: %v", err)
	}
	// Touching the file invalidates the entry; it is hashed and passes.
	later := st.ModTime().Add(time.Second)
	os.Chtimes(p, later, later)
	if _, err := c2.Path("stsb", "test"); err != nil {
		t.Errorf("after touch: %v", err)
	}
}

func TestUnwritableCacheIsHarmless(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	os.WriteFile(blocker, []byte("x"), 0o644)
	dir := t.TempDir()
	copyFile(t, filepath.Join(datadirtest.Dir(t), "sts/SICKR/dev.tsv"), filepath.Join(dir, "sts/SICKR/dev.tsv"))
	c := &Catalogue{Dirs: []string{dir}, CacheFile: filepath.Join(blocker, "verified.json")}
	if _, err := c.Path("sickr", "dev"); err != nil {
		t.Fatal(err)
	}
}

func TestMissingAndCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	c := &Catalogue{Dirs: []string{dir}}
	_, err := c.STS("stsb", "dev")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "sts/STSB/dev.tsv") || !strings.Contains(err.Error(), "REPRO_DATA_DIR") {
		t.Errorf("missing file: %v", err)
	}
	// One changed byte: the checksum catches it.
	p := filepath.Join(dir, "sts/STSB/dev.tsv")
	copyFile(t, filepath.Join(datadirtest.Dir(t), "sts/STSB/dev.tsv"), p)
	b, _ := os.ReadFile(p)
	b[100] ^= 1
	os.WriteFile(p, b, 0o644)
	_, err = c.STS("stsb", "dev")
	if err == nil || !strings.Contains(err.Error(), "sha256 mismatch") || !strings.Contains(err.Error(), p) {
		t.Errorf("corrupt file: %v", err)
	}
	if _, err := c.Path("nope", "x"); err == nil || !strings.Contains(err.Error(), "unknown dataset") {
		t.Errorf("unknown dataset: %v", err)
	}
	if _, err := c.Path("stsb", "validation"); err == nil || !strings.Contains(err.Error(), `no file "validation"`) {
		t.Errorf("unknown key: %v", err)
	}
	ls := c.List()
	if len(ls) != len(catalogue) || ls[0].Present || ls[0].Error == "" {
		t.Errorf("List on an empty dir: %+v", ls[0])
	}
}

// brokenLine copies a real (gzip when gz) file into a temp dir, applies
// edit to its line n (1-based), and returns the copy's path.
func brokenLine(t *testing.T, rel string, gz bool, n int, edit func(string) string) string {
	t.Helper()
	src := filepath.Join(datadirtest.Dir(t), rel)
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if gz {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(zr); err != nil {
			t.Fatal(err)
		}
		raw = buf.Bytes()
	}
	lines := strings.Split(string(raw), "\n")
	if gz && len(lines) > n+3 {
		// The large corpora are cut a few lines after the damage: the
		// reader must fail at line n either way, and recompressing all of
		// Brown would dominate the test's time.
		lines = lines[:n+3]
	}
	lines[n-1] = edit(lines[n-1])
	out := []byte(strings.Join(lines, "\n"))
	if gz {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(out)
		zw.Close()
		out = buf.Bytes()
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(rel))
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestReadersReportFileLineReason(t *testing.T) {
	cases := []struct {
		name   string
		rel    string
		gz     bool
		line   int
		edit   func(string) string
		read   func(string) error
		reason string
	}{
		{"sts missing column", "sts/STS12/MSRpar.tsv", false, 5, func(s string) string { return s[:strings.LastIndex(s, "\t")] },
			func(p string) error { _, err := ReadSTS(p, "sts12", "MSRpar"); return err }, "2 TAB-separated columns, want 3"},
		{"sts bad score", "sts/STS12/MSRpar.tsv", false, 7, func(s string) string { return "four" + s[strings.Index(s, "\t"):] },
			func(p string) error { _, err := ReadSTS(p, "sts12", "MSRpar"); return err }, `score "four" is not a number`},
		{"sts header", "sts/STSB/test.tsv", false, 1, func(string) string { return "sentence1\tsentence2\tscore" },
			func(p string) error { _, err := ReadSTS(p, "stsb", "test"); return err }, "header is"},
		{"sts empty sentence", "sts/SICKR/dev.tsv", false, 3, func(s string) string { return s[:strings.LastIndex(s, "\t")+1] },
			func(p string) error { _, err := ReadSTS(p, "sickr", "dev"); return err }, "empty sentence"},
		{"nli missing column", "nli/snli_dev.tsv", false, 10, func(s string) string { return strings.Replace(s, "\t", " ", 1) },
			func(p string) error { _, err := ReadNLI(p); return err }, "2 TAB-separated columns"},
		{"bbc truncated json", "news/bbc.jsonl.gz", true, 7, func(s string) string { return s[:len(s)/2] },
			func(p string) error { _, err := ReadBBC(p); return err }, "unexpected EOF"},
		{"bbc unknown key", "news/bbc.jsonl.gz", true, 3, func(s string) string { return strings.Replace(s, `"headline"`, `"title"`, 1) },
			func(p string) error { _, err := ReadBBC(p); return err }, `unknown field "title"`},
		{"rerank no query", "rerank/semeval2016_cqa_dev.jsonl.gz", true, 4, func(s string) string { return strings.Replace(s, `"query"`, `"q"`, 1) },
			func(p string) error { _, err := ReadRerank(p); return err }, `unknown field "q"`},
		{"brown tag lost", "brown/brown.jsonl.gz", true, 2, dropFirstTag,
			func(p string) error { _, err := ReadBrown(p); return err }, "tokens and"},
		{"wiki blank line", "unlabeled/wiki.txt.gz", true, 9, func(string) string { return "  " },
			func(p string) error { _, err := ReadLines(p); return err }, "blank line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := brokenLine(t, tc.rel, tc.gz, tc.line, tc.edit)
			err := tc.read(p)
			if err == nil {
				t.Fatal("no error")
			}
			prefix := p + ":" + strconv.Itoa(tc.line) + ":"
			if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("error %q, want prefix %q and reason %q", err, prefix, tc.reason)
			}
		})
	}
}

// dropFirstTag removes the first tag of the line's first sentence.
func dropFirstTag(s string) string {
	loc := regexp.MustCompile(`"tags": \["[^"]*", `).FindStringIndex(s)
	if loc == nil {
		panic("no tags in line")
	}
	return s[:loc[0]] + `"tags": [` + s[loc[1]:]
}

func TestGloVeReaderErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(text))
		zw.Close()
		os.WriteFile(p, buf.Bytes(), 0o644)
		return p
	}
	for _, tc := range []struct{ text, want string }{
		{"a 1 2\nb 1\n", ":2: 1 values, want 2"},
		{"a 1 2\nb 1 x\n", `:2: value 2 of "b" is "x", not a number`},
		{"a 1 2\nb 1 2\na 3 4\n", `:3: word "a" repeats line 1`},
		{"", "empty file"},
	} {
		p := write("v.txt.gz", tc.text)
		if _, err := ReadGloVe(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.text, err, tc.want)
		}
	}
	p := write("ok.txt.gz", "a 1 2\nb 3 4.5\n")
	v, err := ReadGloVe(p)
	if err != nil || len(v.Words) != 2 || v.Vector(1)[1] != 4.5 {
		t.Errorf("%+v %v", v, err)
	}
	// Not gzip, and empty TSV.
	os.WriteFile(filepath.Join(dir, "plain.gz"), []byte("hello"), 0o644)
	if _, err := ReadLines(filepath.Join(dir, "plain.gz")); err == nil || !strings.Contains(err.Error(), "not a gzip file") {
		t.Errorf("plain as gzip: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "empty.tsv"), nil, 0o644)
	if _, err := ReadSTS(filepath.Join(dir, "empty.tsv"), "x", "y"); err == nil || !strings.Contains(err.Error(), "empty file") {
		t.Errorf("empty tsv: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "hdr.tsv"), []byte("score\tsentence1\tsentence2\n"), 0o644)
	if _, err := ReadSTS(filepath.Join(dir, "hdr.tsv"), "x", "y"); err == nil || !strings.Contains(err.Error(), "no rows") {
		t.Errorf("header only: %v", err)
	}
	if _, err := ReadNLI(filepath.Join(dir, "absent.tsv")); err == nil || !strings.Contains(err.Error(), "absent.tsv") {
		t.Errorf("absent: %v", err)
	}
}

func TestPull(t *testing.T) {
	body := []byte("hello vocab\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/vocab.txt", "/release.zip":
			w.Write(body)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	dir := t.TempDir()
	h := sha256.Sum256(body)
	good := hex.EncodeToString(h[:])
	direct := &Dataset{Name: "toy", Files: []File{{Key: "vocab", Path: "tok/vocab.txt", SHA256: good, URL: srv.URL + "/vocab.txt"}}}
	if err := pull(ctx, srv.Client(), direct, dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "tok/vocab.txt")); !bytes.Equal(got, body) {
		t.Errorf("installed %q", got)
	}
	// A checksum mismatch installs nothing.
	bad := &Dataset{Name: "toy", Files: []File{{Key: "vocab", Path: "tok/other.txt", SHA256: strings.Repeat("1", 64), URL: srv.URL + "/vocab.txt"}}}
	if err := pull(ctx, srv.Client(), bad, dir); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("mismatch: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tok/other.txt")); err == nil {
		t.Error("unverified file installed")
	}
	// Derived files: the release is fetched, and the conversion is asked for.
	derived := &Dataset{Name: "conv", Download: []string{srv.URL + "/release.zip"}, Files: []File{{Key: "x", Path: "conv/x.tsv"}}}
	err := pull(ctx, srv.Client(), derived, dir)
	if err == nil || !strings.Contains(err.Error(), "conversion") {
		t.Errorf("derived: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "upstream/conv/release.zip")); err != nil {
		t.Errorf("release not downloaded: %v", err)
	}
	// HTTP errors and no network fail with a clear message.
	missing := &Dataset{Name: "toy", Files: []File{{Key: "v", Path: "v", SHA256: good, URL: srv.URL + "/gone"}}}
	if err := pull(ctx, srv.Client(), missing, dir); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404: %v", err)
	}
	offline := &Dataset{Name: "toy", Files: []File{{Key: "v", Path: "v", SHA256: good, URL: "http://127.0.0.1:1/vocab.txt"}}}
	start := time.Now()
	if err := pull(ctx, httpClient, offline, dir); err == nil || !strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("offline: %v", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("offline failure took %v", d)
	}
	if err := Pull(ctx, "no-such-set", dir); err == nil || !strings.Contains(err.Error(), "unknown dataset") {
		t.Errorf("unknown: %v", err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
