package gense

import (
	"math"
	"strings"
	"testing"
)

func TestNormalised(t *testing.T) {
	t.Parallel()
	// p_t = 0.3, p_f = 0.1: P(true) = 0.75.
	if got := Normalised(math.Log(0.3), math.Log(0.1)); math.Abs(got-0.75) > 1e-12 {
		t.Errorf("Normalised(log .3, log .1) = %v, want 0.75", got)
	}
	// Far below exp's range the ratio still holds: e^-1000 vs e^-1010.
	want := 1 / (1 + math.Exp(-10))
	if got := Normalised(-1000, -1010); math.Abs(got-want) > 1e-12 {
		t.Errorf("Normalised(-1000, -1010) = %v, want %v", got, want)
	}
	if got := Normalised(-1010, -1000); math.Abs(got-(1-want)) > 1e-12 {
		t.Errorf("Normalised(-1010, -1000) = %v, want %v", got, 1-want)
	}
	if got := Normalised(-2, -2); got != 0.5 {
		t.Errorf("equal log-probabilities: %v", got)
	}
	if !math.IsNaN(Normalised(math.NaN(), 0)) {
		t.Error("NaN in, not NaN out")
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pe, pc, alpha float64
		want          Reason
	}{
		{0.95, 0.92, 0.9, Kept},
		{0.9, 0.9, 0.9, Kept}, // the threshold itself passes
		{0.5, 0.92, 0.9, EntailFails},
		{0.95, 0.2, 0.9, ContraFails},
		{0.1, 0.2, 0.9, BothFail},
		{0.1, 0.2, 0, Kept},
		{1, 1, 1, Kept},
		{0.999, 1, 1, EntailFails},
	} {
		if got := Decide(c.pe, c.pc, c.alpha); got != c.want {
			t.Errorf("Decide(%v, %v, %v) = %q, want %q", c.pe, c.pc, c.alpha, got, c.want)
		}
	}
}

func TestCheckAlpha(t *testing.T) {
	t.Parallel()
	for _, a := range []float64{0, 0.5, 0.9, 1} {
		if err := CheckAlpha(a); err != nil {
			t.Errorf("%v: %v", a, err)
		}
	}
	for _, a := range []float64{-0.1, 1.01, 9, math.NaN()} {
		if err := CheckAlpha(a); err == nil || !strings.Contains(err.Error(), "outside [0, 1]") {
			t.Errorf("%v: %v", a, err)
		}
	}
}

func TestPair(t *testing.T) {
	t.Parallel()
	e := []Generation{{0, 0, "a cat sleeps", " a cat rests "}, {1, 0, "two dogs", "dogs"}}
	c := []Generation{{1, 0, "two dogs", "no dogs"}, {0, 0, "a cat sleeps", "a cat runs"}}
	got, err := Pair(e, c)
	if err != nil {
		t.Fatal(err)
	}
	want := []Candidate{{"a cat sleeps", "a cat rests", "a cat runs"}, {"two dogs", "dogs", "no dogs"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Pair = %+v, want %+v", got, want)
	}
	for name, tc := range map[string]struct {
		e, c []Generation
		msg  string
	}{
		"length":      {e, c[:1], "entail has 2 generations, contra 1"},
		"missing":     {e, []Generation{c[0], {2, 0, "x", "y"}}, "has no contradiction generation"},
		"other input": {e, []Generation{c[0], {0, 0, "a cat wakes", "y"}}, "differs from contra's"},
		"duplicate":   {e, []Generation{c[0], c[0]}, "appears twice"},
		"no input":    {[]Generation{{0, 0, "", "x"}}, []Generation{{0, 0, "", "y"}}, "no input sentence"},
	} {
		if _, err := Pair(tc.e, tc.c); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q", name, err, tc.msg)
		}
	}
}

func TestPrecheck(t *testing.T) {
	t.Parallel()
	for c, want := range map[Candidate]Reason{
		{"u", "e", "c"}:  Kept,
		{"u", "", "c"}:   EmptyEntail,
		{"u", "e", ""}:   EmptyContra,
		{"u", "u", "c"}:  Copy,
		{"u ", "e", "u"}: Copy,
	} {
		if got := Precheck(c); got != want {
			t.Errorf("Precheck(%+v) = %q, want %q", c, got, want)
		}
	}
}

func TestTally(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	// alpha 0.5: candidate 0 passes both at 0.5 and 0.9, 1 only at 0.5,
	// 2 fails the contradiction, 3 was empty and never scored.
	reasons := []Reason{Kept, Kept, ContraFails, EmptyEntail}
	pe := []float64{0.95, 0.6, 0.7, nan}
	pc := []float64{0.99, 0.8, 0.1, nan}
	c := Tally(0.5, reasons, pe, pc)
	if c.Candidates != 4 || c.Scored != 3 || c.Kept != 2 || c.KeptPaper != 1 {
		t.Fatalf("%+v", c)
	}
	if c.PassRate != 0.5 || c.PassRatePaper != 0.25 {
		t.Errorf("pass rates %v, %v", c.PassRate, c.PassRatePaper)
	}
	if c.Dropped[ContraFails] != 1 || c.Dropped[EmptyEntail] != 1 || c.Dropped[BothFail] != 0 {
		t.Errorf("dropped %v", c.Dropped)
	}
	if math.Abs(c.MeanPTrueEntail-0.75) > 1e-12 || math.Abs(c.MeanPFalseContra-(0.99+0.8+0.1)/3) > 1e-12 {
		t.Errorf("means %v %v", c.MeanPTrueEntail, c.MeanPFalseContra)
	}
	empty := Tally(0.9, []Reason{BothFail, EntailFails}, []float64{0.1, 0.2}, []float64{0.3, 0.95})
	msg := empty.EmptyReason()
	for _, s := range []string{"kept 0 of 2", "alpha = 0.9", "entail_fails 1", "both_fail 1", "lower alpha"} {
		if !strings.Contains(msg, s) {
			t.Errorf("EmptyReason %q lacks %q", msg, s)
		}
	}
	if got := Tally(0.9, nil, nil, nil).EmptyReason(); !strings.Contains(got, "no candidates") {
		t.Errorf("no candidates: %q", got)
	}
}
