package registry

import (
	"context"
	"time"
)

// RequestStore is the cache of language-model requests a stage reaches
// through Env.Requests: answers by request key (package internal/llm
// defines the key), kept apart from stage results, so that a stage that
// re-runs (its parameters changed, an upstream stage re-ran, a wider grid)
// finds every request it repeats already answered. The runner implements
// it on its SQLite index; an implementation must make PutRequest durable
// before it returns, since a stage stores each answer as it arrives and a
// crash must lose none that was stored.
type RequestStore interface {
	// LookupRequest returns the stored response JSON for key.
	LookupRequest(ctx context.Context, key string) (response []byte, ok bool, err error)
	// PutRequest stores one answered request. Storing a key twice keeps
	// the first answer.
	PutRequest(ctx context.Context, r StoredRequest) error
}

// RequestClaimer is implemented by a RequestStore that several processes
// share (runs on one cache): a stage claims a request before sending it,
// and a request claimed by another live process is waited for instead of
// paid for twice. A claim lapses when its process dies.
type RequestClaimer interface {
	// ClaimRequest takes key, or reports false when another live holder
	// has it.
	ClaimRequest(ctx context.Context, key string) (bool, error)
	// ReleaseRequest gives a claim up.
	ReleaseRequest(ctx context.Context, key string) error
}

// StoredRequest is one answered request. Request is the key's preimage
// (provider kind, model, messages, sampling parameters, sample index): it
// never holds a credential.
type StoredRequest struct {
	Key              string
	Provider, Model  string
	Request          []byte // JSON
	Response         []byte // JSON
	PromptTokens     int
	CompletionTokens int
	Duration         time.Duration
	// Failure, when not "", says why the stage could not parse the answer:
	// a failure kept (it was paid for) and replayed as one, which repro
	// cache requests lists and can drop.
	Failure string
	// Stage and StageKey name the stage run that sent the request (its
	// node ID and stage key), so that its answers can be dropped.
	Stage, StageKey string
}

// RequestEstimate is what a stage would send to a language model, for
// `repro plan` (before anything is sent) and `repro cache requests` (whose
// price table it carries).
type RequestEstimate struct {
	Provider, Model string
	// Requests the stage would make; when Exact is false, an upper bound
	// from its parameters (an input it needs is not computed yet).
	Requests int
	Exact    bool
	// Cached of those are already answered in the request store (0 when
	// Exact is false: the requests cannot be built yet).
	Cached int
	// Estimated tokens of the requests still to send.
	PromptTokens, CompletionTokens int64
	// Prices per 1,000 tokens of this model from the stage's price table;
	// Priced is false when the table has no entry for it.
	InputPer1K, OutputPer1K float64
	Priced                  bool
	// Note explains an inexact estimate ("input input: stage gen has not run").
	Note string
}

// Cost is the estimated price of the requests still to send.
func (e *RequestEstimate) Cost() float64 {
	return (float64(e.PromptTokens)*e.InputPer1K + float64(e.CompletionTokens)*e.OutputPer1K) / 1000
}
