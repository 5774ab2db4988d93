package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIError is a failure reported by a provider with an HTTP status (or the
// equivalent for an in-process provider).
type APIError struct {
	Status     int           // HTTP status; 0 when the exchange broke before one arrived
	Message    string        // the server's message, shortened; never holds a credential
	Code       string        // the error object's code ("model_not_found"), as Message is kept; "" when none
	RetryAfter time.Duration // from Retry-After / Retry-After-Ms; 0 when absent
	URL        string        // where the request went (no query, no credentials)
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.URL != "" {
		s += " from " + e.URL
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Code != "" {
		s += " [" + e.Code + "]"
	}
	switch e.Status {
	case http.StatusUnauthorized:
		s += " (the API key was rejected: check the environment variable named by api_key_env)"
	case http.StatusForbidden:
		s += " (the key has no access to this model or endpoint)"
	case http.StatusNotFound:
		if e.Code == "model_not_found" {
			s += " (the server has no such model)"
		} else {
			s += " (unknown model or wrong base_url: the server has no such model or no chat/completions endpoint)"
		}
	}
	return s
}

// ModelNotFound says whether err is a server's answer that it has no such
// model: OpenAI's 404 with code model_not_found (a retired snapshot such as
// gpt-3.5-turbo-0301 answers so), or a 404 whose message is about a model
// (vLLM: "The model `x` does not exist."; Ollama: "model \"x\" not
// found"), as opposed to a 404 of a wrong base URL.
func ModelNotFound(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	if ae.Code == "model_not_found" {
		return true
	}
	return ae.Status == http.StatusNotFound && strings.Contains(strings.ToLower(ae.Message), "model")
}

// TransientError is a failure worth retrying that carries no HTTP status: a
// response that did not parse, a stream that ended before its last event,
// a connection that broke, an attempt that ran past its timeout.
type TransientError struct {
	What string
	Err  error
}

func (e *TransientError) Error() string {
	if e.Err == nil {
		return e.What
	}
	return e.What + ": " + e.Err.Error()
}

func (e *TransientError) Unwrap() error { return e.Err }

// Transient wraps err as a retryable failure described by what.
func Transient(what string, err error) error { return &TransientError{What: what, Err: err} }

// FatalError is a failure no retry can fix (a missing API key, a request the
// provider cannot take). It stops a Client's whole batch.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Fatal marks err as not worth retrying.
func Fatal(err error) error { return &FatalError{Err: err} }

// WaitTooLongError is a server's request to wait (Retry-After) longer than
// a client waits between attempts: the longer of its backoff maximum and
// its request timeout. Obeying an hour's Retry-After would stall every
// worker for that hour per retry, silently; the batch stops instead,
// saying how long the server asked for.
type WaitTooLongError struct {
	Wait  time.Duration // what the server asked for
	Limit time.Duration // the longest wait the client accepts
	Err   error         // the failure that came with the request to wait
}

func (e *WaitTooLongError) Error() string {
	wait := e.Wait.Round(time.Second).String()
	if e.Wait >= 100*365*24*time.Hour {
		wait = "over a century" // a saturated header
	}
	return fmt.Sprintf("the server asked to wait %s before another attempt, longer than the %s this client waits "+
		"(the longer of its backoff maximum and its request timeout; raise timeout_seconds to wait longer, or retry later): %v",
		wait, e.Limit, e.Err)
}

func (e *WaitTooLongError) Unwrap() error { return e.Err }

// TooLargeError is an answer past a size bound: a response body longer
// than the provider reads, or an answer's content longer than the Client
// stores. It is not retried (a server that sends one sends it again).
type TooLargeError struct {
	What  string // "response body", "answer"
	Limit int64  // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s larger than %d bytes, the bound", e.What, e.Limit)
}

// MalformedError is an answer the caller's Client.Check refused: it was
// received (and paid for) but is unusable. The cache records it as a
// failure, and a later batch replays it as this error, never as an answer.
type MalformedError struct {
	Key    string // the request
	Reason string // what Check said
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("the answer to request %.12s does not parse: %s", e.Key, e.Reason)
}

// PanicError is a provider that panicked on an answer: a bug in repro,
// turned into an error so that no server response can crash the process.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("the provider failed on this answer (a bug in repro; the stack is in the stage log): %v", e.Value)
}

// classify says whether err is worth another attempt and how long the
// server asked to wait. Statuses: 408 (request timeout), 409 (conflict, as
// OpenAI's SDKs retry it), 429 (rate limit) and every 5xx are retried; any
// other 4xx is fatal: a bad key, an unknown model or a malformed request
// would fail the same way every time, and retrying it from every worker is
// a retry storm. Errors without a status (timeouts, broken connections,
// unparsable bodies, truncated streams) are retried.
func classify(err error) (retry bool, after time.Duration) {
	var fe *FatalError
	var tl *TooLargeError
	if errors.As(err, &fe) || errors.As(err, &tl) {
		return false, 0
	}
	var ae *APIError
	if errors.As(err, &ae) {
		switch {
		case ae.Status == 0, ae.Status == http.StatusRequestTimeout, ae.Status == http.StatusConflict,
			ae.Status == http.StatusTooManyRequests, ae.Status >= 500:
			return true, ae.RetryAfter
		}
		return false, 0
	}
	if errors.Is(err, context.Canceled) {
		return false, 0
	}
	return true, 0
}

// ParseRetryAfter reads how long a response asks the client to wait:
// Retry-After-Ms (milliseconds, as OpenAI sends), else Retry-After in
// seconds or as an HTTP date. Zero when absent or unreadable; a value too
// large for a time.Duration is the largest one (a hostile header must not
// wrap around to a negative wait).
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return seconds(ms / 1000)
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if !(s > 0) { // NaN too
			return 0
		}
		return seconds(s)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// seconds converts s > 0 to a Duration, saturating.
func seconds(s float64) time.Duration {
	ns := s * float64(time.Second)
	if ns >= math.MaxInt64 || math.IsNaN(ns) {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
