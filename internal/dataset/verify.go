package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"repro/internal/datadir"
)

// Catalogue resolves dataset files in a list of data directories and
// verifies each against its checksum the first time it is used.
type Catalogue struct {
	// Dirs are the data directories, searched in order.
	Dirs []string
	// CacheFile records the sha256 of files already hashed, keyed by
	// (absolute path, size, mtime), so that another process does not hash
	// them again. Empty disables it; an unreadable or unwritable cache file
	// only costs a re-hash.
	CacheFile string
}

// Default returns the catalogue over datadir.Candidates() (REPRO_DATA_DIR,
// then the per-user cache), recording hashes in
// os.UserCacheDir()/repro/verified.json. It reads the environment on each
// call, so it follows REPRO_DATA_DIR changes.
func Default() *Catalogue {
	c := &Catalogue{Dirs: datadir.Candidates()}
	if d, err := os.UserCacheDir(); err == nil {
		c.CacheFile = filepath.Join(d, "repro", "verified.json")
	}
	return c
}

// hashKey identifies one version of a file: the same path with the same
// size and modification time is assumed to hold the same bytes (the rule
// make and go build use).
type hashKey struct {
	path  string
	size  int64
	mtime int64
}

// memo holds the hashes computed or read in this process.
var memo sync.Map // hashKey -> string (hex sha256)

type cacheEntry struct {
	Size    int64  `json:"size"`
	MtimeNS int64  `json:"mtime_ns"`
	SHA256  string `json:"sha256"`
}

type cacheFile struct {
	Version int                   `json:"version"`
	Entries map[string]cacheEntry `json:"entries"`
}

// cacheMu serialises this process's read-modify-write of cache files; two
// processes may still race, which loses at most an entry (a later re-hash).
var cacheMu sync.Mutex

func readCache(path string) cacheFile {
	cf := cacheFile{Version: 1, Entries: map[string]cacheEntry{}}
	b, err := os.ReadFile(path)
	if err != nil {
		return cf
	}
	var got cacheFile
	if json.Unmarshal(b, &got) != nil || got.Version != 1 || got.Entries == nil {
		return cf // a damaged cache is only a cache: start afresh
	}
	return got
}

func writeCache(path string, cf cacheFile) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(cf, "", " ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".verified-*.json")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	// Rename is atomic: a reader sees the old or the new cache, never half.
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// sum returns the hex sha256 of the file at path, from the memo, the cache
// file, or by hashing it (recording the result in both).
func (c *Catalogue) sum(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return "", fmt.Errorf("%s: is a directory, want a file", abs)
	}
	k := hashKey{abs, st.Size(), st.ModTime().UnixNano()}
	if v, ok := memo.Load(k); ok {
		return v.(string), nil
	}
	if c.CacheFile != "" {
		cacheMu.Lock()
		e, ok := readCache(c.CacheFile).Entries[abs]
		cacheMu.Unlock()
		if ok && e.Size == k.size && e.MtimeNS == k.mtime && len(e.SHA256) == 64 {
			memo.Store(k, e.SHA256)
			return e.SHA256, nil
		}
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %v", abs, err)
	}
	got := hex.EncodeToString(h.Sum(nil))
	memo.Store(k, got)
	if c.CacheFile != "" {
		cacheMu.Lock()
		cf := readCache(c.CacheFile)
		cf.Entries[abs] = cacheEntry{Size: k.size, MtimeNS: k.mtime, SHA256: got}
		_ = writeCache(c.CacheFile, cf) // read-only cache dir: we simply hash again next time
		cacheMu.Unlock()
	}
	return got, nil
}

// ErrNotFound is wrapped by the error of a file that no data directory holds.
var ErrNotFound = errors.New("dataset file not found")

// locate returns the path of f in the first data directory holding it.
func (c *Catalogue) locate(d *Dataset, f File) (string, error) {
	for _, dir := range c.Dirs {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("dataset %s: %s: %v", d.Name, p, err)
		}
	}
	return "", fmt.Errorf("dataset %s: %w: %s is in none of the data directories %q; set %s or run `repro data pull %s`",
		d.Name, ErrNotFound, f.Path, c.Dirs, datadir.Env, d.Name)
}

