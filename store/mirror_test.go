package store

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordRun stores an artifact with the given files as the output "out" of
// a run with that key, and returns the artifact's digest.
func recordRun(t *testing.T, c *Store, key string, files map[string]string) string {
	t.Helper()
	tmp := c.TempDir(key)
	for name, body := range files {
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, size, err := c.PutObject(tmp)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Record(context.Background(), &Run{Key: key, Type: "test.t", NodeID: "n", Version: 1, Params: []byte("{}"),
		Inputs: map[string]string{"in": strings.Repeat("c", 64)}, Duration: 7e9, Device: "cpu", Backend: "cpu",
		Outputs: []Output{{Port: "out", Kind: "sentences", Digest: d, Size: size}}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestMirrorRefreshAndImport(t *testing.T) {
	ctx := context.Background()
	src := openTemp(t)
	key := strings.Repeat("a", 64)
	digest := recordRun(t, src, key, map[string]string{"data.txt": strings.Repeat("hello mirror\n", 500), "sub/x.json": "{}"})
	dir := filepath.Join(t.TempDir(), "mirror")
	st, err := RefreshMirror(ctx, dir, src, []MirrorPick{{Key: key, Stage: "module.m.n", Source: "x.hcl --profile mini"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Entries) != 1 || st.Entries[0].Action != "added" || st.Written != 1 || st.Budget != DefaultMirrorBudget {
		t.Fatalf("stats %+v", st)
	}
	m, err := OpenMirror(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := m.Lookup(key)
	if r == nil || r.Stage != "module.m.n" || r.Type != "test.t" || r.Seconds != 7 || r.Inputs["in"] == "" {
		t.Fatalf("entry %+v", r)
	}
	o, _ := r.Output("out")
	if o.Digest != digest || o.Compressed <= 0 || o.Compressed >= o.Size {
		t.Fatalf("output %+v (artifact %s)", o, digest)
	}
	if !m.Present(r) || m.Lookup(strings.Repeat("b", 64)) != nil {
		t.Fatal("Present/Lookup")
	}
	// A refresh from the same cache writes the same bytes.
	before, _ := os.ReadFile(m.ObjectFile(digest))
	idx1, _ := os.ReadFile(filepath.Join(dir, MirrorIndexFile))
	st, err = RefreshMirror(ctx, dir, src, []MirrorPick{{Key: key, Stage: "module.m.n", Source: "x.hcl --profile mini"}}, 0)
	if err != nil || st.Written != 0 || st.Entries[0].Action != "unchanged" {
		t.Fatalf("second refresh: %v %+v", err, st)
	}
	after, _ := os.ReadFile(m.ObjectFile(digest))
	idx2, _ := os.ReadFile(filepath.Join(dir, MirrorIndexFile))
	if !bytes.Equal(before, after) || !bytes.Equal(idx1, idx2) {
		t.Error("a refresh from the same cache changed the mirror's files")
	}

	dst := openTemp(t)
	size, err := dst.ImportMirrorObject(m, key, o)
	if err != nil {
		t.Fatal(err)
	}
	if size != o.Size || dst.VerifyObject(digest) != nil {
		t.Fatalf("imported size %d (want %d), verify %v", size, o.Size, dst.VerifyObject(digest))
	}
	// Present and intact: reused, not unpacked again.
	if _, err := dst.ImportMirrorObject(m, key, o); err != nil {
		t.Fatal(err)
	}
	if probs, err := VerifyMirror(m, t.TempDir()); err != nil || len(probs) != 0 {
		t.Fatalf("VerifyMirror: %v %v", probs, err)
	}
}

func TestMirrorReplacesAnOlderKeyOfTheStage(t *testing.T) {
	ctx := context.Background()
	src := openTemp(t)
	k1, k2 := strings.Repeat("1", 64), strings.Repeat("2", 64)
	d1 := recordRun(t, src, k1, map[string]string{"a.txt": "one"})
	d2 := recordRun(t, src, k2, map[string]string{"a.txt": "two"})
	dir := t.TempDir()
	if _, err := RefreshMirror(ctx, dir, src, []MirrorPick{{Key: k1, Stage: "s", Source: "f"}}, 0); err != nil {
		t.Fatal(err)
	}
	st, err := RefreshMirror(ctx, dir, src, []MirrorPick{{Key: k2, Stage: "s", Source: "f"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Entries) != 1 || st.Entries[0].Action != "replaced" || len(st.Removed) != 1 || st.Removed[0].Key != k1 {
		t.Fatalf("stats %+v", st)
	}
	m, _ := OpenMirror(dir)
	if _, err := os.Stat(m.ObjectFile(d1)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the replaced entry's archive is still there (%v)", err)
	}
	if _, err := os.Stat(m.ObjectFile(d2)); err != nil {
		t.Error(err)
	}
}

func TestMirrorBudgetRefusesAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	src := openTemp(t)
	small, big := strings.Repeat("5", 64), strings.Repeat("b", 64)
	recordRun(t, src, small, map[string]string{"a.txt": "small"})
	// Incompressible: the archive is about as big as the file.
	noise := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	recordRun(t, src, big, map[string]string{"w.bin": string(noise)})
	dir := t.TempDir()
	if _, err := RefreshMirror(ctx, dir, src, []MirrorPick{{Key: small, Stage: "small", Source: "f"}}, 16<<10); err != nil {
		t.Fatal(err)
	}
	idx, _ := os.ReadFile(filepath.Join(dir, MirrorIndexFile))
	objs, _ := os.ReadDir(filepath.Join(dir, "objects"))
	_, err := RefreshMirror(ctx, dir, src, []MirrorPick{{Key: big, Stage: "big", Source: "f"}}, 16<<10)
	var be *BudgetError
	if !errors.As(err, &be) || be.Budget != 16<<10 || be.Compressed <= be.Budget || !strings.Contains(err.Error(), "big out") {
		t.Fatalf("refresh over budget: %v", err)
	}
	idx2, _ := os.ReadFile(filepath.Join(dir, MirrorIndexFile))
	objs2, _ := os.ReadDir(filepath.Join(dir, "objects"))
	if !bytes.Equal(idx, idx2) || len(objs) != len(objs2) {
		t.Errorf("a refused refresh changed the mirror: %d -> %d objects", len(objs), len(objs2))
	}
	// Within a larger budget it goes in.
	if _, err := RefreshMirror(ctx, dir, src, []MirrorPick{{Key: big, Stage: "big", Source: "f"}}, 1<<20); err != nil {
		t.Fatal(err)
	}
}

func TestMirrorRefusesDamagedAndHostileArchives(t *testing.T) {
	ctx := context.Background()
	src := openTemp(t)
	key := strings.Repeat("d", 64)
	digest := recordRun(t, src, key, map[string]string{"data.txt": "the recorded content\n"})
	dir := t.TempDir()
	if _, err := RefreshMirror(ctx, dir, src, []MirrorPick{{Key: key, Stage: "s", Source: "f"}}, 0); err != nil {
		t.Fatal(err)
	}
	m, _ := OpenMirror(dir)
	o, _ := m.Lookup(key).Output("out")
	write := func(entries ...tarEntry) {
		t.Helper()
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		for _, e := range entries {
			h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.link}
			if e.typ != tar.TypeReg {
				h.Size = 0
			}
			if err := tw.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
			if e.typ == tar.TypeReg {
				tw.Write([]byte(e.body))
			}
		}
		tw.Close()
		zw.Close()
		os.Chmod(m.ObjectFile(digest), 0o644)
		if err := os.WriteFile(m.ObjectFile(digest), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		damage  func()
		wantErr string
	}{
		{"edited content", func() { write(tarEntry{"data.txt", tar.TypeReg, "the recorded CONTENT\n", ""}) }, "hashes to"},
		{"escaping path", func() { write(tarEntry{"../evil.txt", tar.TypeReg, "x", ""}) }, "not a plain relative path"},
		{"absolute path", func() { write(tarEntry{"/tmp/evil.txt", tar.TypeReg, "x", ""}) }, "not a plain relative path"},
		{"symlink", func() { write(tarEntry{"data.txt", tar.TypeSymlink, "", "/etc/passwd"}) }, "only regular files"},
		{"larger than recorded", func() { write(tarEntry{"data.txt", tar.TypeReg, strings.Repeat("x", 1000), ""}) }, "more bytes than"},
		{"truncated gzip", func() {
			b, _ := os.ReadFile(m.ObjectFile(digest))
			os.WriteFile(m.ObjectFile(digest), b[:len(b)/2], 0o644)
		}, "refused"},
		{"missing", func() { os.Remove(m.ObjectFile(digest)) }, "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := RefreshMirror(ctx, dir, src, []MirrorPick{{Key: key, Stage: "s", Source: "f"}}, 0); err != nil {
				t.Fatal(err) // rewrites the archive intact
			}
			tc.damage()
			dst := openTemp(t)
			_, err := dst.ImportMirrorObject(m, key, o)
			var me *MirrorError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("import of a damaged archive: %v, want a MirrorError with %q", err, tc.wantErr)
			}
			if _, err := os.Stat(dst.ObjectPath(digest)); !errors.Is(err, os.ErrNotExist) {
				t.Error("a refused object entered the cache")
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil.txt")); err == nil {
				t.Error("an escaping entry was written outside the cache")
			}
			if ents, _ := os.ReadDir(filepath.Join(dst.Dir(), "tmp")); len(ents) != 0 {
				t.Errorf("tmp/ keeps %d entries after a refusal", len(ents))
			}
			if probs, err := VerifyMirror(m, t.TempDir()); err != nil || len(probs) != 1 {
				t.Errorf("VerifyMirror: %v %v, want one problem", probs, err)
			}
		})
	}
	// A refresh finds the damage and rewrites the archive from the cache.
	st, err := RefreshMirror(ctx, dir, src, []MirrorPick{{Key: key, Stage: "s", Source: "f"}}, 0)
	if err != nil || st.Written != 1 {
		t.Fatalf("refresh after damage: %v %+v", err, st)
	}
}

type tarEntry struct {
	name string
	typ  byte
	body string
	link string
}

func TestOpenMirrorRefusesABadIndex(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenMirror(dir); !errors.Is(err, ErrNoMirror) {
		t.Fatalf("empty dir: %v", err)
	}
	for body, want := range map[string]string{
		`{`:                            "not a mirror index",
		`{"format":"other","runs":[]}`: "format",
		`{"format":"repro-mirror-v1","runs":[{"key":"x"}]}`: "is not a key",
		`{"format":"repro-mirror-v1","runs":[{"key":"` + strings.Repeat("a", 64) + `","type":"t","outputs":[{"port":"o","digest":"../../etc"}]}]}`: "want a port named once, a digest",
	} {
		os.WriteFile(filepath.Join(dir, MirrorIndexFile), []byte(body), 0o644)
		if _, err := OpenMirror(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}
