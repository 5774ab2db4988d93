package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"repro/registry"
)

// Claims and answers of language-model requests as files beside the
// objects, for processes that do not open the index: the jobs of a cluster
// executor (runner/remote) read a snapshot of the request table and write
// a journal, so claims in llm_claims are invisible to them and theirs
// would be to everyone else. Every process sharing the cache directory --
// jobs on any node, and runs on the index, which take these claims besides
// their rows in llm_claims -- claims here before sending:
//
//	requests/claims/<key>   who holds the request: owner, host, pid, lease
//	requests/answers/<key>  the answer, written by the holder before it
//	                        lets go of the claim, read by those that waited
//
// A claim is created whole (written aside, then hard-linked into place:
// link fails when the name exists, on NFS too) and names its holder's
// host and pid and a lease that the holder renews every ClaimLease/3. It is
// taken over when its holder's process is gone from this host, or when the
// lease ran out (a holder elsewhere that died). Answer files duplicate
// index rows and journal lines; the process that finds the cache idle (the
// store lock free: no run and no job holds it) merges them into the index
// and removes them (Store.Close, GC).
const (
	sharedDir  = "requests"
	claimsSub  = "claims"
	answersSub = "answers"
)

// SharedRequests claims requests in flight and publishes their answers
// through files in a cache directory (see above). The zero value is not
// usable; Store.SharedRequests makes one per stage run.
type SharedRequests struct {
	dir   string // <cache>/requests
	owner string
	host  string
	pid   int

	mu       sync.Mutex
	held     map[string]bool
	renewing bool
}

// SharedRequests returns the file claims and answers of the cache, owned by
// a new token: two of them in one process exclude each other as two
// processes do.
func (c *Store) SharedRequests() *SharedRequests {
	return &SharedRequests{dir: filepath.Join(c.dir, sharedDir), owner: c.host + ":" + fmt.Sprint(os.Getpid()) + ":" + randomSuffix(),
		host: c.host, pid: os.Getpid(), held: map[string]bool{}}
}

// claimFile is a claim's content.
type claimFile struct {
	Owner     string `json:"owner"`
	Host      string `json:"host"`
	PID       int    `json:"pid"`
	ExpiresNS int64  `json:"expires_ns"`
}

func (s *SharedRequests) claimPath(key string) string  { return filepath.Join(s.dir, claimsSub, key) }
func (s *SharedRequests) answerPath(key string) string { return filepath.Join(s.dir, answersSub, key) }

// Claim takes key unless another live holder has it.
func (s *SharedRequests) Claim(ctx context.Context, key string) (bool, error) {
	if !validDigest(key) {
		return false, fmt.Errorf("request key %q is not 64 hex digits", key)
	}
	path := s.claimPath(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	// A few rounds: a lapsed claim is moved aside, then the name is
	// contended again; whoever loses a round to a live holder waits.
	for round := 0; round < 3; round++ {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		err := s.create(path)
		if err == nil {
			s.mu.Lock()
			s.held[key] = true
			if !s.renewing {
				s.renewing = true
				go s.renew()
			}
			s.mu.Unlock()
			return true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("claiming request %.12s: %w", key, err)
		}
		cur, mtime, err := readClaim(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			return false, err
		}
		if cur != nil && cur.Owner == s.owner {
			s.mu.Lock()
			s.held[key] = true
			s.mu.Unlock()
			return true, nil
		}
		if !s.lapsed(cur, mtime) {
			return false, nil
		}
		if err := s.takeOver(path, cur); err != nil {
			return false, err
		}
	}
	return false, nil
}

// create writes this owner's claim aside and links it to path: the claim
// appears whole or not at all, and not when path exists.
func (s *SharedRequests) create(path string) error {
	tmp, err := s.writeAside(path)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return os.Link(tmp, path)
}

// writeAside writes a claim of this owner with a fresh lease beside path
// and returns its name.
func (s *SharedRequests) writeAside(path string) (string, error) {
	b, _ := json.Marshal(claimFile{Owner: s.owner, Host: s.host, PID: s.pid, ExpiresNS: time.Now().Add(ClaimLease).UnixNano()})
	tmp := path + ".tmp-" + randomSuffix()
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return "", err
	}
	return tmp, nil
}

