package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
)

// A --set run is its own variant: it does not replace the profile's saved
// report, baseline judgement, plan or GC roots (issue: "a --set run
// replaces the profile's saved state").
func TestSetRunKeepsProfileState(t *testing.T) {
	file := workspace(t)
	if code, out, errs := repro(t, "run", file, "--profile", "mini"); code != 0 {
		t.Fatalf("run mini: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := repro(t, "baseline", file, "--profile", "mini", "--seeds", "42"); code != 0 {
		t.Fatalf("baseline: exit %d\n%s%s", code, out, errs)
	}
	_, plain, _ := repro(t, "results", file, "--profile", "mini", "--json")
	if code, out, errs := repro(t, "run", file, "--profile", "mini", "--set", "stage.tfidf.max_features=50"); code != 0 {
		t.Fatalf("run --set: exit %d\n%s%s", code, out, errs)
	}
	_, variant, _ := repro(t, "results", file, "--profile", "mini", "--set", "stage.tfidf.max_features=50", "--json")
	if variant == plain || !strings.Contains(variant, `"ours"`) {
		t.Fatalf("the --set variant should have its own report")
	}
	if _, again, _ := repro(t, "results", file, "--profile", "mini", "--json"); again != plain {
		t.Errorf("results --profile mini changed after a --set run:\n%s\nwas\n%s", again, plain)
	}
	if code, out, _ := repro(t, "check", file, "--profile", "mini"); code != 0 {
		t.Errorf("check --profile mini after a --set run: exit %d\n%s", code, out)
	}
	if code, out, _ := repro(t, "plan", file, "--profile", "mini"); code != 0 || !strings.Contains(out, "0 of 4 stage(s) will run") || strings.Contains(out, "max_features") {
		t.Errorf("plan --profile mini after a --set run: exit %d\n%s", code, out)
	}
	// GC (ignoring age) keeps what either variant references.
	if code, out, errs := repro(t, "cache", "gc", "--keep-newer", "-1s"); code != 0 || !strings.Contains(out, "removed 0 run(s)") {
		t.Errorf("gc: exit %d\n%s%s", code, out, errs)
	}
	if _, out, _ := repro(t, "plan", file, "--profile", "mini"); !strings.Contains(out, "0 of 4 stage(s) will run") {
		t.Errorf("plan after gc:\n%s", out)
	}
	_, out, _ := repro(t, "cache", "scopes")
	if !strings.Contains(out, "#profile=mini\n") || !strings.Contains(out, "#profile=mini#set=stage.tfidf.max_features=50") {
		t.Errorf("cache scopes:\n%s", out)
	}
	// Forgetting the variant lets GC drop what only it needed (its TF-IDF
	// and evaluation).
	if code, out, errs := repro(t, "cache", "forget", file, "--profile", "mini", "--set", "stage.tfidf.max_features=50"); code != 0 {
		t.Fatalf("forget: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := repro(t, "cache", "gc", "--keep-newer", "-1s"); code != 0 || !strings.Contains(out, "removed 2 run(s)") {
		t.Errorf("gc after forget: exit %d\n%s", code, out)
	}
	if code, _, errs := repro(t, "cache", "forget", file, "--profile", "mini", "--set", "stage.tfidf.max_features=50"); code != 1 || !strings.Contains(errs, "keeps no state") {
		t.Errorf("forgetting twice: exit %d\n%s", code, errs)
	}
	// A -var equal to the default is the plain variant.
	if _, out, _ := repro(t, "plan", file, "--profile", "mini", "-var", "seed=42"); !strings.Contains(out, "0 of 4 stage(s) will run") {
		t.Errorf("plan -var seed=42 (the default):\n%s", out)
	}
}

// findObject returns the directory of the cached object holding a file
// named name whose content contains marker.
func findObject(t *testing.T, cache, name, marker string) string {
	t.Helper()
	var found string
	filepath.WalkDir(filepath.Join(cache, "objects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), marker) {
				found = filepath.Dir(p)
			}
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no object with %s containing %q", name, marker)
	}
	return found
}

// overwrite changes bytes in the middle of a stored (read-only) file.
func overwrite(t *testing.T, path string, at int64, data []byte) {
	t.Helper()
	os.Chmod(path, 0o644)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, at); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func stsbOf(t *testing.T, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		// The verbose line "TF-IDF STS-B paper ours ...", or the table's
		// row "TF-IDF ours (paper)".
		if f := strings.Fields(l); len(f) >= 4 && f[0] == "TF-IDF" && f[1] == "STS-B" {
			return f[3]
		} else if len(f) >= 2 && f[0] == "TF-IDF" {
			return f[1]
		}
	}
	t.Fatalf("no TF-IDF STS-B row in:\n%s", out)
	return ""
}

// Objects are verified when read: a damaged encoder under a stage that
// runs, or a damaged metrics.json under the report, is quarantined and
// recomputed from its stage; no number computed from it is reported or
// cached.
func TestCorruptObjectsAreRecomputed(t *testing.T) {
	file := workspace(t)
	cache := os.Getenv("REPRO_CACHE")
	code, out, errs := repro(t, "run", file)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	want := stsbOf(t, out)

	// 1. Damage the TF-IDF encoder, then run a variant that evaluates it
	// again.
	enc := findObject(t, cache, "encoder.json", "tfidf")
	var big string
	filepath.WalkDir(enc, func(p string, d fs.DirEntry, err error) error {
		if fi, _ := d.Info(); err == nil && !d.IsDir() && (big == "" || fi.Size() > 1000) {
			big = p
		}
		return nil
	})
	overwrite(t, big, 200, []byte("\x00\x00\x00\x00garbage\x00\x00\x00\x00"))
	code, out, errs = repro(t, "run", file, "--set", "stage.eval.batch_size=128")
	if code != 0 {
		t.Fatalf("variant run after damage: exit %d\n%s%s", code, out, errs)
	}
	if got := stsbOf(t, out); got != want {
		t.Errorf("variant run on a damaged encoder reports %s, want %s (recomputed)", got, want)
	}
	if !strings.Contains(out, "corrupt") || !strings.Contains(out, "done     tfidf") {
		t.Errorf("the run should say the input was corrupt and recompute tfidf:\n%s", out)
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, "quarantine")); len(ents) == 0 {
		t.Error("nothing in quarantine/")
	}
	if code, out, _ := repro(t, "cache", "verify"); code != 0 {
		t.Errorf("cache verify after recomputation: exit %d\n%s", code, out)
	}

	// 2. Edit a metrics.json: the next plain run must not report the edit.
	m := findObject(t, cache, "metrics.json", `"stsb"`)
	p := filepath.Join(m, "metrics.json")
	b, _ := os.ReadFile(p)
	i := strings.Index(string(b), "\n  \"stsb\": ")
	if i < 0 {
		t.Fatalf("no top-level stsb in %s", b)
	}
	j := i + strings.Index(string(b[i:]), ",")
	edited := string(b[:i]) + "\n  \"stsb\": 99.99" + string(b[j:])
	if edited == string(b) {
		t.Fatal("the edit changed nothing")
	}
	os.Chmod(p, 0o644)
	os.WriteFile(p, []byte(edited), 0o644)
	code, out, errs = repro(t, "run", file)
	if code != 0 {
		t.Fatalf("run after editing metrics: exit %d\n%s%s", code, out, errs)
	}
	if got := stsbOf(t, out); got != want {
		t.Errorf("after editing metrics.json the run reports %s, want %s", got, want)
	}
	_, res, _ := repro(t, "results", file, "--json")
	if strings.Contains(res, "99.99") {
		t.Error("the edited value was saved in the report")
	}
}

