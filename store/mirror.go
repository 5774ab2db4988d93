package store

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// A mirror is a read-only, content-addressed copy of recorded stage runs,
// published with the repository (mirror/ at its root) so that a fresh
// clone need not recompute what is expensive and settled -- the
// pretraining a mini profile starts from. It is consulted on a cache miss
// (runner.Options.Mirror): an output is imported only when the stage's key
// is the mirror's key for it and its bytes hash to the recorded digest,
// so the cache's promises hold unchanged; anything else in the mirror is
// never read.
//
// Layout (plain files a user can open without repro):
//
//	index.json                 format, budget, one entry per recorded run:
//	                           key, stage, type, version, parameters, input
//	                           digests, provenance, outputs (port, kind,
//	                           digest, size, compressed size)
//	objects/<digest>.tar.gz    one artifact directory as a gzip'd tar of
//	                           regular files and directories, named by the
//	                           artifact's digest (DigestDir), not the archive's
//
// The archive is deterministic (sorted entries, no times or owners), so a
// refresh from the same cache leaves the files unchanged.

// MirrorFormat names the index format.
const MirrorFormat = "repro-mirror-v1"

// MirrorIndexFile is the index's name in a mirror directory.
const MirrorIndexFile = "index.json"

// DefaultMirrorBudget is the most compressed bytes a mirror published with
// the repository may hold: the objects of every entry together. A refresh
// that would exceed it is refused (RefreshMirror), so the repository cannot
// grow past it unnoticed. 128 MiB holds what the mini profiles start from:
// the mini T5 and its vocabulary, the mini RoBERTa and GPT-2, and the mini
// BERT's first four phases -- each phase, because a phase's key holds the
// digest of the one before, so importing the fourth needs the third's output
// (8-19 MB each compressed: float32 weights do not compress much). A clone
// that fetches them once saves hours of pretraining per machine.
const DefaultMirrorBudget int64 = 128 << 20

const mirrorObjects = "objects"

// MirrorIndex is index.json.
type MirrorIndex struct {
	Format string `json:"format"`
	// Budget is the compressed size the refresh that wrote it enforced.
	Budget int64        `json:"budget_bytes"`
	Runs   []*MirrorRun `json:"runs"`
}

// MirrorRun is one recorded stage run in a mirror: what a run of the
// stage would have recorded, and its outputs.
type MirrorRun struct {
	Key     string            `json:"key"`
	Stage   string            `json:"stage"`  // the node ID in Source
	Source  string            `json:"source"` // the experiment and profile it was refreshed from
	Type    string            `json:"type"`
	Version int               `json:"version"`
	Params  json.RawMessage   `json:"params"`
	Inputs  map[string]string `json:"inputs,omitempty"` // input port -> digest, as the key hashed them
	Seed    int64             `json:"seed"`
	Seeded  bool              `json:"seeded"`
	Seconds float64           `json:"seconds"` // how long the stage ran where it was recorded
	Device  string            `json:"device"`
	Backend string            `json:"backend"`
	Host    string            `json:"host"`
	// ReproVersion is the version of repro that computed it.
	ReproVersion string         `json:"repro_version"`
	Outputs      []MirrorOutput `json:"outputs"`
}

// MirrorOutput is one output of a mirrored run.
type MirrorOutput struct {
	Port       string `json:"port"`
	Kind       string `json:"kind"`
	Digest     string `json:"digest"`
	Size       int64  `json:"size"`       // bytes of the artifact's files
	Compressed int64  `json:"compressed"` // bytes of objects/<digest>.tar.gz
}

// Output returns the output on port, if the run has one.
func (r *MirrorRun) Output(port string) (MirrorOutput, bool) {
	for _, o := range r.Outputs {
		if o.Port == port {
			return o, true
		}
	}
	return MirrorOutput{}, false
}

// Mirror is an opened mirror directory.
type Mirror struct {
	dir   string
	idx   MirrorIndex
	byKey map[string]*MirrorRun
}

// ErrNoMirror says a directory holds no mirror (no index.json).
var ErrNoMirror = errors.New("no mirror here")

