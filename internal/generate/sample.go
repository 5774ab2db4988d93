package generate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"repro/internal/tensor"
)

// Sampling chooses the next token from a row of logits. Greedy decoding is
// Sampling{TopP: 1} (TopP must be set: 0 is not a valid nucleus).
type Sampling struct {
	// Temperature divides the logits before the softmax; 0 is greedy
	// (argmax, the lowest id among equal logits), as in the OpenAI API.
	Temperature float64
	// TopK keeps the k most likely tokens (0: all). With TopP as well,
	// top-p applies to the renormalised top-k distribution (transformers'
	// warper order: temperature, top-k, top-p; DINO samples with k 5, p 0.9).
	TopK int
	// TopP keeps the smallest set of most likely tokens whose probability
	// reaches p (nucleus sampling; transformers' rule: a token is kept while
	// the mass of the tokens above it is below p). 1 keeps all; it must
	// lie in (0, 1].
	TopP float64
	// PresencePenalty and FrequencyPenalty are the OpenAI parameters:
	// logit -= frequency_penalty * count + presence_penalty * (count > 0),
	// count being how often the token was generated so far in this
	// sequence (the prompt does not count). Each lies in [-2, 2].
	PresencePenalty  float64
	FrequencyPenalty float64
}

// Validate reports every parameter out of range (each a *ParamError, joined).
func (s Sampling) Validate() error {
	var errs []error
	for _, e := range s.Check() {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// Check lists the parameters out of range, named as the stage parameters
// are (temperature, top_k, top_p, presence_penalty, frequency_penalty).
func (s Sampling) Check() []*ParamError {
	var out []*ParamError
	add := func(ok bool, param, format string, v any) {
		if !ok {
			out = append(out, &ParamError{param, fmt.Sprintf(format, v)})
		}
	}
	add(s.Temperature >= 0 && !math.IsInf(s.Temperature, 0), "temperature", "%v must be a finite number >= 0 (0: greedy)", s.Temperature)
	add(s.TopK >= 0, "top_k", "%d must be at least 1 (or 0: no top-k filtering)", s.TopK)
	add(s.TopP > 0 && s.TopP <= 1, "top_p", "%v must lie in (0, 1] (1: no nucleus filtering)", s.TopP)
	add(s.PresencePenalty >= -2 && s.PresencePenalty <= 2, "presence_penalty", "%v must lie in [-2, 2]", s.PresencePenalty)
	add(s.FrequencyPenalty >= -2 && s.FrequencyPenalty <= 2, "frequency_penalty", "%v must lie in [-2, 2]", s.FrequencyPenalty)
	return out
}

// ParamError is a sampling parameter out of range.
type ParamError struct{ Param, Msg string }

func (e *ParamError) Error() string { return e.Param + " " + e.Msg }

// Greedy reports whether s decodes greedily.
func (s Sampling) Greedy() bool { return s.Temperature == 0 }

// penalize applies the presence and frequency penalties to one row of
// logits given the tokens generated so far.
func (s Sampling) penalize(logits []float32, generated []int) {
	if (s.PresencePenalty == 0 && s.FrequencyPenalty == 0) || len(generated) == 0 {
		return
	}
	counts := map[int]int{}
	for _, t := range generated {
		counts[t]++
	}
	for t, n := range counts {
		logits[t] -= float32(s.FrequencyPenalty*float64(n) + s.PresencePenalty)
	}
}

// sampler holds one goroutine's scratch space for choosing tokens.
type sampler struct {
	s    Sampling
	cand []cand
}

// cand is a candidate token with its (tempered) logit and probability.
type cand struct {
	id    int
	logit float32
	p     float64
}

// before orders candidates by logit, descending, then id, ascending: the
// order in which top-k keeps and top-p accumulates them.
func before(a, b cand) bool {
	if a.logit != b.logit {
		return a.logit > b.logit
	}
	return a.id < b.id
}

// choose returns the next token for one row of logits, drawing from rng.
func (sm *sampler) choose(logits []float32, rng *rand.Rand) int {
	s := sm.s
	if s.Greedy() {
		best := 0
		for j, v := range logits {
			if v > logits[best] {
				best = j
			}
		}
		return best
	}
	invT := float32(1 / s.Temperature)
	switch {
	case s.TopK > 0 && s.TopK < len(logits):
		sm.topK(logits, s.TopK)
	case s.TopP < 1:
		sm.nucleusCandidates(logits, invT)
	default:
		return sampleAll(logits, invT, rng)
	}
	c := sm.cand
	// Softmax over the candidates (the tempered logits of the kept ones).
	mx := c[0].logit * invT
	var z float64
	for i := range c {
		c[i].p = math.Exp(float64(c[i].logit*invT - mx))
		z += c[i].p
	}
	if s.TopP < 1 {
		// Keep a candidate while the mass above it is below p.
		var above float64
		n := 0
		for n < len(c) && above < s.TopP*z {
			above += c[n].p
			n++
		}
		c, z = c[:n], above
	}
	u := rng.Float64() * z
	for _, x := range c {
		u -= x.p
		if u < 0 {
			return x.id
		}
	}
	return c[len(c)-1].id
}

// topK sets sm.cand to the k largest logits in candidate order.
func (sm *sampler) topK(logits []float32, k int) {
	c := sm.cand[:0]
	for j, v := range logits {
		x := cand{id: j, logit: v}
		if len(c) == k && !before(x, c[k-1]) {
			continue
		}
		if len(c) < k {
			c = append(c, x)
		} else {
			c[k-1] = x
		}
		for i := len(c) - 1; i > 0 && before(c[i], c[i-1]); i-- {
			c[i], c[i-1] = c[i-1], c[i]
		}
	}
	sm.cand = c
}

// nucleusCandidates sets sm.cand to a prefix (in candidate order) of the
// vocabulary that certainly holds the nucleus: every token whose
// probability exceeds a threshold, the threshold lowered until their mass
// reaches top-p. Sorting a few hundred tokens instead of the whole
// vocabulary is what keeps nucleus sampling cheap.
func (sm *sampler) nucleusCandidates(logits []float32, invT float32) {
	mx, z := normalizer(logits, invT)
	for _, thr := range []float64{1e-3, 1e-5, 1e-7, 0} {
		c := sm.cand[:0]
		var mass float64
		for j, v := range logits {
			e := float64(tensor.ExpF(v*invT - mx))
			if e > thr*z || thr == 0 {
				c = append(c, cand{id: j, logit: v})
				mass += e
			}
		}
		sm.cand = c
		if mass >= sm.s.TopP*z || thr == 0 {
			break
		}
	}
	sort.Slice(sm.cand, func(i, j int) bool { return before(sm.cand[i], sm.cand[j]) })
}

// sampleAll draws from the whole tempered distribution, walking the
// vocabulary in id order.
func sampleAll(logits []float32, invT float32, rng *rand.Rand) int {
	mx, z := normalizer(logits, invT)
	u := rng.Float64() * z
	for j, v := range logits {
		u -= float64(tensor.ExpF(v*invT - mx))
		if u < 0 {
			return j
		}
	}
	return len(logits) - 1
}

// normalizer returns the largest tempered logit and the softmax's
// normalising sum relative to it (float32 exponentials summed in float64).
func normalizer(logits []float32, invT float32) (mx float32, z float64) {
	mx = logits[0]
	for _, v := range logits[1:] {
		mx = max(mx, v)
	}
	mx *= invT
	for _, v := range logits {
		z += float64(tensor.ExpF(v*invT - mx))
	}
	return mx, z
}
