// Package gense holds GenSE's data synthesis and quality check (Chen et
// al. 2022, section 2.1) apart from any model: the entailment and
// contradiction generations of one unlabeled sentence u are joined into a
// candidate triplet {u, u_entail, u_contra}; the discriminator's
// log-probabilities of the label sequences "true" and "false" for
// T_d(u, u_entail) and T_d(u, u_contra) decide whether it is kept.
//
// The paper compares "the output probabilities of 'true' and 'false'" with
// alpha without saying how they are normalised. Here P(true) is the
// probability of the sequence "true" renormalised over the two label
// sequences, P(true) = p_t / (p_t + p_f) -- the reading under which
// alpha = 0.9 means "nine to one for the right label" whatever mass the
// model puts on other words. A triplet is kept when P(true | u, u_entail)
// >= alpha and P(false | u, u_contra) >= alpha.
//
// Every decision carries its reason, so a stage can count what was dropped
// and why; the pass rate at the paper's alpha = 0.9 is always counted too,
// because profiles that lower alpha must still show it.
package gense

import (
	"fmt"
	"math"
	"strings"
)

// PaperAlpha is the paper's confidence threshold.
const PaperAlpha = 0.9

// Candidate is one unlabeled sentence with its two generations.
type Candidate struct {
	Anchor, Entail, Contra string
}

// Generation is one generated continuation of a prompt built from an input
// sentence (a row of generate.complete's output, reduced to what pairing
// needs).
type Generation struct {
	Prompt int    // index of the input sentence
	Sample int    // sample index for that prompt
	Input  string // the input sentence
	Text   string // the generated sentence
}

// Pair joins entailment and contradiction generations of the same input
// (same prompt index and sample index) into candidates, in the order of
// the entailment generations. Both lists must come from the same inputs:
// an input whose index or text differs between them is an error, and so is
// a generation without its counterpart.
func Pair(entail, contra []Generation) ([]Candidate, error) {
	type key struct{ p, s int }
	byKey := make(map[key]Generation, len(contra))
	for _, g := range contra {
		k := key{g.Prompt, g.Sample}
		if _, dup := byKey[k]; dup {
			return nil, fmt.Errorf("contra: prompt %d sample %d appears twice", g.Prompt, g.Sample)
		}
		byKey[k] = g
	}
	if len(entail) != len(contra) {
		return nil, fmt.Errorf("entail has %d generations, contra %d: both must come from the same sentences and samples", len(entail), len(contra))
	}
	out := make([]Candidate, 0, len(entail))
	seen := make(map[key]bool, len(entail))
	for _, e := range entail {
		k := key{e.Prompt, e.Sample}
		if seen[k] {
			return nil, fmt.Errorf("entail: prompt %d sample %d appears twice", e.Prompt, e.Sample)
		}
		seen[k] = true
		c, ok := byKey[k]
		if !ok {
			return nil, fmt.Errorf("entail: prompt %d sample %d has no contradiction generation", e.Prompt, e.Sample)
		}
		if c.Input != e.Input {
			return nil, fmt.Errorf("prompt %d: entail's input %q differs from contra's %q (the two generations must read the same sentences)", e.Prompt, clip(e.Input), clip(c.Input))
		}
		if strings.TrimSpace(e.Input) == "" {
			return nil, fmt.Errorf("prompt %d: no input sentence (generate from a sentence corpus)", e.Prompt)
		}
		out = append(out, Candidate{Anchor: e.Input, Entail: strings.TrimSpace(e.Text), Contra: strings.TrimSpace(c.Text)})
	}
	return out, nil
}

// Normalised returns exp(a) / (exp(a) + exp(b)) for log-probabilities a
// and b, computed stably (the label probabilities of a small model can be
// far below float64's exp range).
func Normalised(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return 1 / (1 + math.Exp(b-a))
}

// Reason says why a candidate was dropped ("" when it was kept).
type Reason string

// Reasons, in the order checks apply: an empty or copied generation is
// dropped before the discriminator is consulted.
const (
	Kept        Reason = ""
	EmptyEntail Reason = "empty_entail" // the entailment generation is empty
	EmptyContra Reason = "empty_contra" // the contradiction generation is empty
	Copy        Reason = "copy"         // a generation repeats the anchor verbatim
	EntailFails Reason = "entail_fails" // P(true | u, u_entail) < alpha only
	ContraFails Reason = "contra_fails" // P(false | u, u_contra) < alpha only
	BothFail    Reason = "both_fail"    // both below alpha
)

