package store

import (
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/zeebo/blake3"
)

// treeScheme prefixes every manifest so that a change of the digest format
// can never collide with old digests.
const treeScheme = "repro-tree-v1\n"

// manifestEntry is one line of a directory manifest.
type manifestEntry struct {
	path string // slash-separated, relative to the artifact root
	dir  bool
	size int64
	hash string
}

// DigestDir returns the content digest of an artifact directory: BLAKE3 of a
// manifest listing, in byte order of the relative path, every directory
// ("d path") and every regular file ("f size hash path", hash being the
// file's own BLAKE3). File names, sizes and contents all count; modes and
// times do not. Symbolic links and other special files are refused, because
// an artifact must be self-contained. It also returns the total size.
func DigestDir(dir string) (digest string, size int64, err error) {
	return digestDir(dir, false)
}

// sealDir digests dir and, while each file is open, fsyncs it and drops its
// write permission, so the content the digest names is durable before the
// directory is renamed into the store.
func sealDir(dir string) (string, int64, error) {
	return digestDir(dir, true)
}

func digestDir(dir string, seal bool) (string, int64, error) {
	var entries []manifestEntry
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			dirs = append(dirs, p)
			if rel != "." {
				entries = append(entries, manifestEntry{path: rel, dir: true})
			}
		case d.Type().IsRegular():
			entries = append(entries, manifestEntry{path: rel})
		default:
			return fmt.Errorf("%s: artifacts may hold only regular files and directories (found %s)", p, d.Type())
		}
		return nil
	})
	if err != nil {
		return "", 0, err
	}
	if err := hashFiles(dir, entries, seal); err != nil {
		return "", 0, err
	}
	if seal {
		// Directory entries must be durable too, deepest first.
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syncDir(dirs[i]); err != nil {
				return "", 0, err
			}
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].path < entries[j].path })
	h := blake3.New()
	io.WriteString(h, treeScheme)
	var total int64
	for _, e := range entries {
		if strings.ContainsAny(e.path, "\n") {
			return "", 0, fmt.Errorf("%s: file names in artifacts may not contain newlines", filepath.Join(dir, e.path))
		}
		if e.dir {
			fmt.Fprintf(h, "d %s\n", e.path)
		} else {
			fmt.Fprintf(h, "f %d %s %s\n", e.size, e.hash, e.path)
			total += e.size
		}
	}
	return hex.EncodeToString(h.Sum(nil)), total, nil
}

// hashFiles fills size and hash of the file entries, several files at once:
// one BLAKE3 stream already runs at memory speed with AVX2, and an artifact of
// many shards gains from reading them in parallel.
func hashFiles(root string, entries []manifestEntry, seal bool) error {
	var idx []int
	for i, e := range entries {
		if !e.dir {
			idx = append(idx, i)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(idx))
	next := make(chan int)
	errs := make([]error, len(entries))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for i := range next {
				e := &entries[i]
				e.hash, e.size, errs[i] = hashFile(filepath.Join(root, filepath.FromSlash(e.path)), buf, seal)
			}
		}()
	}
	for _, i := range idx {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func hashFile(path string, buf []byte, seal bool) (string, int64, error) {
	flag := os.O_RDONLY
	if seal {
		// fsync needs a descriptor that may write on some systems.
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := blake3.New()
	var n int64
	for {
		// A plain read loop: io.Copy would pick os.File's WriterTo and its
		// small buffer instead of ours.
		k, err := f.Read(buf)
		h.Write(buf[:k])
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", 0, fmt.Errorf("%s: %w", path, err)
		}
	}
	if seal {
		if err := f.Sync(); err != nil {
			return "", 0, fmt.Errorf("%s: fsync: %w", path, err)
		}
		if err := f.Chmod(0o444); err != nil {
			return "", 0, err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("%s: fsync: %w", dir, err)
	}
	return nil
}
