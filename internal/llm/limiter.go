package llm

import (
	"context"
	"sync"
	"time"
)

// limiter paces the requests of one Client: requests/min as an even spacing
// between request starts (no bursts: servers count per second too), and
// tokens/min as a bucket that holds a minute's worth, is charged the
// estimated tokens of a request before it starts and corrected to the
// actual usage once the answer arrives. A 429 pauses every worker until the
// server's Retry-After has passed, so one rate-limit answer does not become
// one per worker.
type limiter struct {
	mu         sync.Mutex
	interval   time.Duration // between request starts; 0: no requests/min limit
	tpm        float64       // 0: no tokens/min limit
	next       time.Time     // earliest start of the next request
	tokens     float64       // bucket level
	refilled   time.Time     // when tokens was last brought up to date
	pauseUntil time.Time
	now        func() time.Time
}

func newLimiter(rpm, tpm float64, now func() time.Time) *limiter {
	l := &limiter{tpm: tpm, now: now}
	if rpm > 0 {
		l.interval = time.Duration(float64(time.Minute) / rpm)
	}
	l.tokens = tpm
	l.refilled = now()
	return l
}

func (l *limiter) refill(t time.Time) {
	if l.tpm <= 0 {
		return
	}
	if dt := t.Sub(l.refilled); dt > 0 {
		l.tokens += l.tpm * dt.Minutes()
		if l.tokens > l.tpm {
			l.tokens = l.tpm
		}
	}
	l.refilled = t
}

// reserve reserves a start at time t for a request of need tokens and
// returns 0, or returns how long to wait before trying again.
func (l *limiter) reserve(t time.Time, need float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tpm > 0 && need > l.tpm {
		need = l.tpm // a request larger than a whole minute's budget waits for a full bucket
	}
	l.refill(t)
	var delay time.Duration
	if d := l.pauseUntil.Sub(t); d > delay {
		delay = d
	}
	if d := l.next.Sub(t); d > delay {
		delay = d
	}
	if l.tpm > 0 && l.tokens < need {
		if d := time.Duration((need - l.tokens) / l.tpm * float64(time.Minute)); d > delay {
			delay = d
		}
	}
	if delay > 0 {
		return delay
	}
	if l.interval > 0 {
		l.next = t.Add(l.interval)
	}
	if l.tpm > 0 {
		l.tokens -= need
	}
	return 0
}

// wait blocks until a request of about tokens tokens may start, and
// reserves its place.
func (l *limiter) wait(ctx context.Context, tokens int) error {
	for {
		delay := l.reserve(l.now(), float64(tokens))
		if delay <= 0 {
			return nil
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// settle corrects the bucket once a request's actual usage is known.
func (l *limiter) settle(estimated, actual int) {
	if l.tpm <= 0 {
		return
	}
	l.mu.Lock()
	l.tokens += float64(estimated - actual)
	if l.tokens > l.tpm {
		l.tokens = l.tpm
	}
	l.mu.Unlock()
}

// pause holds every request start back for d.
func (l *limiter) pause(d time.Duration) {
	l.mu.Lock()
	if until := l.now().Add(d); until.After(l.pauseUntil) {
		l.pauseUntil = until
	}
	l.mu.Unlock()
}
