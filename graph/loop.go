package graph

import (
	"fmt"
	"math"
	"strings"
)

// Loop is a repeat block that stops when a metric stops improving (the
// dsl's `until`): its rounds are ordinary nodes of the graph, all of them
// (up to the most rounds the block allows), and which of them run is
// decided while the graph runs. After each round the runner reads the
// round's metric; once Patience rounds in a row have not improved on the
// best value so far (or the last round is reached), the loop stops: later
// rounds do not run, and every edge from outside the loop into its last
// round is read from the best round instead ("repeat.R.last" means the
// selected round, as Algorithm 1 of InfoCSE returns the best model).
//
// Keys are unaffected: a round's key depends on its inputs' digests as
// always, and a node reading the loop's result gets the selected round's
// digests.
type Loop struct {
	Name string
	// Rounds[r][i] is the node of the loop's i-th stage block in round
	// r+1; every round lists its blocks in the same order.
	Rounds [][]string
	// The metric of round r is output Output of node Rounds[r][Metric] at
	// key path Path (a metrics artifact); higher is better.
	Metric int
	Output string
	Path   []string
	// Patience is how many rounds without improvement end the loop (>= 1).
	Patience int
}

// MetricNode is the node holding round r's metric (r from 1).
func (l *Loop) MetricNode(r int) string { return l.Rounds[r-1][l.Metric] }

// Locate says where node id sits in l: its round (from 1) and block index.
func (l *Loop) Locate(id string) (round, index int, ok bool) {
	for r, ids := range l.Rounds {
		for i, n := range ids {
			if n == id {
				return r + 1, i, true
			}
		}
	}
	return 0, 0, false
}

// Selected maps node id of l's last round to the same block's node in
// round best; any other id comes back unchanged.
func (l *Loop) Selected(id string, best int) string {
	r, i, ok := l.Locate(id)
	if !ok || r != len(l.Rounds) || best < 1 || best > len(l.Rounds) {
		return id
	}
	return l.Rounds[best-1][i]
}

// Describe is the loop's rule for people: "until idc_val.metrics.r5 stops
// improving (patience 1, at most 3 rounds)".
func (l *Loop) Describe() string {
	block := l.Rounds[0][l.Metric]
	if i := strings.LastIndex(block, "]."); i >= 0 {
		block = block[i+2:]
	}
	what := block + "." + l.Output
	if len(l.Path) > 0 {
		what += "." + strings.Join(l.Path, ".")
	}
	return fmt.Sprintf("until %s stops improving (patience %d, at most %d rounds)", what, l.Patience, len(l.Rounds))
}

// Decision is where a loop stands after the rounds whose metric is known.
type Decision struct {
	Values  []float64 // the metric of rounds 1..len(Values)
	Best    int       // round (from 1) with the highest value so far; ties keep the earlier round
	Stopped bool      // no further round runs
	// Reason says why the loop stopped ("no improvement for 1 round",
	// "the most rounds (3) ran"); "" while it goes on.
	Reason string
}

// Decide applies l's rule to the metric values of the first rounds.
func (l *Loop) Decide(values []float64) Decision {
	d := Decision{Values: values}
	since := 0
	for r, v := range values {
		if d.Best == 0 || v > values[d.Best-1] {
			d.Best, since = r+1, 0
		} else {
			since++
		}
		if since >= l.Patience {
			d.Stopped = true
			d.Reason = fmt.Sprintf("round %d not beaten in %d round%s", d.Best, since, map[bool]string{true: "", false: "s"}[since == 1])
			d.Values = values[:r+1]
			return d
		}
	}
	if len(values) >= len(l.Rounds) {
		d.Stopped = true
		d.Reason = fmt.Sprintf("the most rounds (%d) ran", len(l.Rounds))
	}
	return d
}

// String renders a decision: "r5 by round: 40.5 42 41.5; stopped after
// round 3 (no improvement ...); selected round 2".
func (d Decision) String() string {
	vals := make([]string, len(d.Values))
	for i, v := range d.Values {
		vals[i] = formatMetric(v)
	}
	s := "by round: " + strings.Join(vals, ", ")
	if len(d.Values) == 0 {
		s = "no round finished yet"
	}
	if d.Stopped {
		s += fmt.Sprintf("; stopped after round %d (%s); selected round %d", len(d.Values), d.Reason, d.Best)
	}
	return s
}

func formatMetric(v float64) string {
	if math.Abs(v) >= 1 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.4f", v)
}

// validateLoops checks that every loop names nodes of g, each at most
// once, in rounds of equal width, with its metric block inside them.
func (g *Graph) validateLoops() []string {
	var errs []string
	owner := map[string]string{}
	for _, l := range g.Loops {
		switch {
		case len(l.Rounds) == 0:
			errs = append(errs, fmt.Sprintf("loop %q has no rounds", l.Name))
			continue
		case l.Patience < 1:
			errs = append(errs, fmt.Sprintf("loop %q: patience %d must be at least 1", l.Name, l.Patience))
		case l.Metric < 0 || l.Metric >= len(l.Rounds[0]):
			errs = append(errs, fmt.Sprintf("loop %q: metric block %d outside its %d blocks", l.Name, l.Metric, len(l.Rounds[0])))
			continue
		}
		for r, ids := range l.Rounds {
			if len(ids) != len(l.Rounds[0]) {
				errs = append(errs, fmt.Sprintf("loop %q: round %d has %d nodes, round 1 has %d", l.Name, r+1, len(ids), len(l.Rounds[0])))
				continue
			}
			for _, id := range ids {
				if g.Node(id) == nil {
					errs = append(errs, fmt.Sprintf("loop %q: round %d names unknown node %q", l.Name, r+1, id))
				}
				if prev, dup := owner[id]; dup {
					errs = append(errs, fmt.Sprintf("node %q is in loop %q and in loop %q", id, prev, l.Name))
				}
				owner[id] = l.Name
			}
		}
	}
	return errs
}

// withLoops grows want (node IDs) so that a loop with any wanted node is
// wanted whole: deciding when it stops needs every round's metric node.
func (g *Graph) withLoops(want map[string]bool) bool {
	grew := false
	for _, l := range g.Loops {
		any := false
		for _, ids := range l.Rounds {
			for _, id := range ids {
				any = any || want[id]
			}
		}
		if !any {
			continue
		}
		for _, ids := range l.Rounds {
			for _, id := range ids {
				if !want[id] {
					want[id], grew = true, true
				}
			}
		}
	}
	return grew
}

// mergeLoops renames the loops of each variant through its ID map (see
// Merge) and keeps one copy of loops that came out identical.
func mergeLoops(variants []*Graph, maps []map[string]string, labels []string) []*Loop {
	var out []*Loop
	seen := map[string]bool{}
	for i, g := range variants {
		for _, l := range g.Loops {
			c := *l
			c.Rounds = make([][]string, len(l.Rounds))
			for r, ids := range l.Rounds {
				for _, id := range ids {
					c.Rounds[r] = append(c.Rounds[r], maps[i][id])
				}
			}
			sig := fmt.Sprint(c.Name, c.Rounds, c.Metric, c.Output, c.Path, c.Patience)
			if seen[sig] {
				continue
			}
			seen[sig] = true
			if c.Rounds[0][0] != l.Rounds[0][0] { // renamed: this variant's own copy
				c.Name = l.Name + "@" + labels[i]
			}
			out = append(out, &c)
		}
	}
	return out
}
