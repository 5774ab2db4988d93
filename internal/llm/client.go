package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"time"
)

// Provider answers chat requests.
type Provider interface {
	// Kind names the provider family in request keys: "openai" for any
	// server speaking the OpenAI chat API, "local" for the in-process LM.
	Kind() string
	// Complete obtains one answer. Failures should be *APIError,
	// *TransientError or *FatalError (anything else counts as transient).
	Complete(ctx context.Context, r Request) (Response, error)
}

// Record is one answered request as a Cache stores it.
type Record struct {
	Key      string
	Provider string
	Model    string
	Request  []byte // Canonical(Provider, request): what the key hashes
	Response Response
	Duration time.Duration // from sending to the answer (last attempt)
	// Failure, when not "", says why Client.Check refused the answer: the
	// record is a failure, replayed as a *MalformedError, never as an
	// answer.
	Failure string
}

// Cache holds answered requests by key. Put must make the record durable
// before returning: the Client calls it as each answer arrives, so a crash
// loses no answer that Put accepted. Get returns what Put stored (at least
// Response and Failure).
type Cache interface {
	Get(ctx context.Context, key string) (Record, bool, error)
	Put(ctx context.Context, r Record) error
}

// Claimer is implemented by a Cache that several processes share (two
// runs of a grid, a larger and a smaller run): before sending a request,
// the Client claims it; a request another client holds is not sent but
// waited for, and its answer taken from the cache once stored. A claim
// must not outlive its holder: the implementation lets the claims of a
// client that died lapse (see store's lease and liveness check).
type Claimer interface {
	// Claim takes key, or reports false when another live client holds it.
	Claim(ctx context.Context, key string) (bool, error)
	// Release gives a claim up (its answer is stored, or it failed).
	Release(ctx context.Context, key string) error
}

// Limits bound what a Client sends. Zero values take the defaults noted.
type Limits struct {
	Concurrency       int           // requests in flight at once (default 4)
	RequestsPerMinute float64       // 0: unlimited
	TokensPerMinute   float64       // prompt plus expected completion tokens; 0: unlimited
	Timeout           time.Duration // per attempt (default 60s)
	MaxRetries        int           // further attempts after a retryable failure (default 6; negative: none)
	BackoffBase       time.Duration // the first retry's delay before jitter (default 1s)
	// BackoffMax is the longest delay between attempts (default 60s). A
	// server's Retry-After is obeyed up to the longer of BackoffMax and
	// Timeout; a longer one stops the batch (*WaitTooLongError).
	BackoffMax time.Duration
	// MaxAnswerBytes bounds an answer's content (default 1 MiB; a chat
	// answer of 16k tokens is about 64 KiB): a longer one is an error
	// naming the request (*TooLargeError), never stored.
	MaxAnswerBytes int
	// ClaimPoll is how often a request another client is sending is looked
	// for in the cache (default 500ms; see Claimer).
	ClaimPoll time.Duration
	// Probe sends the first request a batch must send alone, and the rest
	// only once it is answered: a failure every request would share (a
	// model the server does not have, a rejected key) then costs one
	// request, not one per worker. For a paid server; it costs a batch one
	// answer's latency.
	Probe bool
}

// DefaultMaxAnswerBytes is Limits.MaxAnswerBytes' default.
const DefaultMaxAnswerBytes = 1 << 20

