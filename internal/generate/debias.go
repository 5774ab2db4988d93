package generate

import (
	"fmt"
	"math"
)

// SelfDebias is the self-debiasing of Schick et al. (2021) as DINO uses it
// (Schick and Schütze 2021, Section 3), as a Processor over a group whose
// first member is the prompt of label y and whose other members are the
// prompts of y's counterlabels, run with Options.Lockstep so that all of
// them read the same continuation.
//
// At every step, with p_y the softmax of the first member's logits and
// p_y' those of each counterlabel prompt, every token whose
// delta = p_y - max_y' p_y' is negative has its probability under I_y
// multiplied by alpha = max(exp(lambda * delta), epsilon); the result is
// renormalised and written back to the first member's row as log
// probabilities (the draw and the samplers after it see a distribution
// again). The epsilon floor is the released code's; the paper's formula is
// epsilon = 0. A group of one (label y with no counterlabel) is left as it
// is, and so are the counterlabel rows: with Lockstep only the first
// member's row is drawn from.
type SelfDebias struct {
	// Lambda is the decay constant (DINO: 100); 0 leaves every row as it
	// is up to rounding.
	Lambda float64
	// Epsilon floors alpha (the released code: 0.01).
	Epsilon float64

	// scratch, reused across steps (a Processor is called from one
	// goroutine at a time by Generate).
	py, pmax, pc []float64
}

// Validate reports a bad decay constant or floor.
func (d *SelfDebias) Validate() error {
	switch {
	case !(d.Lambda >= 0) || math.IsInf(d.Lambda, 0):
		return fmt.Errorf("self-debiasing: lambda %v must be a finite number >= 0", d.Lambda)
	case !(d.Epsilon >= 0 && d.Epsilon <= 1):
		return fmt.Errorf("self-debiasing: epsilon %v must lie in [0, 1]", d.Epsilon)
	}
	return nil
}

// Process rewrites the first member's logits (see SelfDebias).
func (d *SelfDebias) Process(s *Step) error {
	if len(s.Logits) < 2 {
		return nil
	}
	row := s.Logits[0]
	V := len(row)
	d.py = softmaxInto(row, d.py)
	if cap(d.pmax) < V {
		d.pmax = make([]float64, V)
	}
	d.pmax = d.pmax[:V]
	for i := range d.pmax {
		d.pmax[i] = 0
	}
	for _, cl := range s.Logits[1:] {
		if len(cl) != V {
			return fmt.Errorf("self-debiasing: counterlabel row of %d logits, label row of %d", len(cl), V)
		}
		d.pc = softmaxInto(cl, d.pc)
		for i, p := range d.pc {
			d.pmax[i] = max(d.pmax[i], p)
		}
	}
	var z float64
	for i, p := range d.py {
		if delta := p - d.pmax[i]; delta < 0 {
			p *= max(math.Exp(d.Lambda*delta), d.Epsilon)
			d.py[i] = p
		}
		z += p
	}
	for i, p := range d.py {
		if p > 0 {
			row[i] = float32(math.Log(p / z))
		} else {
			row[i] = float32(math.Inf(-1))
		}
	}
	return nil
}

// softmaxInto is the softmax of logits in float64, into buf's storage.
func softmaxInto(logits []float32, buf []float64) []float64 {
	if cap(buf) < len(logits) {
		buf = make([]float64, len(logits))
	}
	buf = buf[:len(logits)]
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = max(mx, float64(v))
	}
	var z float64
	for i, v := range logits {
		buf[i] = math.Exp(float64(v) - mx)
		z += buf[i]
	}
	for i := range buf {
		buf[i] /= z
	}
	return buf
}