// verify checks the file at path against f's checksum.
func (c *Catalogue) verify(d *Dataset, f File, path string) error {
	got, err := c.sum(path)
	if err != nil {
		return fmt.Errorf("dataset %s: %v", d.Name, err)
	}
	if got != f.SHA256 {
		return fmt.Errorf("dataset %s: %s: sha256 mismatch: file has %s, catalogue expects %s (corrupted, truncated or a different version)",
			d.Name, path, got, f.SHA256)
	}
	return nil
}

// Path returns the verified path of a dataset's data file (key as in
// Dataset.Keys) or doc file (key = its relative path).
func (c *Catalogue) Path(name, key string) (string, error) {
	d, ok := Lookup(name)
	if !ok {
		return "", fmt.Errorf("unknown dataset %q (known: %v)", name, Names())
	}
	f, ok := d.File(key)
	if !ok {
		for _, df := range d.Docs {
			if df.Key == key {
				f, ok = df, true
			}
		}
	}
	if !ok {
		return "", fmt.Errorf("dataset %s has no file %q (files: %v)", name, key, d.Keys())
	}
	p, err := c.locate(d, f)
	if err != nil {
		return "", err
	}
	if err := c.verify(d, f, p); err != nil {
		return "", err
	}
	return p, nil
}

// MissingError lists the data files of some datasets that no data
// directory holds, and the directories searched.
type MissingError struct {
	Files []string // relative paths, "dataset: path"
	Dirs  []string
	Names []string // the datasets they belong to
}

func (e *MissingError) Error() string {
	dirs := "none (set " + datadir.Env + ")"
	if len(e.Dirs) > 0 {
		dirs = strings.Join(e.Dirs, ", ")
	}
	return fmt.Sprintf("%d data file(s) in no data directory: %s (searched: %s; set %s, or repro data pull %s)",
		len(e.Files), strings.Join(e.Files, ", "), dirs, datadir.Env, strings.Join(e.Names, " "))
}

// Missing checks, without reading them, that every data file of the named
// datasets is in some data directory; a *MissingError names those that
// are not. An unknown name is an error too.
func (c *Catalogue) Missing(names ...string) error {
	me := &MissingError{Dirs: c.Dirs}
	for _, name := range names {
		d, ok := Lookup(name)
		if !ok {
			return fmt.Errorf("unknown dataset %q (known: %v)", name, Names())
		}
		short := len(me.Files)
		for _, f := range d.Files {
			if _, err := c.locate(d, f); errors.Is(err, ErrNotFound) {
				me.Files = append(me.Files, name+": "+f.Path)
			}
		}
		if len(me.Files) > short {
			me.Names = append(me.Names, name)
		}
	}
	if len(me.Files) > 0 {
		return me
	}
	return nil
}

// Status is what List reports for one dataset.
type Status struct {
	Name     string `json:"name"`
	Title    string `json:"title"`
	Present  bool   `json:"present"`  // every file (data and docs) exists
	Verified bool   `json:"verified"` // and every checksum matches
	// Path is the directory holding the dataset's first file ("" when absent).
	Path    string `json:"path"`
	Rows    int    `json:"rows"`
	Licence string `json:"licence"`
	Source  string `json:"source"`
	Error   string `json:"error,omitempty"` // the first problem found
}

// List reports the state of every dataset, verifying the checksums of the
// files present (cached, so a second call is cheap).
func (c *Catalogue) List() []Status {
	out := make([]Status, 0, len(catalogue))
	for _, d := range catalogue {
		s := Status{Name: d.Name, Title: d.Title, Rows: d.Rows(), Licence: d.Licence, Source: d.Source, Present: true, Verified: true}
		for i, f := range append(append([]File(nil), d.Files...), d.Docs...) {
			p, err := c.locate(d, f)
			if err != nil {
				s.Present, s.Verified = false, false
				if s.Error == "" {
					s.Error = err.Error()
				}
				continue
			}
			if i == 0 {
				s.Path = filepath.Dir(p)
			}
			if err := c.verify(d, f, p); err != nil {
				s.Verified = false
				if s.Error == "" {
					s.Error = err.Error()
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// List reports every dataset of the default catalogue.
func List() []Status { return Default().List() }
