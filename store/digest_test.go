package store

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDigestDir(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "alpha")
	write("sub/b.txt", "beta")
	d0, size, err := DigestDir(dir)
	if err != nil || size != 9 {
		t.Fatalf("%s %d %v", d0, size, err)
	}
	// Golden: BLAKE3 of the manifest, computed independently with the
	// reference b3sum / Python blake3 (testdata/gen_digest.sh).
	golden, err := os.ReadFile("testdata/digest_golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(golden)); d0 != want {
		t.Errorf("digest %s, golden %s", d0, want)
	}
	os.Chmod(filepath.Join(dir, "a.txt"), 0o400)
	if d, _, _ := DigestDir(dir); d != d0 {
		t.Error("a mode change changed the digest")
	}
	os.Rename(filepath.Join(dir, "a.txt"), filepath.Join(dir, "c.txt"))
	if d, _, _ := DigestDir(dir); d == d0 {
		t.Error("a rename did not change the digest")
	}
	os.Rename(filepath.Join(dir, "c.txt"), filepath.Join(dir, "a.txt"))
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	if d, _, _ := DigestDir(dir); d == d0 {
		t.Error("an empty directory did not change the digest")
	}
	os.Remove(filepath.Join(dir, "empty"))
	os.Symlink("a.txt", filepath.Join(dir, "link"))
	if _, _, err := DigestDir(dir); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("symlink: err = %v", err)
	}
}

// BenchmarkDigestLarge hashes one 256 MiB artifact file (from the page
// cache); MB/s is the hashing throughput.
func BenchmarkDigestLarge(b *testing.B) {
	dir := b.TempDir()
	buf := make([]byte, 256<<20)
	rand.Read(buf)
	if err := os.WriteFile(filepath.Join(dir, "weights.safetensors"), buf, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for range b.N {
		if _, _, err := DigestDir(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDigestShards hashes 16 files of 16 MiB (a sharded checkpoint),
// several at once.
func BenchmarkDigestShards(b *testing.B) {
	dir := b.TempDir()
	buf := make([]byte, 16<<20)
	for i := range 16 {
		rand.Read(buf)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%02d.bin", i)), buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(16 << 24)
	b.ResetTimer()
	for range b.N {
		if _, _, err := DigestDir(dir); err != nil {
			b.Fatal(err)
		}
	}
}
