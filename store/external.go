package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/zeebo/blake3"
)

// Files outside the store that a stage reads (a user's vectors file, a
// Hugging Face checkpoint directory, the system's WordNet) enter its key by
// content: HashPath digests them, and a stat cache in the index -- path,
// size, modification and change times, inode and device, as git's index
// keeps them -- spares re-reading files that have not changed. The change
// time (ctime) cannot be set back by a user, so a file rewritten in place
// with its old size and mtime restored is still re-hashed.

// MaxExternalFiles bounds the files of one external directory (a mistaken
// path = "/" must fail, not hash the disk).
const MaxExternalFiles = 100000

// maxExternalDepth bounds directory nesting.
const maxExternalDepth = 32

// ErrSymlinkLoop is a directory that contains itself through a symbolic
// link: refused when the loop is first entered, so that its files are not
// hashed again at every level down to the depth limit.
var ErrSymlinkLoop = errors.New("symbolic-link loop")

// extScheme prefixes every external manifest.
const extScheme = "repro-external-v1\n"

// HashPath returns the content digest of a regular file or a directory
// tree outside the store. Symbolic links are followed (Hugging Face's cache
// links checkpoint files to blobs); anything but regular files and
// directories (a device such as /dev/zero, a socket, a FIFO) is refused, so
// an external input can never be an endless read. The digest depends on
// content and relative names only, not on where the file lives.
func (c *Store) HashPath(ctx context.Context, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	h := blake3.New()
	h.Write([]byte(extScheme))
	switch {
	case fi.Mode().IsRegular():
		sum, err := c.fileHash(ctx, abs, fi)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "f %d %s\n", fi.Size(), sum)
	case fi.IsDir():
		n := 0
		onPath := map[statKey]bool{dirID(fi): true}
		if err := c.hashTree(ctx, h, abs, "", 0, &n, onPath); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("%s is %s, not a regular file or directory", abs, modeName(fi.Mode()))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file (" + m.String() + ")"
}

// dirID identifies a directory by device and inode (zero where the
// system does not say, which disables the loop check but not the depth
// limit).
func dirID(fi os.FileInfo) statKey {
	k := statOf(fi)
	return statKey{ino: k.ino, dev: k.dev}
}

// hashTree hashes the directory root/rel; onPath holds the directories
// from root down to it, a loop being a directory met again among them.
func (c *Store) hashTree(ctx context.Context, h io.Writer, root, rel string, depth int, n *int, onPath map[statKey]bool) error {
	if depth > maxExternalDepth {
		return fmt.Errorf("%s: directories nested more than %d deep (a symbolic-link loop?)", filepath.Join(root, rel), maxExternalDepth)
	}
	ents, err := os.ReadDir(filepath.Join(root, rel))
	if err != nil {
		return err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	sort.Strings(names)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := filepath.ToSlash(filepath.Join(rel, name))
		if strings.ContainsRune(r, '\n') {
			return fmt.Errorf("%s: a file name with a newline", filepath.Join(root, r))
		}
		p := filepath.Join(root, rel, name)
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			id := dirID(fi)
			if id.ino != 0 && onPath[id] {
				return fmt.Errorf("%s leads back to a directory above it: %w", p, ErrSymlinkLoop)
			}
			fmt.Fprintf(h, "d %s\n", r)
			onPath[id] = true
			err := c.hashTree(ctx, h, root, filepath.Join(rel, name), depth+1, n, onPath)
			delete(onPath, id)
			if err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if *n++; *n > MaxExternalFiles {
				return fmt.Errorf("%s holds more than %d files; name the directory the stage needs", root, MaxExternalFiles)
			}
			sum, err := c.fileHash(ctx, p, fi)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "f %d %s %s\n", fi.Size(), sum, r)
		default:
			return fmt.Errorf("%s is %s, not a regular file or directory", p, modeName(fi.Mode()))
		}
	}
	return nil
}

// statKey is what must be unchanged for a cached file hash to hold.
type statKey struct {
	size, mtime, ctime int64
	ino, dev           uint64
}

func statOf(fi os.FileInfo) statKey {
	k := statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.ctime = time.Unix(st.Ctim.Unix()).UnixNano()
		k.ino, k.dev = st.Ino, uint64(st.Dev)
	}
	return k
}

// fileHash is the BLAKE3 of a file, from the stat cache when the file's
// stat is unchanged since it was hashed.
// hashExternalFile is the BLAKE3 of the file at path, whose stat was k before.
func hashExternalFile(path string, k statKey) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := blake3.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	// A file changing while it is read must not cache the hash of a mix.
	after, err := f.Stat()
	if err != nil || statOf(after) != k {
		return "", fmt.Errorf("%s changed while it was read; try again", path)
	}
	return sum, nil
}

func (c *Store) fileHash(ctx context.Context, path string, fi os.FileInfo) (string, error) {
	k := statOf(fi)
	if c.db == nil {
		return hashExternalFile(path, k)
	}
	var sum string
	var size, mtime, ctime int64
	var ino, dev uint64
	err := c.db.QueryRowContext(ctx, `SELECT size, mtime_ns, ctime_ns, ino, dev, hash FROM file_hashes WHERE path = ?`, path).
		Scan(&size, &mtime, &ctime, &ino, &dev, &sum)
	if err == nil && (statKey{size, mtime, ctime, ino, dev}) == k {
		return sum, nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) && !c.readOnly {
		return "", err
	}
	sum, err = hashExternalFile(path, k)
	if err != nil {
		return "", err
	}
	if !c.readOnly {
		_, err = c.db.ExecContext(ctx, `INSERT OR REPLACE INTO file_hashes (path, size, mtime_ns, ctime_ns, ino, dev, hash) VALUES (?,?,?,?,?,?,?)`,
			path, k.size, k.mtime, k.ctime, k.ino, k.dev, sum)
		if err != nil {
			return "", err
		}
	}
	return sum, nil
}
