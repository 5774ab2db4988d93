package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
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
}

// Cache holds answered requests by key. Put must make the record durable
// before returning: the Client calls it as each answer arrives, so a crash
// loses no answer that Put accepted.
type Cache interface {
	Get(ctx context.Context, key string) (Response, bool, error)
	Put(ctx context.Context, r Record) error
}

// Limits bound what a Client sends. Zero values take the defaults noted.
type Limits struct {
	Concurrency       int           // requests in flight at once (default 4)
	RequestsPerMinute float64       // 0: unlimited
	TokensPerMinute   float64       // prompt plus expected completion tokens; 0: unlimited
	Timeout           time.Duration // per attempt (default 60s)
	MaxRetries        int           // further attempts after a retryable failure (default 6; negative: none)
	BackoffBase       time.Duration // the first retry's delay before jitter (default 1s)
	BackoffMax        time.Duration // the longest delay between attempts (default 60s)
}

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
	return l
}

// Result is the answer to one request of a batch.
type Result struct {
	Key      string
	Response Response
	Cached   bool // answered from the cache, not sent in this batch
}

// Progress describes a batch so far.
type Progress struct {
	Done, Total int // requests answered (cached or sent) and in the batch
	Cached      int // answered from the cache
	Sent        int // answered by the provider in this batch
	Retries     int // attempts beyond the first
	// Token counts of the answered requests (cached and sent), and of those
	// sent in this batch (what this run paid for).
	PromptTokens, CompletionTokens         int64
	SentPromptTokens, SentCompletionTokens int64
}

// Client sends batches of requests through a Provider, answering from the
// Cache first. The zero Limits are usable defaults.
type Client struct {
	Provider Provider
	Cache    Cache // nil: nothing is cached (each Do sends everything)
	Limits   Limits
	// Progress, if set, is called after each answer, never concurrently.
	Progress func(Progress)
	// Log receives retries and failures (never a credential).
	Log *slog.Logger
}

// Do obtains an answer for every request and calls each(i, result) for
// request i, never concurrently, in the order answers arrive (cached ones
// first). Identical requests (same key) are sent once. It stops at the first
// request that fails for good -- a fatal error, or a retryable one that used
// up its retries -- or the first error each returns, cancelling requests in
// flight; every answer received before that has been committed to the
// cache, so a new Do sends only the rest.
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

	s := &sender{c: c, lim: lim, log: log, kind: kind, pace: newLimiter(lim.RequestsPerMinute, lim.TokensPerMinute, time.Now),
		meanCompletion: 256}
	var mu sync.Mutex
	prog := Progress{Total: len(reqs)}
	deliver := func(k string, resp Response, cached bool) error {
		mu.Lock()
		defer mu.Unlock()
		for _, i := range byKey[k] {
			if err := each(i, Result{Key: k, Response: resp, Cached: cached}); err != nil {
				return err
			}
			prog.Done++
			prog.PromptTokens += int64(resp.Usage.PromptTokens)
			prog.CompletionTokens += int64(resp.Usage.CompletionTokens)
			if cached {
				prog.Cached++
			}
		}
		if !cached {
			prog.Sent++
			prog.SentPromptTokens += int64(resp.Usage.PromptTokens)
			prog.SentCompletionTokens += int64(resp.Usage.CompletionTokens)
		}
		prog.Retries = s.retries()
		if c.Progress != nil {
			c.Progress(prog)
		}
		return nil
	}

	var todo []string
	for _, k := range order {
		if c.Cache != nil {
			resp, ok, err := c.Cache.Get(ctx, k)
			if err != nil {
				return prog, fmt.Errorf("request cache: %w", err)
			}
			if ok {
				if err := deliver(k, resp, true); err != nil {
					return prog, err
				}
				continue
			}
		}
		todo = append(todo, k)
	}
	if len(todo) == 0 {
		return prog, nil
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	queue := make(chan string)
	go func() {
		defer close(queue)
		for _, k := range todo {
			select {
			case queue <- k:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < lim.Concurrency && w < len(todo); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range queue {
				r := reqs[byKey[k][0]]
				resp, dur, err := s.send(ctx, r, k)
				if err != nil {
					cancel(err)
					return
				}
				if c.Cache != nil {
					// Paid for: commit it even if the batch is being cancelled.
					rec := Record{Key: k, Provider: kind, Model: r.Model, Request: Canonical(kind, r), Response: resp, Duration: dur}
					if err := c.Cache.Put(context.WithoutCancel(ctx), rec); err != nil {
						cancel(fmt.Errorf("request cache: storing the answer to %s: %w", k[:12], err))
						return
					}
				}
				if err := deliver(k, resp, false); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	prog.Retries = s.retries()
	mu.Unlock()
	if err := context.Cause(ctx); err != nil {
		return prog, err
	}
	return prog, nil
}

// sender performs single requests with pacing, timeouts and retries.
type sender struct {
	c    *Client
	lim  Limits
	log  *slog.Logger
	kind string
	pace *limiter

	mu             sync.Mutex
	nretries       int
	meanCompletion float64 // running mean of completion tokens, for tokens/min budgeting
}

func (s *sender) retries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nretries
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

func (s *sender) send(ctx context.Context, r Request, key string) (Response, time.Duration, error) {
	est := s.estimate(r)
	for attempt := 0; ; attempt++ {
		if err := s.pace.wait(ctx, est); err != nil {
			return Response{}, 0, err
		}
		actx, cancel := context.WithTimeout(ctx, s.lim.Timeout)
		start := time.Now()
		resp, err := s.c.Provider.Complete(actx, r)
		dur := time.Since(start)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
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
		if timedOut {
			err = Transient(fmt.Sprintf("no answer within the %s timeout", s.lim.Timeout), err)
		}
		retry, after := classify(err)
		if !retry {
			s.log.Error("llm request failed for good", "key", key[:12], "model", r.Model, "err", err)
			return Response{}, 0, Fatal(fmt.Errorf("request %s (model %s): %w", key[:12], r.Model, err))
		}
		if attempt >= s.lim.MaxRetries {
			s.log.Error("llm request failed after retries", "key", key[:12], "attempts", attempt+1, "err", err)
			return Response{}, 0, fmt.Errorf("request %s (model %s): %d attempts failed, the last: %w", key[:12], r.Model, attempt+1, err)
		}
		delay := s.backoff(attempt)
		if after > 0 {
			// Honour the server's wait, plus a little jitter so that
			// workers told the same do not return in lockstep.
			delay = after + time.Duration(rand.Float64()*0.1*float64(after))
			s.pace.pause(delay)
		}
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == 429 {
			s.pace.pause(delay)
		}
		s.mu.Lock()
		s.nretries++
		s.mu.Unlock()
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