// OpenMirror reads the mirror in dir. A directory without index.json is
// ErrNoMirror; an index that is not a valid mirror index is an error
// naming the file.
func OpenMirror(dir string) (*Mirror, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	p := filepath.Join(abs, MirrorIndexFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s has no %s", ErrNoMirror, abs, MirrorIndexFile)
	}
	if err != nil {
		return nil, err
	}
	m := &Mirror{dir: abs, byKey: map[string]*MirrorRun{}}
	if err := json.Unmarshal(b, &m.idx); err != nil {
		return nil, fmt.Errorf("%s: not a mirror index: %v", p, err)
	}
	if err := m.idx.validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	for _, r := range m.idx.Runs {
		m.byKey[r.Key] = r
	}
	return m, nil
}

func (x *MirrorIndex) validate() error {
	if x.Format != MirrorFormat {
		return fmt.Errorf("format %q, want %q", x.Format, MirrorFormat)
	}
	seen := map[string]bool{}
	for i, r := range x.Runs {
		switch {
		case r == nil:
			return fmt.Errorf("runs[%d] is null", i)
		case !validDigest(r.Key):
			return fmt.Errorf("runs[%d]: key %q is not a key", i, r.Key)
		case seen[r.Key]:
			return fmt.Errorf("runs[%d]: key %s appears twice", i, r.Key)
		case r.Type == "" || len(r.Outputs) == 0:
			return fmt.Errorf("runs[%d] (%s): a run needs a type and outputs", i, r.Key[:12])
		}
		seen[r.Key] = true
		ports := map[string]bool{}
		for _, o := range r.Outputs {
			if !validDigest(o.Digest) || o.Port == "" || ports[o.Port] || o.Size < 0 {
				return fmt.Errorf("runs[%d] (%s): output %q: want a port named once, a digest and a size", i, r.Key[:12], o.Port)
			}
			ports[o.Port] = true
		}
	}
	return nil
}

// Dir is the mirror's absolute directory.
func (m *Mirror) Dir() string { return m.dir }

// Index is the mirror's index (callers must not modify it).
func (m *Mirror) Index() *MirrorIndex { return &m.idx }

// Lookup returns the mirrored run with that key, or nil.
func (m *Mirror) Lookup(key string) *MirrorRun {
	if m == nil {
		return nil
	}
	return m.byKey[key]
}

// Runs returns the mirrored runs of a stage type at a version: the
// candidates `repro plan` tries for a stage whose key waits for an
// upstream stage to run.
func (m *Mirror) Runs(typ string, version int) []*MirrorRun {
	if m == nil {
		return nil
	}
	var out []*MirrorRun
	for _, r := range m.idx.Runs {
		if r.Type == typ && r.Version == version {
			out = append(out, r)
		}
	}
	return out
}

// ObjectFile is the archive of the artifact with that digest.
func (m *Mirror) ObjectFile(digest string) string {
	return filepath.Join(m.dir, mirrorObjects, digest+".tar.gz")
}

