package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/store"
)

// The mirror end to end: a refresh within and over its budget, plan and
// run from an empty cache importing from it, --no-mirror computing
// everything, and a damaged archive refused with a warning while the stage
// runs.
func TestMirrorCommands(t *testing.T) {
	file := workspace(t)
	root := filepath.Dir(filepath.Dir(file))
	mirror := filepath.Join(root, "mirror") // the repository's: beside experiments/
	src := filepath.Join(root, "cache")
	if code, out, errs := repro(t, "run", file); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}

	// Over the budget: refused, nothing written.
	code, out, errs := repro(t, "mirror", "refresh", file, "--stage", "tfidf", "--from", src, "--budget", "100B")
	if code != 1 || !strings.Contains(errs, "over its budget of 100") || !strings.Contains(errs, "nothing was changed") {
		t.Fatalf("refresh over budget: exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(mirror, store.MirrorIndexFile)); err == nil {
		t.Fatal("a refused refresh wrote an index")
	}
	for _, bad := range [][]string{
		{"--stage", "nosuch", "--from", src},
		{"--stage", "tfidf", "--from", filepath.Join(root, "nocache")},
		{"--stage", "tfidf"},
		{"--stage", "tfidf", "--from", src, "--budget", "lots"},
	} {
		if code, _, errs := repro(t, append([]string{"mirror", "refresh", file}, bad...)...); code != 1 || errs == "" {
			t.Errorf("refresh %v: exit %d, stderr %q", bad, code, errs)
		}
	}
	// Within it; the data stage is left out.
	code, out, errs = repro(t, "mirror", "refresh", file, "--stage", "tfidf", "--stage", "corpus", "--from", src)
	if code != 0 || !strings.Contains(out, "left out  corpus (data.sts_sentences)") || !strings.Contains(out, "added") ||
		!strings.Contains(out, "of its 128.0M budget") {
		t.Fatalf("refresh: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, _ := repro(t, "mirror", "ls", mirror); code != 0 || !strings.Contains(out, "tfidf") || !strings.Contains(out, "1 run(s)") {
		t.Errorf("mirror ls: exit %d\n%s", code, out)
	}
	if code, out, _ := repro(t, "mirror", "verify", mirror); code != 0 || !strings.HasPrefix(out, "ok:") {
		t.Errorf("mirror verify: exit %d\n%s", code, out)
	}

	// An empty cache: plan says mirror, run imports it.
	t.Setenv("REPRO_CACHE", filepath.Join(root, "cache2"))
	code, out, _ = repro(t, "plan", file)
	if code != 0 || !planLine(out, "tfidf", "mirror    in the mirror if corpus writes sentences as recorded") ||
		!strings.Contains(out, "1 from the mirror") {
		t.Errorf("plan from an empty cache: exit %d\n%s", code, out)
	}
	code, out, errs = repro(t, "run", file)
	if code != 0 || !strings.Contains(out, "cached   tfidf (encode.tfidf): imported from the mirror") ||
		!strings.Contains(out, "mirror: 1 stage(s) imported from "+mirror+", not run: tfidf") || !strings.Contains(out, "done     eval") {
		t.Errorf("run with the mirror: exit %d\n%s\n%s", code, out, errs)
	}

	// --no-mirror: computed here, and said so.
	t.Setenv("REPRO_CACHE", filepath.Join(root, "cache3"))
	code, out, _ = repro(t, "plan", file, "--no-mirror")
	if code != 0 || !planLine(out, "tfidf", "will run") {
		t.Errorf("plan --no-mirror: exit %d\n%s", code, out)
	}
	code, out, _ = repro(t, "run", file, "--no-mirror")
	if code != 0 || !strings.Contains(out, "done     tfidf") || !strings.Contains(out, "mirror: not used (--no-mirror)") {
		t.Errorf("run --no-mirror: exit %d\n%s", code, out)
	}

	// A damaged archive: refused with a warning, the stage runs, the run
	// succeeds with the same table.
	objs, _ := filepath.Glob(filepath.Join(mirror, "objects", "*.tar.gz"))
	if len(objs) != 1 {
		t.Fatalf("archives: %v", objs)
	}
	b, _ := os.ReadFile(objs[0])
	for i := len(b) / 3; i < len(b)/3+16; i++ {
		b[i] ^= 0xff
	}
	os.WriteFile(objs[0], b, 0o644)
	t.Setenv("REPRO_CACHE", filepath.Join(root, "cache4"))
	code, out, errs = repro(t, "run", file)
	if code != 0 || !strings.Contains(out, "warning  tfidf (encode.tfidf): mirror object "+objs[0]+" refused") ||
		!strings.Contains(out, "the stage runs instead") || !strings.Contains(out, "done     tfidf") ||
		!strings.Contains(out, "mirror: 1 stage(s) refused") {
		t.Errorf("run with a damaged mirror: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, _ := repro(t, "cache", "verify"); code != 0 {
		t.Errorf("cache verify after a refused import: exit %d", code)
	}
	if code, out, errs := repro(t, "mirror", "verify", mirror); code != 1 || !strings.Contains(out, "refused") || !strings.Contains(errs, "1 damaged") {
		t.Errorf("mirror verify of a damaged mirror: exit %d\n%s\n%s", code, out, errs)
	}
	// --mirror naming no mirror is an error; a damaged index is left out
	// with a warning.
	if code, _, errs := repro(t, "plan", file, "--mirror", filepath.Join(root, "nomirror")); code != 1 || !strings.Contains(errs, "no mirror here") {
		t.Errorf("--mirror to nothing: exit %d, %s", code, errs)
	}
	os.WriteFile(filepath.Join(mirror, store.MirrorIndexFile), []byte("{"), 0o644)
	if code, out, errs := repro(t, "plan", file); code != 0 || !strings.Contains(errs, "warning: the mirror is left out") || !planLine(out, "tfidf", "cached") {
		t.Errorf("plan with a damaged index: exit %d\n%s\n%s", code, out, errs)
	}
}

// planLine reports whether the plan line of stage contains want.
func planLine(out, stage, want string) bool {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == stage {
			return strings.Contains(l, want)
		}
	}
	return false
}

// TestPublishedMirror: the repository's own mirror/ is whole -- every
// archive unpacks to what its digest says, within the budget index.json
// records -- so a damaged or half-committed object fails CI here instead of
// being refused, with a warning, on a newcomer's first `make mini`.
func TestPublishedMirror(t *testing.T) {
	dir := filepath.Join("..", "..", "mirror")
	code, out, errs := repro(t, "mirror", "verify", dir)
	if code != 0 || !strings.HasPrefix(out, "ok:") {
		t.Fatalf("mirror verify %s: exit %d\n%s\n%s", dir, code, out, errs)
	}
	code, out, errs = repro(t, "mirror", "ls", dir)
	if code != 0 || !strings.Contains(out, "budget") {
		t.Fatalf("mirror ls %s: exit %d\n%s\n%s", dir, code, out, errs)
	}
	m, err := store.OpenMirror(dir)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, r := range m.Index().Runs {
		for _, o := range r.Outputs {
			total += o.Compressed
		}
	}
	if total > m.Index().Budget {
		t.Errorf("mirror/: %d compressed bytes over its budget of %d", total, m.Index().Budget)
	}
}
