package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
)

// Agreement with the paper: how far an ablation's cells are ordered as the
// paper orders them. A mini profile cannot reproduce a paper's numbers; it
// can reproduce its findings ("SR helps", "[CLS] pools best"), and a finding
// is an ordering of cells. So, per column, every pair of variants that the
// paper gives different values is one ordering; it agrees when ours puts the
// pair in the same order (a tie in ours agrees with nothing). Pairs the
// paper ties are not orderings. Kendall's tau-b per column (ties handled as
// scipy.stats.kendalltau does by default) summarises the same comparison
// with ties in both; the ablation's tau is the mean over the columns that
// have one. Orderings are counted over all columns together.
//
// A paper prints one run's numbers to a tenth of a point, so a pair it sets
// 0.1 apart is not a finding; where it prints one configuration more than
// once, its copies may differ by more (PaSeR's four copies of its default,
// read as RAKE top-3, differed by 1.0 on SICK-R; read as top-5, as
// experiments/paser.hcl declares, they agree to the tenth).
// An ablation may declare that resolution per column (`paper_resolution`);
// Resolved then counts apart the orderings the paper makes beyond it -- the
// findings -- and the pairs it does not separate, of which ours may still
// set some further apart than the resolution (ours contradicting a "makes no
// difference"). The plain count stays the gate: the resolution is a reading
// aid declared by a person, and a gate should not move with one.

// Agreement is one ablation's agreement with the paper.
type Agreement struct {
	Orderings int               `json:"orderings"` // pairs of cells the paper orders
	Agree     int               `json:"agree"`     // of those, pairs ours orders alike
	Tau       float64           `json:"tau"`       // mean Kendall tau-b over the columns (NaN: none defined)
	Columns   []ColumnAgreement `json:"columns"`
	// Min is the declared minimum share of agreeing orderings (0: none).
	Min float64 `json:"min,omitempty"`
	// Resolved is the count beyond the paper's declared resolution (nil:
	// none declared).
	Resolved *Resolved `json:"resolved,omitempty"`
}

// Resolved is an agreement counted against the paper's resolution: pairs
// the paper sets further apart than Resolution (per column) are its
// findings; the rest are near-ties.
type Resolved struct {
	Columns    []string  `json:"columns"`
	Resolution []float64 `json:"resolution"` // per column, in the paper's units
	Orderings  int       `json:"orderings"`  // pairs the paper sets more than the resolution apart
	Agree      int       `json:"agree"`      // of those, pairs ours orders alike
	NearTies   int       `json:"near_ties"`  // pairs the paper sets no more than the resolution apart (exact ties too)
	Separated  int       `json:"separated"`  // of the near-ties, pairs ours sets more than the resolution apart
}

// eps absorbs the binary representation of one-decimal paper values: 77.8 -
// 77.7 is 0.0999...97 or 0.1000...03, and either is "0.1 apart".
const eps = 1e-9

// ResolvedOf counts ab's cells against the paper's resolution res: one
// value for every column, or one per column. It returns nil when res is
// empty or the grid has no paper values.
func ResolvedOf(ab *Ablation, res []float64) *Resolved {
	if len(res) == 0 || !hasPaper(ab) {
		return nil
	}
	out := &Resolved{Columns: ab.Columns}
	for c := range ab.Columns {
		r := res[0]
		if len(res) > 1 {
			r = value(res, c)
		}
		out.Resolution = append(out.Resolution, r)
		var ours, paper []float64
		for _, row := range ab.Rows {
			o, p := value(row.Values, c), value(row.Paper, c)
			if !math.IsNaN(o) && !math.IsNaN(p) {
				ours, paper = append(ours, o), append(paper, p)
			}
		}
		for i := range ours {
			for j := i + 1; j < len(ours); j++ {
				dp, do := paper[i]-paper[j], ours[i]-ours[j]
				if math.Abs(dp) <= r+eps {
					out.NearTies++
					if math.Abs(do) > r+eps {
						out.Separated++
					}
					continue
				}
				out.Orderings++
				if do*dp > 0 {
					out.Agree++
				}
			}
		}
	}
	return out
}

// Share is the agreeing fraction of the orderings beyond the resolution.
func (r *Resolved) Share() float64 {
	if r.Orderings == 0 {
		return math.NaN()
	}
	return float64(r.Agree) / float64(r.Orderings)
}

// String reads "beyond the paper's resolution (STS-B 0.1, SICK-R 1): 98 of
// 127 orderings agree (77%); 50 near-ties, 23 of them further apart in ours".
func (r *Resolved) String() string {
	return fmt.Sprintf("beyond the paper's resolution (%s): %d of %d orderings agree (%s); %d near-ties, %d of them further apart in ours",
		r.resolutionText(), r.Agree, r.Orderings, pct(r.Share()), r.NearTies, r.Separated)
}

