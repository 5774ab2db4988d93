package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// One seed's grid orders cells a few tenths apart by chance: on PaSeR's mini
// profile, seeds 42 and 1 of the same Table 4 agree with the paper on 33
// and 27 of 44 orderings. MeanOverSeeds is the grid the finding is about --
// each cell the mean over the seeds -- so that the agreement measures the
// mini model's ordering rather than one draw of its noise. The per-seed
// agreements are kept beside it: a reader sees how much the seeds differ.

// MeanOverSeeds combines the grids one ablation recorded under seeds (same
// order) into one whose cells are the means, with the sample standard
// deviation in SD, and whose agreement is measured on the means. A cell
// missing under any seed is missing: a mean over fewer seeds is a different
// estimate. The grids must have the same name, columns and variants.
func MeanOverSeeds(grids []*Ablation, seeds []int64) (*Ablation, error) {
	if len(grids) == 0 || len(grids) != len(seeds) {
		return nil, fmt.Errorf("%d grids for %d seeds", len(grids), len(seeds))
	}
	first := grids[0]
	for i, g := range grids[1:] {
		if g.Name != first.Name || !slices.Equal(g.Columns, first.Columns) || !slices.Equal(labels(g), labels(first)) {
			return nil, fmt.Errorf("seed %d's grid of ablation %s (%s; %s) differs from seed %d's (%s; %s): record both from the same file",
				seeds[i+1], g.Name, strings.Join(labels(g), ", "), strings.Join(g.Columns, ", "),
				seeds[0], strings.Join(labels(first), ", "), strings.Join(first.Columns, ", "))
		}
	}
	out := &Ablation{Name: first.Name, Title: first.Title, Columns: first.Columns, Seeds: seeds}
	for r, row := range first.Rows {
		m := AblRow{Label: row.Label, Paper: row.Paper}
		for c := range first.Columns {
			var vs []float64
			for _, g := range grids {
				if v := value(g.Rows[r].Values, c); !math.IsNaN(v) {
					vs = append(vs, v)
				}
			}
			mu, sd := math.NaN(), math.NaN()
			if len(vs) == len(grids) {
				mu, sd = meanSD(vs)
			}
			m.Values = append(m.Values, mu)
			m.SD = append(m.SD, sd)
		}
		out.Rows = append(out.Rows, m)
	}
	out.Stable = stableOrderings(grids)
	if out.Agreement = AgreementOf(out); out.Agreement != nil {
		if fa := first.Agreement; fa != nil {
			var res []float64
			if fa.Resolved != nil {
				res = fa.Resolved.Resolution
			}
			out.Declare(fa.Min, res)
		}
		for _, g := range grids {
			a := AgreementOf(g)
			if a == nil {
				a = &Agreement{Tau: math.NaN()}
			}
			out.SeedAgreement = append(out.SeedAgreement, a)
		}
	}
	return out, nil
}

// Stable counts the paper's orderings that every seed orders the same way
// (no tie under any): those are the mini model's orderings, whatever the
// seed; the rest are ones its seeds disagree on. Agree is how many of the
// stable ones agree with the paper -- it separates what the mini model gets
// wrong from what one seed draws.
type Stable struct {
	Orderings int `json:"orderings"` // the paper's orderings every seed orders alike
	Agree     int `json:"agree"`     // of those, the ones that agree with the paper
	Of        int `json:"of"`        // the paper's orderings with a value under every seed
}

func stableOrderings(grids []*Ablation) *Stable {
	st := &Stable{}
	first := grids[0]
	for c := range first.Columns {
		for i := range first.Rows {
			for j := i + 1; j < len(first.Rows); j++ {
				dp := value(first.Rows[i].Paper, c) - value(first.Rows[j].Paper, c)
				if math.IsNaN(dp) || dp == 0 {
					continue
				}
				sign, present := commonSign(grids, c, i, j)
				if !present {
					continue
				}
				st.Of++
				if sign != 0 {
					st.Orderings++
				}
				if sign*dp > 0 {
					st.Agree++
				}
			}
		}
	}
	return st
}

// commonSign is the sign of row i's value minus row j's in column c when
// every grid gives the same non-zero one, else 0; present is false when
// some grid lacks either value.
func commonSign(grids []*Ablation, c, i, j int) (sign float64, present bool) {
	for k, g := range grids {
		d := value(g.Rows[i].Values, c) - value(g.Rows[j].Values, c)
		if math.IsNaN(d) {
			return 0, false
		}
		s := 0.0
		if d != 0 {
			s = math.Copysign(1, d)
		}
		if k == 0 {
			sign = s
		} else if s != sign {
			sign = 0
		}
	}
	return sign, true
}

// String: "30 of the 44 orderings are stable across the seeds; 26 of those
// agree with the paper (87%)".
func (s *Stable) String() string {
	share := math.NaN()
	if s.Orderings > 0 {
		share = float64(s.Agree) / float64(s.Orderings)
	}
	return fmt.Sprintf("%d of the %d orderings are ordered alike by every seed; %d of those agree with the paper (%s)", s.Orderings, s.Of, s.Agree, pct(share))
}

func labels(a *Ablation) []string {
	var ls []string
	for _, r := range a.Rows {
		ls = append(ls, r.Label)
	}
	return ls
}

func value(vs []float64, i int) float64 {
	if i < len(vs) {
		return vs[i]
	}
	return math.NaN()
}

// meanSD is the mean and the sample (n-1) standard deviation; the latter is
// NaN for one value.
func meanSD(xs []float64) (float64, float64) {
	mu := mean(xs)
	if len(xs) < 2 {
		return mu, math.NaN()
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mu) * (x - mu)
	}
	return mu, math.Sqrt(ss / float64(len(xs)-1))
}

func seedList(seeds []int64) string {
	var ss []string
	for _, s := range seeds {
		ss = append(ss, fmt.Sprint(s))
	}
	return strings.Join(ss, ", ")
}
