// Package encoder defines the one interface every evaluation consumes: an
// Encoder maps sentences to vectors. Non-neural encoders (GloVe average,
// TF-IDF, vectors read from a file) and trained transformer models all
// implement it, and each is stored as an encoder artifact: a directory with
// encoder.json naming its type plus whatever files that type needs.
package encoder

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// Encoder maps sentences to fixed-size vectors. Encode returns one vector
// per input sentence, in order. Implementations must be safe to call from
// one goroutine at a time; they may parallelise internally.
type Encoder interface {
	Encode(ctx context.Context, sentences []string) ([][]float32, error)
	Dim() int
}

// Opener opens an encoder artifact directory whose encoder.json has the
// opener's type. meta is encoder.json's raw content.
type Opener func(dir string, meta json.RawMessage) (Encoder, error)

var (
	mu      sync.RWMutex
	openers = map[string]Opener{}
)

// RegisterType makes Open understand encoder.json files with "type": name.
// Packages that define encoder types call it from a Register function that
// registry/builtin calls explicitly (no init side effects).
func RegisterType(name string, open Opener) {
	mu.Lock()
	defer mu.Unlock()
	openers[name] = open
}

// Types lists the registered encoder types.
func Types() []string {
	mu.RLock()
	defer mu.RUnlock()
	var ns []string
	for n := range openers {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// Meta is the part of encoder.json every encoder type has.
type Meta struct {
	Type string `json:"type"`
}

// Open reads dir/encoder.json and opens the encoder it describes.
func Open(dir string) (Encoder, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "encoder.json"))
	if err != nil {
		return nil, fmt.Errorf("open encoder: %w", err)
	}
	var m Meta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("open encoder: %s: %v", filepath.Join(dir, "encoder.json"), err)
	}
	mu.RLock()
	open, ok := openers[m.Type]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("open encoder: %s: unknown encoder type %q (known: %v)", filepath.Join(dir, "encoder.json"), m.Type, Types())
	}
	return open(dir, raw)
}

// WriteMeta writes v as dir/encoder.json.
func WriteMeta(dir string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "encoder.json"), append(b, '\n'), 0o644)
}