// resolutionText is "0.5" when every column has the same resolution, else
// "STS12-16 0.1, STS-B 0.1, SICK-R 1".
func (r *Resolved) resolutionText() string {
	same := true
	for _, x := range r.Resolution {
		same = same && x == r.Resolution[0]
	}
	if same && len(r.Resolution) > 0 {
		return fmt.Sprintf("%g", r.Resolution[0])
	}
	var ps []string
	for i, x := range r.Resolution {
		name := fmt.Sprintf("column %d", i+1)
		if i < len(r.Columns) {
			name = r.Columns[i]
		}
		ps = append(ps, fmt.Sprintf("%s %g", name, x))
	}
	return strings.Join(ps, ", ")
}

// ColumnAgreement is one column's share of an Agreement.
type ColumnAgreement struct {
	Column    string  `json:"column"`
	Cells     int     `json:"cells"` // variants with both our value and the paper's
	Orderings int     `json:"orderings"`
	Agree     int     `json:"agree"`
	Tau       float64 `json:"tau"` // NaN when undefined (fewer than 2 cells, or one side constant)
}

// JSON has no NaN: an undefined tau is written as null and read back as NaN.

func nanPtr(f float64) *float64 {
	if math.IsNaN(f) {
		return nil
	}
	return &f
}

func ptrNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

type columnJSON struct {
	Column    string   `json:"column"`
	Cells     int      `json:"cells"`
	Orderings int      `json:"orderings"`
	Agree     int      `json:"agree"`
	Tau       *float64 `json:"tau"`
}

// MarshalJSON writes an undefined tau as null.
func (c ColumnAgreement) MarshalJSON() ([]byte, error) {
	return json.Marshal(columnJSON{c.Column, c.Cells, c.Orderings, c.Agree, nanPtr(c.Tau)})
}

// UnmarshalJSON reads a null tau as NaN.
func (c *ColumnAgreement) UnmarshalJSON(b []byte) error {
	var v columnJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = ColumnAgreement{v.Column, v.Cells, v.Orderings, v.Agree, ptrNaN(v.Tau)}
	return nil
}

type agreementJSON struct {
	Orderings int               `json:"orderings"`
	Agree     int               `json:"agree"`
	Tau       *float64          `json:"tau"`
	Columns   []ColumnAgreement `json:"columns"`
	Min       float64           `json:"min,omitempty"`
	Resolved  *Resolved         `json:"resolved,omitempty"`
}

// MarshalJSON writes an undefined tau as null.
func (a Agreement) MarshalJSON() ([]byte, error) {
	return json.Marshal(agreementJSON{a.Orderings, a.Agree, nanPtr(a.Tau), a.Columns, a.Min, a.Resolved})
}

// UnmarshalJSON reads a null tau as NaN.
func (a *Agreement) UnmarshalJSON(b []byte) error {
	var v agreementJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*a = Agreement{v.Orderings, v.Agree, ptrNaN(v.Tau), v.Columns, v.Min, v.Resolved}
	return nil
}

// Share is the agreeing fraction of the orderings (NaN without any).
func (a *Agreement) Share() float64 {
	if a.Orderings == 0 {
		return math.NaN()
	}
	return float64(a.Agree) / float64(a.Orderings)
}

// Below reports whether a declared minimum is not met (no orderings at all
// counts as not met: the claim cannot be checked).
func (a *Agreement) Below() bool {
	if a.Min <= 0 {
		return false
	}
	s := a.Share()
	return math.IsNaN(s) || s < a.Min
}

// AgreementOf measures a grid against the paper values its rows carry; it
// returns nil when no row has any.
func AgreementOf(ab *Ablation) *Agreement {
	if !hasPaper(ab) {
		return nil
	}
	out := &Agreement{}
	var taus []float64
	for c, name := range ab.Columns {
		var ours, paper []float64
		for _, r := range ab.Rows {
			if c < len(r.Values) && c < len(r.Paper) && !math.IsNaN(r.Values[c]) && !math.IsNaN(r.Paper[c]) {
				ours, paper = append(ours, r.Values[c]), append(paper, r.Paper[c])
			}
		}
		col := ColumnAgreement{Column: name, Cells: len(ours), Tau: KendallTauB(ours, paper)}
		for i := range ours {
			for j := i + 1; j < len(ours); j++ {
				dp := paper[i] - paper[j]
				if dp == 0 {
					continue
				}
				col.Orderings++
				if (ours[i]-ours[j])*dp > 0 {
					col.Agree++
				}
			}
		}
		out.Orderings += col.Orderings
		out.Agree += col.Agree
		if !math.IsNaN(col.Tau) {
			taus = append(taus, col.Tau)
		}
		out.Columns = append(out.Columns, col)
	}
	out.Tau = mean(taus)
	return out
}

// hasPaper reports whether any row of ab carries a paper value.
func hasPaper(ab *Ablation) bool {
	for _, r := range ab.Rows {
		for _, p := range r.Paper {
			if !math.IsNaN(p) {
				return true
			}
		}
	}
	return false
}

