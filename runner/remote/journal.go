package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"repro/registry"
	"repro/store"
)

// Journal is the request cache of a stage running as a job: lookups read
// the answers the job stored itself (this attempt or an earlier one), then
// the coordinator's snapshot; new answers are appended to the journal file
// and fsynced before PutRequest returns, so a job killed at any moment
// loses no answer it stored, and the coordinator merges them all.
//
// With Share, the jobs of one cache (and runs on its index) also see each
// other's requests in flight: the journal claims each request in the
// cache's claim files before it is sent (registry.RequestClaimer), and
// publishes each answer where a job waiting on that claim reads it, so a
// request that concurrent jobs share is paid for once.
type Journal struct {
	path     string
	snapshot *store.RequestSnapshot // nil: no snapshot (the stage sends no requests)
	shared   *store.SharedRequests  // nil: claims nothing, publishes nothing

	mu   sync.Mutex
	f    *os.File
	have map[string][]byte
}

// journalLine is one answer in a journal file (JSON lines).
type journalLine struct {
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

// OpenJournal opens (creating it if need be) the journal at path, with the
// snapshot at snapshot ("" for none).
func OpenJournal(path, snapshot string) (*Journal, error) {
	j := &Journal{path: path, have: map[string][]byte{}}
	prev, err := ReadJournal(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, r := range prev {
		if _, ok := j.have[r.Key]; !ok {
			j.have[r.Key] = r.Response
		}
	}
	if snapshot != "" {
		if j.snapshot, err = store.OpenRequestSnapshot(snapshot); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// Share makes the journal claim requests and publish answers through the
// cache's files (see Journal).
func (j *Journal) Share(s *store.SharedRequests) { j.shared = s }

// LookupRequest implements registry.RequestStore: the job's own answers,
// the snapshot, then the answers other jobs published since it was made.
func (j *Journal) LookupRequest(ctx context.Context, key string) ([]byte, bool, error) {
	j.mu.Lock()
	resp, ok := j.have[key]
	j.mu.Unlock()
	if ok {
		return resp, true, nil
	}
	if j.snapshot != nil {
		resp, ok, err := j.snapshot.LookupRequest(ctx, key)
		if err != nil || ok {
			return resp, ok, err
		}
	}
	if j.shared == nil {
		return nil, false, nil
	}
	return j.shared.Answer(key)
}

// ClaimRequest implements registry.RequestClaimer.
func (j *Journal) ClaimRequest(ctx context.Context, key string) (bool, error) {
	if j.shared == nil {
		return true, nil
	}
	return j.shared.Claim(ctx, key)
}

// ReleaseRequest implements registry.RequestClaimer.
func (j *Journal) ReleaseRequest(ctx context.Context, key string) error {
	if j.shared == nil {
		return nil
	}
	return j.shared.Release(ctx, key)
}

// PutRequest implements registry.RequestStore: the answer is on disk when
// it returns.
func (j *Journal) PutRequest(ctx context.Context, r registry.StoredRequest) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.have[r.Key]; ok {
		return nil
	}
	if j.f == nil {
		f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("request journal: %w", err)
		}
		j.f = f
	}
	b, err := json.Marshal(journalLine{Key: r.Key, Provider: r.Provider, Model: r.Model,
		Request: string(r.Request), Response: string(r.Response), PromptTokens: r.PromptTokens,
		CompletionTokens: r.CompletionTokens, DurationNS: int64(r.Duration), Failure: r.Failure, Stage: r.Stage, StageKey: r.StageKey})
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("request journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("request journal %s: %w", j.path, err)
	}
	j.have[r.Key] = append([]byte(nil), r.Response...)
	if j.shared != nil {
		// After the journal: the answer is the job's before it is
		// anyone else's.
		return j.shared.PutAnswer(r)
	}
	return nil
}

// Close closes the journal and the snapshot.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	var err error
	if j.f != nil {
		err = j.f.Close()
		j.f = nil
	}
	if j.snapshot != nil {
		j.snapshot.Close()
		j.snapshot = nil
	}
	return err
}

// ReadJournal reads the answers in a journal file. A last line cut short
// (the job was killed while appending it) is left out: its answer was not
// stored, as PutRequest had not returned.
func ReadJournal(path string) ([]registry.StoredRequest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []registry.StoredRequest
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for line := 1; sc.Scan(); line++ {
		text := sc.Bytes()
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		var l journalLine
		if err := json.Unmarshal(text, &l); err != nil {
			if !bytes.HasSuffix(b, []byte("\n")) && line == bytes.Count(b, []byte("\n"))+1 {
				break // the torn last line
			}
			return out, fmt.Errorf("request journal %s:%d: %v", path, line, err)
		}
		out = append(out, registry.StoredRequest{Key: l.Key, Provider: l.Provider, Model: l.Model,
			Request: []byte(l.Request), Response: []byte(l.Response), PromptTokens: l.PromptTokens,
			CompletionTokens: l.CompletionTokens, Duration: time.Duration(l.DurationNS), Failure: l.Failure, Stage: l.Stage, StageKey: l.StageKey})
	}
	return out, sc.Err()
}
