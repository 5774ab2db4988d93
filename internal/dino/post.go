package dino

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"repro/internal/rows"
)

// DropIdentical removes the pairs whose x2 is x1 (after trimming spaces):
// they carry no training signal (Section 4). It returns the kept pairs
// and how many were dropped.
func DropIdentical(ps []rows.GeneratedPair) ([]rows.GeneratedPair, int) {
	out := make([]rows.GeneratedPair, 0, len(ps))
	for _, p := range ps {
		if strings.TrimSpace(p.Sentence1) != strings.TrimSpace(p.Sentence2) {
			out = append(out, p)
		}
	}
	return out, len(ps) - len(out)
}

// Smooth replaces label 0 with low and label 1 with high (the paper's
// label smoothing: 0.1 and 0.9); other labels are kept.
func Smooth(ps []rows.GeneratedPair, low, high float64) []rows.GeneratedPair {
	out := make([]rows.GeneratedPair, len(ps))
	for i, p := range ps {
		switch p.Label {
		case 0:
			p.Label = low
		case 1:
			p.Label = high
		}
		out[i] = p
	}
	return out
}

// Augment adds, for every distinct x1 (in order of first appearance), perX1
// pairs (x1, x2, label) whose x2 is drawn uniformly from the entries with
// another x1 (Section 4: two random x2 per x1, labelled 0). The draws come
// from rng; the input rows come first, unchanged.
func Augment(ps []rows.GeneratedPair, perX1 int, label float64, rng *rand.Rand) ([]rows.GeneratedPair, error) {
	out := append([]rows.GeneratedPair(nil), ps...)
	if perX1 == 0 {
		return out, nil
	}
	var order []string
	first := map[string]int{}
	for i, p := range ps {
		if _, ok := first[p.Sentence1]; !ok {
			first[p.Sentence1] = i
			order = append(order, p.Sentence1)
		}
	}
	if len(order) < 2 {
		return nil, fmt.Errorf("augmentation needs entries of at least two different x1 (have %d)", len(order))
	}
	for _, x1 := range order {
		src := ps[first[x1]]
		for k := 0; k < perX1; k++ {
			var other rows.GeneratedPair
			for {
				other = ps[rng.IntN(len(ps))]
				if other.Sentence1 != x1 {
					break
				}
			}
			out = append(out, rows.GeneratedPair{Sentence1: x1, Sentence2: other.Sentence2, Label: label,
				Instruction: label, Origin: "augmented", X1: src.X1, Try: -1, Sample: k, Seed: src.Seed})
		}
	}
	return out, nil
}

// Split shuffles ps with rng and returns the last part as validation:
// round(fraction * n) pairs, at least one, at most n-1.
func Split(ps []rows.GeneratedPair, fraction float64, rng *rand.Rand) (train, validation []rows.GeneratedPair, err error) {
	if len(ps) < 2 {
		return nil, nil, fmt.Errorf("%d pairs cannot be split into training and validation", len(ps))
	}
	nv := int(fraction*float64(len(ps)) + 0.5)
	nv = min(max(nv, 1), len(ps)-1)
	perm := rng.Perm(len(ps))
	for i, j := range perm {
		if i < len(ps)-nv {
			train = append(train, ps[j])
		} else {
			validation = append(validation, ps[j])
		}
	}
	return train, validation, nil
}

// Render writes NLI triplets as texts in the instruction format, for
// fine-tuning a generator that cannot follow it otherwise (a departure
// from the paper, which prompts GPT2-XL as it is): for each triplet,
// I_1(anchor) + entailment, I_0.5(anchor) + contradiction, and
// I_0(anchor) + the entailment of another triplet drawn from rng, each
// closed by quote. labels gives the three instructions by value (1, 0.5, 0).
func Render(ts []rows.Triplet, template string, labels []Label, quote string, rng *rand.Rand) ([]string, error) {
	if err := CheckTemplate(template); err != nil {
		return nil, err
	}
	by := map[float64]string{}
	for _, l := range labels {
		by[l.Value] = l.Instruction
	}
	for _, v := range []float64{1, 0.5, 0} {
		if _, ok := by[v]; !ok {
			return nil, fmt.Errorf("rendering needs the instructions of labels 1, 0.5 and 0 (missing %v)", v)
		}
	}
	if len(ts) < 2 {
		return nil, fmt.Errorf("%d triplets: rendering needs at least 2", len(ts))
	}
	var out []string
	for i, t := range ts {
		if strings.TrimSpace(t.Anchor) == "" || strings.TrimSpace(t.Positive) == "" {
			return nil, fmt.Errorf("triplet %d has an empty anchor or positive", i+1)
		}
		out = append(out, Instruction(template, by[1], t.Anchor)+t.Positive+quote)
		if t.Negative != "" {
			out = append(out, Instruction(template, by[0.5], t.Anchor)+t.Negative+quote)
		}
		j := rng.IntN(len(ts) - 1)
		if j >= i {
			j++
		}
		out = append(out, Instruction(template, by[0], t.Anchor)+ts[j].Positive+quote)
	}
	return out, nil
}