// mean is the mean of xs, NaN for none.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// KendallTauB is Kendall's rank correlation with the tau-b tie correction,
// (concordant - discordant) / sqrt((n0 - tx)(n0 - ty)) over all n0 pairs,
// tx and ty the pairs tied in x and in y: scipy.stats.kendalltau's default.
// It is NaN for fewer than two values or when either side is constant.
func KendallTauB(x, y []float64) float64 {
	n := min(len(x), len(y))
	var con, dis, tx, ty, n0 float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			n0++
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case dx == 0 && dy == 0:
				tx++
				ty++
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case dx*dy > 0:
				con++
			default:
				dis++
			}
		}
	}
	d := math.Sqrt((n0 - tx) * (n0 - ty))
	if n < 2 || d == 0 {
		return math.NaN()
	}
	return (con - dis) / d
}

// String is the agreement as one line: "17 of 28 orderings agree with the
// paper (61%), Kendall tau-b 0.35 (STS12-16 0.47, STS-B 0.33, SICK-R 0.24)",
// with the minimum's verdict when one is declared (the count against the
// paper's resolution is a line of its own: Ablation.AgreementLines).
func (a *Agreement) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d orderings agree with the paper (%s), Kendall tau-b %s", a.Agree, a.Orderings, pct(a.Share()), tauText(a.Tau))
	if len(a.Columns) > 1 {
		var cs []string
		for _, c := range a.Columns {
			cs = append(cs, c.Column+" "+tauText(c.Tau))
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(cs, ", "))
	}
	if a.Min > 0 {
		verdict := "ok"
		if a.Below() {
			verdict = "BELOW"
		}
		fmt.Fprintf(&b, "; minimum %s: %s", pct(a.Min), verdict)
	}
	return b.String()
}

func pct(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

func tauText(t float64) string {
	if math.IsNaN(t) {
		return "-"
	}
	return fmt.Sprintf("%.2f", t)
}

// Summary is an experiment's agreement over several ablations.
type Summary struct {
	Ablations int // with paper values
	Agreement     // orderings and agreements summed; Tau the mean of the ablations' taus
	Below     []string
	// Stable sums the grids' orderings stable across seeds (grids combined
	// over seeds only; nil otherwise).
	Stable *Stable
	// ResolvedAblations is how many ablations declare the paper's
	// resolution; Agreement.Resolved sums their counts (its Resolution and
	// Columns are left empty: they differ between ablations).
	ResolvedAblations int
}

// Summarize sums the agreements of the ablations that have one.
func Summarize(abls []*Ablation) Summary {
	var s Summary
	var taus []float64
	for _, a := range abls {
		if a == nil || a.Agreement == nil {
			continue
		}
		s.Ablations++
		s.Orderings += a.Agreement.Orderings
		s.Agree += a.Agreement.Agree
		if r := a.Agreement.Resolved; r != nil {
			if s.Resolved == nil {
				s.Resolved = &Resolved{}
			}
			s.Resolved.Orderings += r.Orderings
			s.Resolved.Agree += r.Agree
			s.Resolved.NearTies += r.NearTies
			s.Resolved.Separated += r.Separated
			s.ResolvedAblations++
		}
		if !math.IsNaN(a.Agreement.Tau) {
			taus = append(taus, a.Agreement.Tau)
		}
		if a.Agreement.Below() {
			s.Below = append(s.Below, a.Name)
		}
		if a.Stable != nil {
			if s.Stable == nil {
				s.Stable = &Stable{}
			}
			s.Stable.Of += a.Stable.Of
			s.Stable.Orderings += a.Stable.Orderings
			s.Stable.Agree += a.Stable.Agree
		}
	}
	s.Tau = mean(taus)
	return s
}

// WriteSummary prints the one-line summary of an experiment's agreement.
func WriteSummary(w io.Writer, experiment, profile string, s Summary) {
	if profile == "" {
		profile = "paper"
	}
	below := "none below its minimum"
	if len(s.Below) > 0 {
		below = "below their minimum: " + strings.Join(s.Below, ", ")
	}
	fmt.Fprintf(w, "%s (profile %s): %d ablations with paper values, %d of %d orderings agree (%s), mean Kendall tau-b %s; %s\n",
		experiment, profile, s.Ablations, s.Agree, s.Orderings, pct(s.Share()), tauText(s.Tau), below)
	if r := s.Resolved; r != nil {
		declare := fmt.Sprintf("%d ablations declare one", s.ResolvedAblations)
		if s.ResolvedAblations == 1 {
			declare = "1 ablation declares one"
		}
		fmt.Fprintf(w, "%s (profile %s): beyond the paper's resolution (%s), %d of %d orderings agree (%s); %d near-ties, %d of them further apart in ours\n",
			experiment, profile, declare, r.Agree, r.Orderings, pct(r.Share()), r.NearTies, r.Separated)
	}
	if s.Stable != nil {
		fmt.Fprintf(w, "%s (profile %s): %s\n", experiment, profile, s.Stable)
	}
}

// Declare applies what the experiment file declares now to a's agreement:
// the minimum and the paper's resolution. Callers apply them on every read,
// not only when the grid is recorded, so that declaring either needs no
// grid re-run.
func (a *Ablation) Declare(min float64, resolution []float64) {
	if a == nil || a.Agreement == nil {
		return
	}
	a.Agreement.Min = min
	a.Agreement.Resolved = ResolvedOf(a, resolution)
}
