package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSymlinkLoop: a checkpoint directory with a link back to itself is
// refused as a loop when the loop is first entered, having hashed the
// weights once; it used to be stopped by the depth limit after hashing
// them at each of 33 levels (40 s for 2 GB). (The link sorts after the
// weights, so that they are hashed before the loop is met.) A directory reached twice
// without a cycle (two links to one place) still hashes.
func TestSymlinkLoop(t *testing.T) {
	st := openTemp(t)
	ctx := context.Background()
	ck := filepath.Join(t.TempDir(), "ckpt")
	os.MkdirAll(ck, 0o755)
	os.WriteFile(filepath.Join(ck, "model.safetensors"), []byte("weights"), 0o644)
	if err := os.Symlink(".", filepath.Join(ck, "zloop")); err != nil {
		t.Fatal(err)
	}
	_, err := st.HashPath(ctx, ck)
	if !errors.Is(err, ErrSymlinkLoop) {
		t.Fatalf("err = %v, want ErrSymlinkLoop", err)
	}
	var n int
	if err := st.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM file_hashes`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("the weights were hashed under %d paths, want 1", n)
	}

	shared := filepath.Join(t.TempDir(), "shared")
	os.MkdirAll(shared, 0o755)
	os.WriteFile(filepath.Join(shared, "f"), []byte("x"), 0o644)
	two := filepath.Join(t.TempDir(), "two")
	os.MkdirAll(two, 0o755)
	os.Symlink(shared, filepath.Join(two, "a"))
	os.Symlink(shared, filepath.Join(two, "b"))
	if _, err := st.HashPath(ctx, two); err != nil {
		t.Errorf("two links to one directory: %v", err)
	}
}