func (l Limits) withDefaults() Limits {
	if l.Concurrency <= 0 {
		l.Concurrency = 4
	}
	if l.Timeout <= 0 {
		l.Timeout = 60 * time.Second
	}
	if l.MaxRetries == 0 {
		l.MaxRetries = 6
	} else if l.MaxRetries < 0 {
		l.MaxRetries = 0
	}
	if l.BackoffBase <= 0 {
		l.BackoffBase = time.Second
	}
	if l.BackoffMax <= 0 {
		l.BackoffMax = 60 * time.Second
	}
	if l.MaxAnswerBytes <= 0 {
		l.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if l.ClaimPoll <= 0 {
		l.ClaimPoll = 500 * time.Millisecond
	}
	return l
}

// Result is the answer to one request of a batch.
type Result struct {
	Key      string
	Response Response
	Cached   bool // answered from the cache, not sent in this batch
	// Err is a *MalformedError when Client.Check refused the answer (now
	// or when it was first received); Response is then the unusable
	// answer, for the caller to count or log.
	Err error
}

// Progress describes a batch so far.
type Progress struct {
	Done, Total int // requests answered (cached or sent) and in the batch
	Cached      int // answered from the cache
	Sent        int // answered by the provider in this batch
	Retries     int // attempts beyond the first
	Failed      int // answers Check refused (sent or cached)
	// Token counts of the answered requests (cached and sent), and of those
	// sent in this batch (what this run paid for).
	PromptTokens, CompletionTokens         int64
	SentPromptTokens, SentCompletionTokens int64
	// WaitUntil, when not zero, is when the current wait before a retry
	// ends, and WaitReason why ("HTTP 429 Retry-After 30s", "HTTP 503").
	WaitUntil  time.Time
	WaitReason string
	// Elsewhere counts requests another client (a concurrent run on the
	// same cache) is sending, whose answers this batch waits for.
	Elsewhere int
}

// Client sends batches of requests through a Provider, answering from the
// Cache first. The zero Limits are usable defaults.
type Client struct {
	Provider Provider
	Cache    Cache // nil: nothing is cached (each Do sends everything)
	Limits   Limits
	// Check, if set, says whether an answer is usable (it parses in the
	// format the caller expects). An answer it refuses is stored as a
	// failure (Record.Failure) -- it was paid for, and is kept to be
	// looked at -- and delivered with a *MalformedError in Result.Err; a
	// later batch replays it as that failure, never as an answer.
	Check func(Response) error
	// Progress, if set, is called after each answer and when a wait
	// starts, never concurrently.
	Progress func(Progress)
	// Log receives retries and failures (never a credential).
	Log *slog.Logger
}

// redact passes server text through the provider's Redactor, if it has one.
func (c *Client) redact(s string) string {
	if r, ok := c.Provider.(Redactor); ok {
		return r.Redact(s)
	}
	return s
}

// redactErr is err with every secret of the provider removed from its
// message (the chain stays reachable for errors.As).
func (c *Client) redactErr(err error) error {
	if err == nil {
		return nil
	}
	if msg := c.redact(err.Error()); msg != err.Error() {
		return &redactedError{msg: msg, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Do obtains an answer for every request and calls each(i, result) for
// request i, never concurrently, in the order answers arrive (cached ones
// first). Identical requests (same key) are sent once. It stops at the first
// request that fails for good -- a fatal error, or a retryable one that used
// up its retries -- or the first error each returns, cancelling requests in
// flight; every answer received before that has been committed to the
// cache, so a new Do sends only the rest. An answer Check refuses does not
// stop the batch: it is delivered with Result.Err set.
func (c *Client) Do(ctx context.Context, reqs []Request, each func(i int, r Result) error) (Progress, error) {
	lim := c.Limits.withDefaults()
	log := c.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	kind := c.Provider.Kind()

	// Identical requests share one answer.
	keys := make([]string, len(reqs))
	byKey := map[string][]int{}
	var order []string
	for i, r := range reqs {
		k := Key(kind, r)
		keys[i] = k
		if _, seen := byKey[k]; !seen {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], i)
	}

	var mu sync.Mutex // serialises each, Progress and prog
	prog := Progress{Total: len(reqs)}
	s := &sender{c: c, lim: lim, log: log, kind: kind, pace: newLimiter(lim.RequestsPerMinute, lim.TokensPerMinute, time.Now),
		meanCompletion: 256}
	report := func() { // with mu held
		prog.Retries = s.retries()
		prog.WaitUntil, prog.WaitReason = s.waiting()
		if c.Progress != nil {
			c.Progress(prog)
		}
	}
	s.onWait = func() {
		mu.Lock()
		defer mu.Unlock()
		report()
	}
	deliver := func(k string, rec Record, cached bool) error {
		mu.Lock()
		defer mu.Unlock()
		resp := rec.Response
		var rerr error
		if rec.Failure != "" {
			rerr = &MalformedError{Key: k, Reason: rec.Failure}
		} else if cached && c.Check != nil {
			// An answer stored before its stage checked answers.
			if err := c.Check(resp); err != nil {
				rerr = &MalformedError{Key: k, Reason: c.redact(err.Error())}
			}
		}
		for _, i := range byKey[k] {
			if err := each(i, Result{Key: k, Response: resp, Cached: cached, Err: rerr}); err != nil {
				return err
			}
			prog.Done++
			prog.PromptTokens += int64(resp.Usage.PromptTokens)
			prog.CompletionTokens += int64(resp.Usage.CompletionTokens)
			if cached {
				prog.Cached++
			}
			if rerr != nil {
				prog.Failed++
			}
		}
		if !cached {
			prog.Sent++
			prog.SentPromptTokens += int64(resp.Usage.PromptTokens)
			prog.SentCompletionTokens += int64(resp.Usage.CompletionTokens)
		}
		report()
		return nil
	}

	var unsent []string
	for _, k := range order {
		if c.Cache != nil {
			rec, ok, err := c.Cache.Get(ctx, k)
			if err != nil {
				return prog, fmt.Errorf("request cache: %w", err)
			}
			if ok {
				if err := deliver(k, rec, true); err != nil {
					return prog, err
				}
				continue
			}
		}
		unsent = append(unsent, k)
	}
	if len(unsent) == 0 {
		return prog, nil
	}
	claimer, _ := c.Cache.(Claimer)

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if lim.Probe && len(unsent) > 1 {
		unsent = c.probe(ctx, cancel, s, claimer, unsent, reqs, byKey, deliver)
	}
	if len(unsent) > 0 && ctx.Err() == nil {
		c.sendAll(ctx, cancel, s, claimer, unsent, reqs, byKey, deliver, func(elsewhere int, show bool) {
			mu.Lock()
			defer mu.Unlock()
			prog.Elsewhere = elsewhere
			if show {
				report()
			}
		})
	}
	mu.Lock()
	prog.Retries = s.retries()
	prog.WaitUntil, prog.WaitReason = time.Time{}, ""
	mu.Unlock()
	if err := context.Cause(ctx); err != nil {
		return prog, c.redactErr(err)
	}
	return prog, nil
}

// probe answers, alone, the first of the unsent requests that this client
// can claim (Limits.Probe), and returns the others to send: those another
// client was sending when it came to them, and the rest. A failure cancels
// ctx.
func (c *Client) probe(ctx context.Context, cancel context.CancelCauseFunc, s *sender, claimer Claimer, unsent []string,
	reqs []Request, byKey map[string][]int, deliver func(string, Record, bool) error) []string {
	var skipped []string
	for i, k := range unsent {
		held, err := c.one(ctx, s, claimer, k, reqs[byKey[k][0]], deliver)
		if err != nil {
			cancel(err)
			return nil
		}
		if held {
			return append(skipped, unsent[i+1:]...)
		}
		skipped = append(skipped, k)
	}
	return skipped
}

// sendAll answers the unsent requests: passes over those still to answer,
// each sending those it can claim and setting aside those another client
// is sending; between passes, the set-aside ones are looked for in the
// cache (waiting sets how many, and with show reports it). A failure
// cancels ctx.
func (c *Client) sendAll(ctx context.Context, cancel context.CancelCauseFunc, s *sender, claimer Claimer, unsent []string,
	reqs []Request, byKey map[string][]int, deliver func(string, Record, bool) error, waiting func(n int, show bool)) {
	lim := s.lim
	for pending := unsent; len(pending) > 0 && ctx.Err() == nil; {
		elsewhere := c.pass(ctx, cancel, s, claimer, pending, reqs, byKey, deliver)
		if len(elsewhere) == 0 || ctx.Err() != nil {
			break
		}
		left := len(elsewhere)
		waiting(left, true)
		t := time.NewTimer(lim.ClaimPoll)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		pending = pending[:0:0]
		for _, k := range elsewhere {
			if ctx.Err() != nil {
				break
			}
			rec, ok, err := c.Cache.Get(ctx, k)
			if err != nil {
				cancel(fmt.Errorf("request cache: %w", err))
				break
			}
			if !ok {
				pending = append(pending, k)
				continue
			}
			left--
			waiting(left, false)
			if err := deliver(k, rec, true); err != nil {
				cancel(err)
				break
			}
		}
	}
}

// pass sends the pending requests with lim.Concurrency workers and returns
// those another client had claimed.
func (c *Client) pass(ctx context.Context, cancel context.CancelCauseFunc, s *sender, claimer Claimer, pending []string,
	reqs []Request, byKey map[string][]int, deliver func(string, Record, bool) error) []string {
	queue := make(chan string)
	go func() {
		defer close(queue)
		for _, k := range pending {
			select {
			case queue <- k:
			case <-ctx.Done():
				return
			}
		}
	}()
	var emu sync.Mutex
	var elsewhere []string
	var wg sync.WaitGroup
	for w := 0; w < s.lim.Concurrency && w < len(pending); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range queue {
				held, err := c.one(ctx, s, claimer, k, reqs[byKey[k][0]], deliver)
				if err != nil {
					cancel(err)
					return
				}
				if !held {
					emu.Lock()
					elsewhere = append(elsewhere, k)
					emu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return elsewhere
}

// one answers request r (key k): it claims it when the cache is shared,
// sends it, checks and stores the answer, and delivers it. held is false
// when another client holds the claim (nothing was sent).
func (c *Client) one(ctx context.Context, s *sender, claimer Claimer, k string, r Request, deliver func(string, Record, bool) error) (held bool, err error) {
	if claimer != nil {
		ok, err := claimer.Claim(ctx, k)
		if err != nil {
			return false, fmt.Errorf("request cache: claiming %.12s: %w", k, err)
		}
		if !ok {
			return false, nil
		}
		defer func() {
			if rerr := claimer.Release(context.WithoutCancel(ctx), k); rerr != nil && err == nil {
				err = fmt.Errorf("request cache: releasing %.12s: %w", k, rerr)
			}
		}()
		// Answered by another client between the lookup and the claim?
		rec, ok, err := c.Cache.Get(ctx, k)
		if err != nil {
			return true, fmt.Errorf("request cache: %w", err)
		}
		if ok {
			return true, deliver(k, rec, true)
		}
	}
	resp, dur, err := s.send(ctx, r, k)
	if err != nil {
		return true, err
	}
	rec := Record{Key: k, Provider: s.kind, Model: r.Model, Request: Canonical(s.kind, r), Response: resp, Duration: dur}
	if c.Check != nil {
		if cerr := c.Check(resp); cerr != nil {
			rec.Failure = c.redact(cerr.Error())
			if rec.Failure == "" {
				rec.Failure = "refused"
			}
			s.log.Warn("llm answer does not parse; recorded as a failure", "key", k[:12], "model", r.Model, "reason", rec.Failure)
		}
	}
	if c.Cache != nil {
		// Paid for: commit it even if the batch is being cancelled.
		if err := c.Cache.Put(context.WithoutCancel(ctx), rec); err != nil {
			return true, fmt.Errorf("request cache: storing the answer to %s: %w", k[:12], err)
		}
	}
	return true, deliver(k, rec, false)
}

// sender performs single requests with pacing, timeouts and retries.
type sender struct {
	c    *Client
	lim  Limits
	log  *slog.Logger
	kind string
	pace *limiter
	// onWait is called when a wait before a retry starts (progress).
	onWait func()

	mu             sync.Mutex
	nretries       int
	meanCompletion float64 // running mean of completion tokens, for tokens/min budgeting
	waitUntil      time.Time
	waitReason     string
}

func (s *sender) retries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nretries
}

// waiting is the wait before a retry in progress, if any.
func (s *sender) waiting() (time.Time, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Now().Before(s.waitUntil) {
		return s.waitUntil, s.waitReason
	}
	return time.Time{}, ""
}

func (s *sender) estimate(r Request) int {
	n := PromptTokens(r.Messages)
	if r.MaxTokens > 0 {
		return n + r.MaxTokens
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return n + int(s.meanCompletion)
}

// complete calls the provider, turning a panic into an error: whatever a
// server sends, a worker goroutine must not take the process down.
func (s *sender) complete(ctx context.Context, r Request) (resp Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			pe := &PanicError{Value: p, Stack: debug.Stack()}
			s.log.Error("llm provider panicked", "panic", fmt.Sprint(p), "stack", string(pe.Stack))
			err = Fatal(pe)
		}
	}()
	return s.c.Provider.Complete(ctx, r)
}

// sanitize makes a provider's answer safe to count and store: no secret,
// no negative token counts, a bounded finish reason, content within the
// bound.
func (s *sender) sanitize(resp Response) (Response, error) {
	if len(resp.Content) > s.lim.MaxAnswerBytes {
		return Response{}, &TooLargeError{What: "answer", Limit: int64(s.lim.MaxAnswerBytes)}
	}
	resp.Content = s.c.redact(resp.Content)
	if len(resp.FinishReason) > 64 {
		resp.FinishReason = resp.FinishReason[:64]
	}
	resp.FinishReason = s.c.redact(resp.FinishReason)
	resp.Usage.PromptTokens = max(resp.Usage.PromptTokens, 0)
	resp.Usage.CompletionTokens = max(resp.Usage.CompletionTokens, 0)
	return resp, nil
}

func (s *sender) send(ctx context.Context, r Request, key string) (Response, time.Duration, error) {
	est := s.estimate(r)
	for attempt := 0; ; attempt++ {
		if err := s.pace.wait(ctx, est); err != nil {
			return Response{}, 0, err
		}
		actx, cancel := context.WithTimeout(ctx, s.lim.Timeout)
		start := time.Now()
		resp, err := s.complete(actx, r)
		dur := time.Since(start)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if err == nil {
			resp, err = s.sanitize(resp)
		}
		if err == nil {
			if resp.Usage.PromptTokens == 0 && resp.Usage.CompletionTokens == 0 {
				resp.Usage = Usage{PromptTokens: PromptTokens(r.Messages), CompletionTokens: EstimateTokens(resp.Content), Estimated: true}
			}
			actual := resp.Usage.PromptTokens + resp.Usage.CompletionTokens
			s.pace.settle(est, actual)
			s.mu.Lock()
			s.meanCompletion += 0.05 * (float64(resp.Usage.CompletionTokens) - s.meanCompletion)
			s.mu.Unlock()
			return resp, dur, nil
		}
		if ctx.Err() != nil {
			return Response{}, 0, context.Cause(ctx)
		}
		err = s.c.redactErr(err)
		if timedOut {
			err = Transient(fmt.Sprintf("no answer within the %s timeout", s.lim.Timeout), err)
		}
		retry, after := classify(err)
		if !retry {
			s.log.Error("llm request failed for good", "key", key[:12], "model", r.Model, "err", err)
			return Response{}, 0, Fatal(fmt.Errorf("request %s (model %s): %w", key[:12], r.Model, err))
		}
		// The longest wait this client accepts: a server asking for more
		// (an hour's Retry-After) stops the batch rather than stalling
		// every worker for that long per retry.
		bound := max(s.lim.BackoffMax, s.lim.Timeout)
		if after > bound {
			werr := &WaitTooLongError{Wait: after, Limit: bound, Err: err}
			s.log.Error("llm server asks for too long a wait", "key", key[:12], "wait", after, "limit", bound, "err", err)
			return Response{}, 0, Fatal(fmt.Errorf("request %s (model %s): %w", key[:12], r.Model, werr))
		}
		if attempt >= s.lim.MaxRetries {
			s.log.Error("llm request failed after retries", "key", key[:12], "attempts", attempt+1, "err", err)
			return Response{}, 0, fmt.Errorf("request %s (model %s): %d attempts failed, the last: %w", key[:12], r.Model, attempt+1, err)
		}
		delay := s.backoff(attempt)
		reason := "retry"
		var ae *APIError
		if errors.As(err, &ae) {
			reason = fmt.Sprintf("HTTP %d", ae.Status)
		}
		if after > 0 {
			// Honour the server's wait, plus a little jitter so that
			// workers told the same do not return in lockstep.
			delay = min(after+time.Duration(rand.Float64()*0.1*float64(after)), bound)
			reason += " Retry-After " + after.Round(time.Millisecond).String()
			s.pace.pause(delay)
		}
		if ae != nil && ae.Status == 429 {
			s.pace.pause(delay)
		}
		s.mu.Lock()
		s.nretries++
		until := time.Now().Add(delay)
		if until.After(s.waitUntil) {
			s.waitUntil, s.waitReason = until, reason
		}
		s.mu.Unlock()
		if s.onWait != nil {
			s.onWait()
		}
		s.log.Warn("llm request failed, retrying", "key", key[:12], "attempt", attempt+1, "delay", delay.Round(time.Millisecond), "err", err)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return Response{}, 0, context.Cause(ctx)
		case <-t.C:
		}
	}
}

// backoff is the delay before retry attempt+1: BackoffBase doubled per
// attempt, capped at BackoffMax, with "equal jitter" (a uniform draw from
// its upper half) so that workers spread out without ever retrying at once.
func (s *sender) backoff(attempt int) time.Duration {
	d := float64(s.lim.BackoffBase) * math.Pow(2, float64(attempt))
	if d > float64(s.lim.BackoffMax) {
		d = float64(s.lim.BackoffMax)
	}
	return time.Duration(d/2 + rand.Float64()*d/2)
}