// lapsed reports whether a claim no longer holds: its process is gone from
// this host, or its lease ran out. A claim that cannot be read (a crash
// while it was written) lapses a lease after it was last written.
func (s *SharedRequests) lapsed(c *claimFile, mtime time.Time) bool {
	now := time.Now()
	if c == nil {
		return now.After(mtime.Add(ClaimLease))
	}
	return c.ExpiresNS < now.UnixNano() || (c.Host == s.host && !alive(c.PID))
}

// takeOver removes the lapsed claim stale from path. It is moved aside
// first and checked: when another taker was faster and a live claim took
// its place, that claim is what was moved, and it is put back.
func (s *SharedRequests) takeOver(path string, stale *claimFile) error {
	aside := path + ".stale-" + randomSuffix()
	if err := os.Rename(path, aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer os.Remove(aside)
	moved, _, err := readClaim(aside)
	if err != nil || sameClaim(moved, stale) {
		return nil
	}
	// Put back a live claim; if yet another claim took the name, both
	// holders send (paid twice, never answered wrongly).
	if err := os.Link(aside, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

func sameClaim(a, b *claimFile) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// readClaim reads a claim file: nil (and its time) when it does not parse.
func readClaim(path string) (*claimFile, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, time.Time{}, err
	}
	var c claimFile
	if json.Unmarshal(b, &c) != nil || c.Owner == "" {
		return nil, fi.ModTime(), nil
	}
	return &c, fi.ModTime(), nil
}

// Release gives up key if this owner still holds it.
func (s *SharedRequests) Release(ctx context.Context, key string) error {
	s.mu.Lock()
	delete(s.held, key)
	s.mu.Unlock()
	path := s.claimPath(key)
	cur, _, err := readClaim(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if cur == nil || cur.Owner != s.owner {
		return nil // taken over (this holder stalled past its lease)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// renew extends this owner's claims every ClaimLease/3 while it holds any.
func (s *SharedRequests) renew() {
	for {
		time.Sleep(ClaimLease / 3)
		s.mu.Lock()
		if len(s.held) == 0 {
			s.renewing = false
			s.mu.Unlock()
			return
		}
		keys := make([]string, 0, len(s.held))
		for k := range s.held {
			keys = append(keys, k)
		}
		s.mu.Unlock()
		for _, k := range keys {
			s.renewOne(k)
		}
	}
}

// renewOne rewrites the claim on key with a fresh lease, if it is still
// this owner's (a released or lost claim is left alone). A failure only
// lets the claim lapse: at worst another process sends the request too.
func (s *SharedRequests) renewOne(key string) {
	path := s.claimPath(key)
	cur, _, err := readClaim(path)
	if err != nil || cur == nil || cur.Owner != s.owner {
		return
	}
	s.mu.Lock()
	held := s.held[key]
	s.mu.Unlock()
	if !held {
		return
	}
	tmp, err := s.writeAside(path)
	if err != nil {
		return
	}
	if os.Rename(tmp, path) != nil {
		os.Remove(tmp)
	}
}

// answerFile is a published answer: the stored request whole, so that an
// answer file can be merged into the index like a journal line.
type answerFile struct {
	Key              string `json:"key"`
	Provider         string `json:"provider"`
	Model            string `json:"model"`
	Request          string `json:"request"`
	Response         string `json:"response"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	DurationNS       int64  `json:"duration_ns"`
	Failure          string `json:"failure,omitempty"`
	Stage            string `json:"stage,omitempty"`
	StageKey         string `json:"stage_key,omitempty"`
}

// PutAnswer publishes the answer to r.Key for the processes waiting on its
// claim; the holder calls it before Release. The file appears whole
// (written aside, fsynced, renamed).
func (s *SharedRequests) PutAnswer(r registry.StoredRequest) error {
	if !validDigest(r.Key) {
		return fmt.Errorf("request key %q is not 64 hex digits", r.Key)
	}
	b, err := json.Marshal(answerFile{Key: r.Key, Provider: r.Provider, Model: r.Model, Request: string(r.Request),
		Response: string(r.Response), PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens,
		DurationNS: int64(r.Duration), Failure: r.Failure, Stage: r.Stage, StageKey: r.StageKey})
	if err != nil {
		return err
	}
	path := s.answerPath(r.Key)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp-" + randomSuffix()
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("publishing the answer to %.12s: %w", r.Key, err)
	}
	return nil
}

// Answer returns the published response JSON for key. A file that does
// not read back whole (a crash of its node before it reached the disk) is
// no answer.
func (s *SharedRequests) Answer(key string) ([]byte, bool, error) {
	if !validDigest(key) {
		return nil, false, nil
	}
	a, err := readAnswer(s.answerPath(key))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errBadAnswer) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return []byte(a.Response), true, nil
}

var errBadAnswer = errors.New("answer file does not parse")

func readAnswer(path string) (*answerFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var a answerFile
	if err := json.Unmarshal(b, &a); err != nil || a.Key != filepath.Base(path) || a.Response == "" {
		return nil, errBadAnswer
	}
	return &a, nil
}

// settleAnswers merges published answers into the index and removes them,
// with claims and temporary files left by dead processes, when nobody uses
// the cache: exclusive is held, or is taken here without waiting (a run or
// job holds the store lock shared while it may wait on an answer file).
// It reports how many answers were new to the index.
func (c *Store) settleAnswers(ctx context.Context, exclusive bool) (int, error) {
	dir := filepath.Join(c.dir, sharedDir, answersSub)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(ents) == 0) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if c.db == nil || c.readOnly {
		return 0, nil
	}
	if !exclusive {
		now, cancel := context.WithCancel(ctx)
		cancel() // one attempt, no wait
		gl, err := c.LockStore(now, true)
		if err != nil {
			return 0, nil // in use: the next idle process settles them
		}
		defer gl.Unlock()
	}
	var rs []registry.StoredRequest
	var done []string
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		if strings.Contains(e.Name(), ".tmp-") {
			done = append(done, path) // a writer that died before its rename
			continue
		}
		a, err := readAnswer(path)
		if err != nil {
			done = append(done, path)
			continue
		}
		rs = append(rs, registry.StoredRequest{Key: a.Key, Provider: a.Provider, Model: a.Model, Request: []byte(a.Request),
			Response: []byte(a.Response), PromptTokens: a.PromptTokens, CompletionTokens: a.CompletionTokens,
			Duration: time.Duration(a.DurationNS), Failure: a.Failure, Stage: a.Stage, StageKey: a.StageKey})
		done = append(done, path)
	}
	n, err := c.PutRequests(ctx, rs)
	if err != nil {
		return 0, err
	}
	for _, p := range done {
		os.Remove(p)
	}
	// Claims whose holders are gone (and what a process that died left
	// beside them); a live holder elsewhere keeps its claim.
	cdir := filepath.Join(c.dir, sharedDir, claimsSub)
	judge := c.SharedRequests()
	if cl, err := os.ReadDir(cdir); err == nil {
		for _, e := range cl {
			path := filepath.Join(cdir, e.Name())
			cur, mtime, err := readClaim(path)
			if err != nil {
				continue
			}
			if strings.Contains(e.Name(), ".") {
				cur = nil // a claim being written or moved aside: judged by its age
			}
			if judge.lapsed(cur, mtime) {
				os.Remove(path)
			}
		}
	}
	return n, nil
}