// Precheck returns the reason a candidate is dropped before scoring, or
// Kept when it goes to the discriminator.
func Precheck(c Candidate) Reason {
	switch {
	case c.Entail == "":
		return EmptyEntail
	case c.Contra == "":
		return EmptyContra
	case c.Entail == strings.TrimSpace(c.Anchor) || c.Contra == strings.TrimSpace(c.Anchor):
		return Copy
	}
	return Kept
}

// Decide applies the threshold to the two normalised probabilities.
func Decide(pTrueEntail, pFalseContra, alpha float64) Reason {
	okE, okC := pTrueEntail >= alpha, pFalseContra >= alpha
	switch {
	case okE && okC:
		return Kept
	case okC:
		return EntailFails
	case okE:
		return ContraFails
	}
	return BothFail
}

// CheckAlpha validates a threshold.
func CheckAlpha(alpha float64) error {
	if math.IsNaN(alpha) || alpha < 0 || alpha > 1 {
		return fmt.Errorf("%v is outside [0, 1] (a probability threshold; the paper's is 0.9)", alpha)
	}
	return nil
}

// Counts tallies a quality check.
type Counts struct {
	Alpha      float64        `json:"alpha"`
	Candidates int            `json:"candidates"`
	Scored     int            `json:"scored"`
	Kept       int            `json:"kept"`
	Dropped    map[Reason]int `json:"dropped"`
	// PassRate is Kept / Candidates at Alpha; PassRatePaper the same at
	// the paper's 0.9 (equal when Alpha is 0.9).
	PassRate      float64 `json:"pass_rate"`
	KeptPaper     int     `json:"kept_at_0.9"`
	PassRatePaper float64 `json:"pass_rate_at_0.9"`
	// Mean normalised probabilities over the scored candidates.
	MeanPTrueEntail  float64 `json:"mean_p_true_entail"`
	MeanPFalseContra float64 `json:"mean_p_false_contra"`
}

// Tally counts decisions. reasons[i] is candidate i's outcome at alpha;
// pe and pc are its probabilities (NaN when it was not scored).
func Tally(alpha float64, reasons []Reason, pe, pc []float64) Counts {
	c := Counts{Alpha: alpha, Candidates: len(reasons), Dropped: map[Reason]int{}}
	for _, r := range []Reason{EmptyEntail, EmptyContra, Copy, EntailFails, ContraFails, BothFail} {
		c.Dropped[r] = 0
	}
	var se, sc float64
	for i, r := range reasons {
		if r == Kept {
			c.Kept++
		} else {
			c.Dropped[r]++
		}
		if !math.IsNaN(pe[i]) {
			c.Scored++
			se += pe[i]
			sc += pc[i]
			if Decide(pe[i], pc[i], PaperAlpha) == Kept {
				c.KeptPaper++
			}
		}
	}
	if c.Candidates > 0 {
		c.PassRate = float64(c.Kept) / float64(c.Candidates)
		c.PassRatePaper = float64(c.KeptPaper) / float64(c.Candidates)
	}
	if c.Scored > 0 {
		c.MeanPTrueEntail = se / float64(c.Scored)
		c.MeanPFalseContra = sc / float64(c.Scored)
	}
	return c
}

// EmptyReason is the sentence a consumer shows when nothing was kept.
func (c Counts) EmptyReason() string {
	var parts []string
	for _, r := range []Reason{EmptyEntail, EmptyContra, Copy, EntailFails, ContraFails, BothFail} {
		if n := c.Dropped[r]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, n))
		}
	}
	why := "no candidates"
	if len(parts) > 0 {
		why = "dropped: " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("the GenSE quality check kept 0 of %d candidate triplets at alpha = %g (%s; mean P(true|entail) %.3f, mean P(false|contra) %.3f): lower alpha, train the generator/discriminator longer, or synthesise from more sentences",
		c.Candidates, c.Alpha, why, c.MeanPTrueEntail, c.MeanPFalseContra)
}

func clip(s string) string {
	if len(s) <= 60 {
		return s
	}
	return s[:60] + "..."
}
