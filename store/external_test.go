package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	st, err := Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// External inputs are hashed by content: the same bytes elsewhere give the
// same digest, any change gives another -- including a rewrite that keeps
// the size and restores the modification time, which the stat cache must
// not hide.
func TestHashPath(t *testing.T) {
	st := openTemp(t)
	ctx := context.Background()
	dir := t.TempDir()
	a := filepath.Join(dir, "a", "vectors.jsonl")
	os.MkdirAll(filepath.Dir(a), 0o755)
	os.WriteFile(a, []byte("hello world\n"), 0o644)
	d1, err := st.HashPath(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(dir, "b.jsonl")
	os.WriteFile(b, []byte("hello world\n"), 0o644)
	if d2, _ := st.HashPath(ctx, b); d2 != d1 {
		t.Error("the same content at another path hashes differently")
	}
	// Rewrite in place: same size, mtime restored.
	fi, _ := os.Stat(a)
	time.Sleep(10 * time.Millisecond) // a later ctime
	os.WriteFile(a, []byte("hello World\n"), 0o644)
	os.Chtimes(a, fi.ModTime(), fi.ModTime())
	d3, err := st.HashPath(ctx, a)
	if err != nil || d3 == d1 {
		t.Errorf("a same-size rewrite with its mtime restored was not seen (%v)", err)
	}
	// Directories: by content and relative names, symlinks followed.
	ck := filepath.Join(dir, "ckpt")
	os.MkdirAll(filepath.Join(ck, "sub"), 0o755)
	os.WriteFile(filepath.Join(ck, "config.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, "blob"), []byte("weights"), 0o644)
	os.Symlink(filepath.Join(dir, "blob"), filepath.Join(ck, "sub", "model.safetensors"))
	dd1, err := st.HashPath(ctx, ck)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "blob"), []byte("weights2"), 0o644)
	if dd2, _ := st.HashPath(ctx, ck); dd2 == dd1 {
		t.Error("a change behind a symlink in a directory was not seen")
	}
	os.Rename(filepath.Join(ck, "config.json"), filepath.Join(ck, "config2.json"))
	if dd3, _ := st.HashPath(ctx, ck); dd3 == dd1 {
		t.Error("a rename in a directory was not seen")
	}
	// Devices, pipes and missing files are errors, never endless reads.
	if _, err := st.HashPath(ctx, "/dev/zero"); err == nil || !strings.Contains(err.Error(), "a device") {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := st.HashPath(ctx, filepath.Join(dir, "nope")); err == nil {
		t.Error("a missing file hashed")
	}
	// A read-only store hashes without writing its stat cache.
	st.Close()
	ro, err := OpenReadOnly(st.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if d, err := ro.HashPath(ctx, b); err != nil || d != d1 {
		t.Errorf("read-only hash: %v", err)
	}
}

// BenchmarkHashPathCached: an unchanged external directory costs a stat
// per file (the stat cache), not a re-read.
func BenchmarkHashPathCached(b *testing.B) {
	st, err := Open(filepath.Join(b.TempDir(), "cache"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	dir := b.TempDir()
	buf := make([]byte, 1<<20)
	for i := range 32 {
		os.WriteFile(filepath.Join(dir, strings.Repeat("f", i+1)), buf, 0o644)
	}
	ctx := context.Background()
	if _, err := st.HashPath(ctx, dir); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := st.HashPath(ctx, dir); err != nil {
			b.Fatal(err)
		}
	}
}
