package llm

import (
	"context"
	"errors"
	"fmt"
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
	switch e.Status {
	case http.StatusUnauthorized:
		s += " (the API key was rejected: check the environment variable named by api_key_env)"
	case http.StatusForbidden:
		s += " (the key has no access to this model or endpoint)"
	case http.StatusNotFound:
		s += " (unknown model or wrong base_url: the server has no such model or no chat/completions endpoint)"
	}
	return s
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

// classify says whether err is worth another attempt and how long the
// server asked to wait. Statuses: 408 (request timeout), 409 (conflict, as
// OpenAI's SDKs retry it), 429 (rate limit) and every 5xx are retried; any
// other 4xx is fatal: a bad key, an unknown model or a malformed request
// would fail the same way every time, and retrying it from every worker is
// a retry storm. Errors without a status (timeouts, broken connections,
// unparsable bodies, truncated streams) are retried.
func classify(err error) (retry bool, after time.Duration) {
	var fe *FatalError
	if errors.As(err, &fe) {
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
// seconds or as an HTTP date. Zero when absent or unreadable.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