// snapshot lists the cache's content files (not SQLite's own -wal/-shm)
// with their sizes and modification times.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || strings.HasSuffix(p, "-wal") || strings.HasSuffix(p, "-shm") {
			return nil
		}
		fi, _ := d.Info()
		if d.IsDir() {
			out[p] = "dir" // SQLite may add its -shm beside the index
		} else {
			out[p] = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
		}
		return nil
	})
	return out
}

// Read commands work on a read-only cache and create or change nothing;
// on a cache directory that does not exist they say so instead of
// creating one.
func TestReadOnlyAndMissingCache(t *testing.T) {
	file := workspace(t)
	cache := os.Getenv("REPRO_CACHE")
	if code, out, errs := repro(t, "run", file); code != 0 {
		t.Fatalf("run: %d\n%s%s", code, out, errs)
	}
	before := snapshot(t, cache)
	filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o555)
		}
		return nil
	})
	t.Cleanup(func() {
		filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	for _, args := range [][]string{
		{"cache", "ls"}, {"cache", "scopes"}, {"cache", "verify"},
		{"plan", file}, {"results", file}, {"check", file},
	} {
		code, out, errs := repro(t, args...)
		if code != 0 {
			t.Errorf("%v on a read-only cache: exit %d\n%s%s", args, code, out, errs)
		}
	}
	after := snapshot(t, cache)
	for p, v := range after {
		if before[p] != v {
			t.Errorf("a read command changed %s (%s -> %s)", p, before[p], v)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("a read command removed %s", p)
		}
	}

	// A mistyped --cache-dir: read commands fail naming it and create nothing.
	typo := filepath.Join(t.TempDir(), "cahce")
	for _, args := range [][]string{
		{"--cache-dir", typo, "cache", "ls"}, {"--cache-dir", typo, "cache", "verify"},
		{"--cache-dir", typo, "cache", "gc"}, {"--cache-dir", typo, "results", file},
	} {
		code, _, errs := repro(t, args...)
		if code != 1 || !strings.Contains(errs, "cahce") {
			t.Errorf("%v: exit %d, want 1 naming the directory:\n%s", args, code, errs)
		}
	}
	if code, out, _ := repro(t, "--cache-dir", typo, "plan", file); code != 0 || !strings.Contains(out, "4 of 4 stage(s) will run") {
		t.Errorf("plan on a cache not yet made: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(typo); err == nil {
		t.Errorf("a read command created %s", typo)
	}
}

// cache verify checks the index itself and finds an object with a file
// deleted; --repair drops what is damaged and the next run recomputes it;
// gc --dry-run counts exactly what gc then removes.
func TestVerifyRepairAndGCDryRun(t *testing.T) {
	file := workspace(t)
	cache := os.Getenv("REPRO_CACHE")
	if code, out, errs := repro(t, "run", file); code != 0 {
		t.Fatalf("run: %d\n%s%s", code, out, errs)
	}
	// One file of the TF-IDF object deleted: no longer "cached" forever.
	enc := findObject(t, cache, "encoder.json", "tfidf")
	os.Chmod(enc, 0o755)
	if err := os.Remove(filepath.Join(enc, "encoder.json")); err != nil {
		t.Fatal(err)
	}
	code, out, _ := repro(t, "cache", "verify")
	if code != 1 || !strings.Contains(out, "content does not match its digest") {
		t.Errorf("verify of a damaged object: exit %d\n%s", code, out)
	}
	code, out, errs := repro(t, "cache", "verify", "--repair")
	if code != 0 || !strings.Contains(out, "quarantined") {
		t.Errorf("verify --repair: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := repro(t, "cache", "verify"); code != 0 {
		t.Errorf("verify after repair: exit %d\n%s", code, out)
	}
	code, out, _ = repro(t, "run", file)
	if code != 0 || !strings.Contains(out, "done     tfidf") {
		t.Errorf("the run after repair should recompute tfidf (exit %d):\n%s", code, out)
	}

	// gc --dry-run counts exactly what gc removes (runs, objects, bytes,
	// temporary directories -- here an abandoned tmp/ dir and the object
	// quarantined above with its note -- and logs).
	os.MkdirAll(filepath.Join(cache, "tmp", strings.Repeat("a", 64)+"-x", "out"), 0o755)
	repro(t, "run", file, "--set", "stage.tfidf.max_features=30")
	repro(t, "cache", "forget", file, "--set", "stage.tfidf.max_features=30")
	_, dry, _ := repro(t, "cache", "gc", "--keep-newer", "-1s", "--dry-run")
	_, real, _ := repro(t, "cache", "gc", "--keep-newer", "-1s")
	if strings.TrimPrefix(dry, "would remove") != strings.TrimPrefix(real, "removed") || !strings.Contains(real, "3 temporary dir") {
		t.Errorf("gc --dry-run said\n%s\ngc did\n%s", dry, real)
	}

	// A damaged index: verify says so (it used to say ok); --repair starts
	// a fresh one beside the objects, and the next run re-uses them.
	idx := filepath.Join(cache, "index.db")
	fi, err := os.Stat(idx)
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(i*7 + 3)
	}
	overwrite(t, idx, fi.Size()/2/4096*4096, junk)
	code, out, errs = repro(t, "cache", "verify")
	if code != 1 || !strings.Contains(out+errs, "damaged") && !strings.Contains(out+errs, "malformed") {
		t.Errorf("verify of a damaged index: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = repro(t, "cache", "verify", "--repair")
	if code != 0 || !strings.Contains(out, "fresh one") {
		t.Errorf("verify --repair of a damaged index: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := repro(t, "run", file); code != 0 || !strings.Contains(out, "54.75") {
		t.Errorf("run after replacing the index: exit %d\n%s", code, out)
	}
}

// data ls exits non-zero when a dataset fails its checksum.
func TestDataLsCorrupt(t *testing.T) {
	src := datadirtest.Dir(t)
	dir := t.TempDir()
	// A copy of the data directory where one file is damaged.
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		return os.Symlink(p, filepath.Join(dir, rel))
	})
	bad := filepath.Join(dir, "sts", "STSB", "test.tsv")
	os.Remove(bad)
	os.WriteFile(bad, []byte("score\tsentence1\tsentence2\n1\ta\tb\n"), 0o644)
	t.Setenv(datadir.Env, dir)
	code, out, errs := repro(t, "data", "ls")
	if code != 1 || !strings.Contains(out, "CORRUPT") || !strings.Contains(errs, "fail verification") {
		t.Errorf("data ls with a damaged file: exit %d\n%s%s", code, out, errs)
	}
}

// A file a stage reads outside the store is keyed by its content: a changed
// file re-runs the stage and plan names it. A relative path resolves
// against the experiment file's directory, wherever repro runs; without the
// file, the load fails at the line that names it instead of saying
// "cached"; a device is refused.
func TestExternalFilesAreKeyedByContent(t *testing.T) {
	root := t.TempDir()
	t.Setenv("CI", "true")
	t.Setenv("REPRO_CACHE", filepath.Join(root, "cache"))
	exp := filepath.Join(root, "ext.hcl")
	os.WriteFile(exp, []byte(`experiment "ext" {}

stage "vec" {
  uses = "encode.file"
  path = "vectors.jsonl"
}
`), 0o644)
	work := filepath.Join(root, "work")
	os.MkdirAll(work, 0o755)
	t.Chdir(work)
	vectors := filepath.Join(root, "vectors.jsonl")
	os.WriteFile(vectors, []byte(`{"text": "a", "vector": [1, 0]}`+"\n"), 0o644)
	if code, out, errs := repro(t, "run", exp); code != 0 || !strings.Contains(out, "done     vec") {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	if _, out, _ := repro(t, "plan", exp); !strings.Contains(out, "0 of 1 stage(s) will run") {
		t.Errorf("plan of an unchanged file:\n%s", out)
	}
	os.WriteFile(vectors, []byte(`{"text": "a", "vector": [0, 1]}`+"\n"), 0o644)
	_, out, _ := repro(t, "plan", exp)
	if !strings.Contains(out, "file "+vectors+" (path) changed") {
		t.Errorf("plan after the file changed should name it:\n%s", out)
	}
	if code, out, _ := repro(t, "run", exp); code != 0 || !strings.Contains(out, "done     vec") {
		t.Errorf("run after the file changed: exit %d\n%s", code, out)
	}
	// Without the file: not "cached", an error at the line naming it,
	// before anything runs.
	os.Remove(vectors)
	for _, cmd := range []string{"run", "plan", "validate"} {
		code, out, errs := repro(t, cmd, exp)
		if code != 1 || !strings.Contains(errs, exp+":5:10: error: Invalid path") || !strings.Contains(errs, vectors+" does not exist") {
			t.Errorf("%s without the file: exit %d\n%s%s", cmd, code, out, errs)
		}
	}
	// A device is refused before anything reads it.
	code, _, errs := repro(t, "run", exp, "--set", "stage.vec.path=/dev/zero")
	if code != 1 || !strings.Contains(errs, "/dev/zero is a device, not a regular file or directory") {
		t.Errorf("path = /dev/zero: exit %d\n%s", code, errs)
	}
}

// repro cache import makes another cache's runs cache hits here: one
// stage, then the rest; a missing source and a stage no run has are errors.
func TestCacheImport(t *testing.T) {
	file := workspace(t)
	if code, out, errs := repro(t, "run", file, "--profile", "mini"); code != 0 {
		t.Fatalf("run mini: exit %d\n%s%s", code, out, errs)
	}
	src := os.Getenv("REPRO_CACHE")
	dst := filepath.Join(t.TempDir(), "other")
	code, out, errs := repro(t, "--cache-dir", dst, "cache", "import", src, "--stage", "corpus")
	if code != 0 || !strings.Contains(out, "imported") || !strings.Contains(out, "1 run(s) imported into "+dst) {
		t.Fatalf("import --stage corpus: exit %d\n%s%s", code, out, errs)
	}
	if _, out, _ := repro(t, "--cache-dir", dst, "plan", file, "--profile", "mini"); !strings.Contains(out, "3 of 4 stage(s) will run; 1 cached") {
		t.Errorf("plan after importing one stage:\n%s", out)
	}
	if code, out, errs := repro(t, "--cache-dir", dst, "cache", "import", src); code != 0 || !strings.Contains(out, "3 run(s) imported") || !strings.Contains(out, "1 present already") {
		t.Fatalf("import all: exit %d\n%s%s", code, out, errs)
	}
	if _, out, _ := repro(t, "--cache-dir", dst, "plan", file, "--profile", "mini"); !strings.Contains(out, "0 of 4 stage(s) will run") {
		t.Errorf("plan after importing every run:\n%s", out)
	}
	if code, out, _ := repro(t, "--cache-dir", dst, "cache", "verify"); code != 0 {
		t.Errorf("verify after import: exit %d\n%s", code, out)
	}
	if code, _, errs := repro(t, "--cache-dir", dst, "cache", "import", src, "--stage", "nosuch"); code != 1 || !strings.Contains(errs, "no recorded run in "+src+" matches --stage nosuch") {
		t.Errorf("import of a stage no run has: exit %d\n%s", code, errs)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if code, _, errs := repro(t, "--cache-dir", dst, "cache", "import", missing); code != 1 || !strings.Contains(errs, missing) {
		t.Errorf("import from a missing cache: exit %d\n%s", code, errs)
	}
}