// Present reports whether every output of r has its archive in the mirror
// (what `repro plan` can tell without reading them).
func (m *Mirror) Present(r *MirrorRun) bool {
	for _, o := range r.Outputs {
		if fi, err := os.Stat(m.ObjectFile(o.Digest)); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// MirrorError says that a mirrored artifact was refused: its archive is
// missing, unreadable or malformed, or its content does not hash to the
// recorded digest. Nothing of it entered the cache.
type MirrorError struct {
	Digest string
	File   string
	Reason string
}

func (e *MirrorError) Error() string {
	return fmt.Sprintf("mirror object %s refused: %s", e.File, e.Reason)
}

// ImportMirrorObject makes the artifact o of a mirrored run present and
// intact in c: it unpacks the archive into tmp/, hashes what came out and,
// only when that is o's digest, seals it into objects/ (PutObject). An
// intact copy already in c is reused. A damaged archive is a
// *MirrorError and leaves c unchanged. The caller holds key's lock and
// records the run (Record) after every output is in place.
func (c *Store) ImportMirrorObject(m *Mirror, key string, o MirrorOutput) (size int64, err error) {
	if !validDigest(o.Digest) {
		return 0, fmt.Errorf("%q is not a digest", o.Digest)
	}
	if got, size, err := DigestDir(c.ObjectPath(o.Digest)); err == nil && got == o.Digest {
		return size, nil
	}
	file := m.ObjectFile(o.Digest)
	tmp := c.TempDir(key)
	refuse := func(format string, args ...any) (int64, error) {
		RemoveAll(tmp)
		return 0, &MirrorError{Digest: o.Digest, File: file, Reason: fmt.Sprintf(format, args...)}
	}
	if err := extractTarGz(file, tmp, o.Size); err != nil {
		return refuse("%v", err)
	}
	got, size, err := DigestDir(tmp)
	if err != nil {
		return refuse("%v", err)
	}
	if got != o.Digest {
		return refuse("its content hashes to %s, not the recorded %s", got[:12], o.Digest[:12])
	}
	stored, size, err := c.PutObject(tmp)
	if err != nil {
		RemoveAll(tmp)
		return 0, err
	}
	if stored != o.Digest { // changed between the two hashes
		return 0, fmt.Errorf("object %s changed while it was imported", o.Digest)
	}
	return size, nil
}

// VerifyMirror unpacks every archive of m into a temporary directory under
// tmpRoot and checks it against its recorded digest; it returns one
// *MirrorError per damaged object.
func VerifyMirror(m *Mirror, tmpRoot string) ([]error, error) {
	var probs []error
	seen := map[string]bool{}
	for _, r := range m.idx.Runs {
		for _, o := range r.Outputs {
			if seen[o.Digest] {
				continue
			}
			seen[o.Digest] = true
			if err := checkArchive(m.ObjectFile(o.Digest), o, tmpRoot); err != nil {
				var me *MirrorError
				if !errors.As(err, &me) {
					return probs, err
				}
				probs = append(probs, err)
			}
		}
	}
	return probs, nil
}

// checkArchive unpacks file under tmpRoot and compares it with o: a
// *MirrorError when it does not match, another error when tmpRoot fails.
func checkArchive(file string, o MirrorOutput, tmpRoot string) error {
	if err := os.MkdirAll(tmpRoot, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(tmpRoot, "mirror-check-")
	if err != nil {
		return err
	}
	defer RemoveAll(tmp)
	dst := filepath.Join(tmp, "a")
	if err := extractTarGz(file, dst, o.Size); err != nil {
		return &MirrorError{Digest: o.Digest, File: file, Reason: err.Error()}
	}
	got, _, err := DigestDir(dst)
	if err != nil {
		return &MirrorError{Digest: o.Digest, File: file, Reason: err.Error()}
	}
	if got != o.Digest {
		return &MirrorError{Digest: o.Digest, File: file, Reason: fmt.Sprintf("its content hashes to %s, not the recorded %s", got[:12], o.Digest[:12])}
	}
	return nil
}

// extractTarGz unpacks a gzip'd tar of regular files and directories into
// dst (created), refusing anything else: links, devices, absolute or
// escaping names, and more than limit bytes of file content (the
// artifact's recorded size, so a damaged or hostile archive cannot fill
// the disk).
func extractTarGz(file, dst string, limit int64) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	defer zr.Close()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(h.Name, "/")
		if name == "" || name == "." || path.IsAbs(name) || path.Clean(name) != name || name == ".." ||
			strings.HasPrefix(name, "../") || strings.Contains(name, "\\") {
			return fmt.Errorf("entry %q: not a plain relative path", h.Name)
		}
		to := filepath.Join(dst, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(to, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if h.Size < 0 || total+h.Size > limit {
				return fmt.Errorf("entry %q: more bytes than the artifact's recorded %d", h.Name, limit)
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			n, err := io.Copy(out, io.LimitReader(tr, h.Size))
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if n != h.Size {
				return fmt.Errorf("entry %q: truncated", h.Name)
			}
			total += n
		default:
			return fmt.Errorf("entry %q: type %q; an artifact holds only regular files and directories", h.Name, h.Typeflag)
		}
	}
	// The gzip trailer's checksum is checked at the end of the stream.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return err
	}
	return nil
}

// writeTarGz writes the artifact directory src as a deterministic gzip'd
// tar: entries in byte order of their paths, directories 0755 and files
// 0644, no times, owners or names beyond the relative path.
func writeTarGz(src string, w io.Writer) error {
	var paths []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == src {
			return nil
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return fmt.Errorf("%s: artifacts may hold only regular files and directories", p)
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return err
	}
	rel := func(p string) string { r, _ := filepath.Rel(src, p); return filepath.ToSlash(r) }
	sort.Slice(paths, func(i, j int) bool { return rel(paths[i]) < rel(paths[j]) })
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: rel(p), Format: tar.FormatPAX, ModTime: time.Unix(0, 0)}
		if fi.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			continue
		}
		h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, fi.Size()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		n, err := io.Copy(tw, f)
		f.Close()
		if err != nil {
			return err
		}
		if n != fi.Size() {
			return fmt.Errorf("%s changed while it was archived", p)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// MirrorPick is one recorded run to publish: its key in the source cache,
// and the stage and experiment it is published for.
type MirrorPick struct {
	Key, Stage, Source string
}

// MirrorRefreshed is what a refresh did with one entry of the new index.
type MirrorRefreshed struct {
	Run *MirrorRun
	// Action: "added", "replaced" (the stage of that source had another
	// key), "unchanged" (the same key, its archives intact) or "kept"
	// (an entry the refresh did not touch).
	Action string
}

// MirrorRefreshStats is what RefreshMirror did.
type MirrorRefreshStats struct {
	Entries []MirrorRefreshed
	Removed []*MirrorRun // entries dropped: replaced by a new key
	// Compressed is the mirror's size after the refresh (every archive
	// the index names), Budget what it was checked against.
	Compressed, Budget int64
	Written            int // archives written
}

// BudgetError is a refresh refused because the mirror would exceed its
// budget; nothing was changed.
type BudgetError struct {
	Compressed, Budget int64
	Largest            []string // the biggest archives, "stage port: size"
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("the mirror would hold %d compressed bytes, over its budget of %d; largest: %s",
		e.Compressed, e.Budget, strings.Join(e.Largest, ", "))
}

// RefreshMirror publishes the picked runs of src into the mirror in dir
// (created if needed), within budget compressed bytes: each pick's
// artifacts are verified in src, archived and checked back, and entries
// of the same source and stage under another key are replaced (their
// archives removed when nothing else names them). Entries the picks do
// not touch are kept. When the result would exceed budget nothing is
// changed and the error is a *BudgetError. The index is written last, by
// rename, so a crash leaves the old mirror (and at most unreferenced
// archives, which the next refresh removes).
func RefreshMirror(ctx context.Context, dir string, src *Store, picks []MirrorPick, budget int64) (*MirrorRefreshStats, error) {
	if budget <= 0 {
		budget = DefaultMirrorBudget
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	old := MirrorIndex{Format: MirrorFormat}
	if m, err := OpenMirror(abs); err == nil {
		old = m.idx
	} else if !errors.Is(err, ErrNoMirror) {
		return nil, fmt.Errorf("%v (fix it or remove it before a refresh)", err)
	}
	objDir := filepath.Join(abs, mirrorObjects)
	if err := os.MkdirAll(objDir, 0o755); err != nil {
		return nil, err
	}
	stats := &MirrorRefreshStats{Budget: budget}
	fresh, order, err := mirrorPicks(ctx, src, picks)
	if err != nil {
		return nil, err
	}
	runs, action := mergeMirrorRuns(old.Runs, fresh, order, stats)
	// Archives: reuse an intact one, write the rest under temporary names.
	m := &Mirror{dir: abs}
	tmpRoot := filepath.Join(abs, ".tmp")
	defer os.RemoveAll(tmpRoot)
	pending := map[string]string{} // digest -> temporary archive
	defer func() {
		for _, t := range pending {
			os.Remove(t)
		}
	}()
	sizes, total, biggest, err := m.archiveRuns(runs, fresh, action, src, objDir, tmpRoot, pending)
	if err != nil {
		return nil, err
	}
	stats.Compressed = total
	if total > budget {
		sort.Slice(biggest, func(i, j int) bool { return lastInt(biggest[i]) > lastInt(biggest[j]) })
		if len(biggest) > 3 {
			biggest = biggest[:3]
		}
		return stats, &BudgetError{Compressed: total, Budget: budget, Largest: biggest}
	}
	for digest, t := range pending {
		if err := os.Rename(t, m.ObjectFile(digest)); err != nil {
			return nil, err
		}
		delete(pending, digest)
		stats.Written++
	}
	if err := syncDir(objDir); err != nil {
		return nil, err
	}
	idx := MirrorIndex{Format: MirrorFormat, Budget: budget, Runs: runs}
	if idx.Runs == nil {
		idx.Runs = []*MirrorRun{}
	}
	if err := idx.validate(); err != nil {
		return nil, fmt.Errorf("the new index would be invalid: %v", err)
	}
	b, err := json.MarshalIndent(&idx, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(filepath.Join(abs, MirrorIndexFile), append(b, '\n')); err != nil {
		return nil, err
	}
	sweepArchives(objDir, sizes)
	for _, r := range runs {
		stats.Entries = append(stats.Entries, MirrorRefreshed{Run: r, Action: action[r.Key]})
	}
	return stats, nil
}

// mirrorPicks reads each pick's run from src and verifies its objects
// there: the fresh entries by key, and in pick order.
func mirrorPicks(ctx context.Context, src *Store, picks []MirrorPick) (map[string]*MirrorRun, []*MirrorRun, error) {
	fresh := map[string]*MirrorRun{}
	var order []*MirrorRun
	for _, p := range picks {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		ri, ok, err := src.Lookup(ctx, p.Key)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, fmt.Errorf("stage %s: key %s is not recorded in %s", p.Stage, short12(p.Key), src.Dir())
		}
		if fresh[p.Key] != nil {
			continue
		}
		r := &MirrorRun{Key: ri.Key, Stage: p.Stage, Source: p.Source, Type: ri.Type, Version: ri.Version,
			Params: ri.Params, Inputs: ri.Inputs, Seed: ri.Seed, Seeded: ri.Seeded, Seconds: ri.Duration.Seconds(),
			Device: ri.Device, Backend: ri.Backend, Host: ri.Host, ReproVersion: ri.ReproVersion}
		ports := make([]string, 0, len(ri.Outputs))
		for port := range ri.Outputs {
			ports = append(ports, port)
		}
		sort.Strings(ports)
		for _, port := range ports {
			a := ri.Outputs[port]
			if err := src.VerifyObject(a.Digest); err != nil {
				return nil, nil, fmt.Errorf("stage %s, output %s: %v (run `repro cache verify` on %s)", p.Stage, port, err, src.Dir())
			}
			_, size, err := DigestDir(src.ObjectPath(a.Digest))
			if err != nil {
				return nil, nil, err
			}
			r.Outputs = append(r.Outputs, MirrorOutput{Port: port, Kind: string(a.Kind), Digest: a.Digest, Size: size})
		}
		fresh[p.Key] = r
		order = append(order, r)
	}
	return fresh, order, nil
}

// mergeMirrorRuns is the new index's entries: the old ones not replaced,
// in their order, then the fresh ones that are new; what happened to each
// (by key), and the removed ones in stats.
func mergeMirrorRuns(oldRuns []*MirrorRun, fresh map[string]*MirrorRun, order []*MirrorRun, stats *MirrorRefreshStats) ([]*MirrorRun, map[string]string) {
	replacedBy := map[string]bool{} // source + stage of a fresh entry
	for _, r := range order {
		replacedBy[r.Source+"\x00"+r.Stage] = true
	}
	var runs []*MirrorRun
	action := map[string]string{}
	for _, r := range oldRuns {
		switch {
		case fresh[r.Key] != nil:
			runs = append(runs, fresh[r.Key])
			action[r.Key] = "unchanged"
		case replacedBy[r.Source+"\x00"+r.Stage]:
			stats.Removed = append(stats.Removed, r)
		default:
			runs = append(runs, r)
			action[r.Key] = "kept"
		}
	}
	inOld := map[string]bool{}
	for _, r := range oldRuns {
		inOld[r.Key] = true
	}
	for _, r := range order {
		if inOld[r.Key] {
			continue
		}
		runs = append(runs, r)
		action[r.Key] = "added"
		for _, gone := range stats.Removed {
			if gone.Source == r.Source && gone.Stage == r.Stage {
				action[r.Key] = "replaced"
			}
		}
	}
	return runs, action
}

// archiveRuns gives every output of runs an archive: an intact one
// already in the mirror is reused, the rest are written from src under
// temporary names (recorded in pending, digest -> file). It returns each
// digest's compressed size, the total, and "stage port: size" lines.
func (m *Mirror) archiveRuns(runs []*MirrorRun, fresh map[string]*MirrorRun, action map[string]string, src *Store, objDir, tmpRoot string, pending map[string]string) (map[string]int64, int64, []string, error) {
	sizes := map[string]int64{}
	var total int64
	var biggest []string
	for _, r := range runs {
		for i, o := range r.Outputs {
			if _, done := sizes[o.Digest]; done {
				r.Outputs[i].Compressed = sizes[o.Digest]
				continue
			}
			file := m.ObjectFile(o.Digest)
			intact := false
			if fi, err := os.Stat(file); err == nil && fi.Mode().IsRegular() {
				if err := checkArchive(file, o, tmpRoot); err == nil {
					intact = true
					sizes[o.Digest] = fi.Size()
				}
			}
			if !intact {
				if fresh[r.Key] == nil {
					return nil, 0, nil, fmt.Errorf("entry %s (%s): archive %s is missing or damaged and the refresh does not include its stage: refresh that stage too", short12(r.Key), r.Stage, file)
				}
				t, size, err := archiveObject(src.ObjectPath(o.Digest), objDir, o, tmpRoot)
				if err != nil {
					return nil, 0, nil, fmt.Errorf("stage %s, output %s: %w", r.Stage, o.Port, err)
				}
				pending[o.Digest] = t
				sizes[o.Digest] = size
				if action[r.Key] == "unchanged" {
					action[r.Key] = "rewritten"
				}
			}
			r.Outputs[i].Compressed = sizes[o.Digest]
			total += sizes[o.Digest]
			biggest = append(biggest, fmt.Sprintf("%s %s: %d", r.Stage, o.Port, sizes[o.Digest]))
		}
	}
	return sizes, total, biggest, nil
}

// sweepArchives removes the archives nothing names any more (replaced
// entries, an interrupted refresh's leftovers).
func sweepArchives(objDir string, sizes map[string]int64) {
	ents, _ := os.ReadDir(objDir)
	for _, e := range ents {
		d, ok := strings.CutSuffix(e.Name(), ".tar.gz")
		if _, named := sizes[d]; ok && validDigest(d) && named {
			continue
		}
		if strings.HasPrefix(e.Name(), ".") || (ok && validDigest(d)) {
			os.Remove(filepath.Join(objDir, e.Name()))
		}
	}
}

// archiveObject writes the artifact directory obj as a temporary archive in
// objDir, checks that it unpacks to o's digest, and returns its name and
// size.
func archiveObject(obj, objDir string, o MirrorOutput, tmpRoot string) (string, int64, error) {
	f, err := os.CreateTemp(objDir, "."+o.Digest[:12]+"-*.tar.gz")
	if err != nil {
		return "", 0, err
	}
	name := f.Name()
	fail := func(err error) (string, int64, error) {
		f.Close()
		os.Remove(name)
		return "", 0, err
	}
	if err := writeTarGz(obj, f); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Chmod(name, 0o644); err != nil {
		return fail(err)
	}
	// What was written must read back as the artifact.
	if err := checkArchive(name, o, tmpRoot); err != nil {
		os.Remove(name)
		return "", 0, err
	}
	return name, fi.Size(), nil
}

func writeFileAtomic(p string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+"-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return err
	}
	return syncDir(filepath.Dir(p))
}

func lastInt(s string) int64 {
	var n int64
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		fmt.Sscan(s[i+1:], &n)
	}
	return n
}

func short12(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
