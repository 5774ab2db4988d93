package runner

import (
	"context"
	"fmt"

	"repro/graph"
	"repro/registry"
)

// Rounds that stop when a metric stops improving (graph.Loop, the dsl's
// `until`) are decided while the graph runs. Every round's nodes are in the
// graph; a node of round r > 1 waits for the decision after round r-1 and,
// when the loop has stopped, does not run (StatusStopped: not a failure, and
// nothing is recorded for it). A node outside the loop that reads its last
// round waits for the loop's selection and reads the selected (best) round
// instead. Keys need nothing special: they hash input digests, so the
// reader of a loop's result gets the selected round's.

// LoopResult is how a loop ended in a Run.
type LoopResult struct {
	loop *graph.Loop
	Name string
	Rule string // graph.Loop.Describe
	graph.Decision
	// Err is why the loop could not decide (a round's metric stage failed
	// or wrote no such metric); its later rounds and readers were skipped.
	Err error
}

// loopRun is one loop during a Run. after[r-1] closes once the decision
// after round r is to go on; done closes once the selection is final (or the
// loop failed), and the after channels of the rounds it did not reach never
// close.
type loopRun struct {
	loop  *graph.Loop
	after []chan struct{}
	done  chan struct{}
	dec   graph.Decision // final once done is closed
	err   error
}

// startLoops starts one decider per loop of the run. Each waits for its
// rounds' metric nodes in turn; their done channels always close, so a
// decider always finishes.
func (s *scheduler) startLoops(loops []*graph.Loop) {
	for _, l := range loops {
		lr := newLoopRun(l)
		s.loops = append(s.loops, lr)
		go s.decide(lr)
	}
}

func newLoopRun(l *graph.Loop) *loopRun {
	lr := &loopRun{loop: l, done: make(chan struct{})}
	for range l.Rounds {
		lr.after = append(lr.after, make(chan struct{}))
	}
	return lr
}

func (s *scheduler) decide(lr *loopRun) {
	l := lr.loop
	var values []float64
	finish := func(d graph.Decision, err error) {
		lr.settle(d, err)
		ev := Event{Kind: EventDecided, Node: l.Name, Status: d.String()}
		if err != nil {
			ev.Err = err
			ev.Status = fmt.Sprintf("could not decide: %v", err)
		}
		s.em.emit(ev)
	}
	for r := 1; r <= len(l.Rounds); r++ {
		ns := s.states[l.MetricNode(r)]
		<-ns.done
		if ns.res.Status != StatusCached && ns.res.Status != StatusRan {
			finish(graph.Decision{Values: values}, fmt.Errorf("round %d's metric stage %s %s", r, ns.res.ID, ns.res.Status))
			return
		}
		a, ok := ns.res.Outputs[l.Output]
		if !ok {
			finish(graph.Decision{Values: values}, fmt.Errorf("round %d's metric stage %s stored no output %q", r, ns.res.ID, l.Output))
			return
		}
		v, err := registry.MetricAt(a, l.Path)
		if err != nil {
			finish(graph.Decision{Values: values}, fmt.Errorf("round %d: %v", r, err))
			return
		}
		values = append(values, v)
		d := l.Decide(values)
		if d.Stopped {
			finish(d, nil)
			return
		}
		lr.dec = d
		close(lr.after[r-1])
	}
}

// settle makes the loop's outcome final by closing done alone: the rounds'
// channels still open stay open, so a node of a round the loop stopped
// before can only wake on done, and always sees the decision. (Closing them
// too, as this once did, let such a node wake between those closes and
// done's, find done open and run -- to be skipped for its stopped input
// instead of marked stopped: CI's TestClusterLoop, 2026-11-24.)
func (lr *loopRun) settle(d graph.Decision, err error) {
	lr.dec, lr.err = d, err
	close(lr.done)
}

func (s *scheduler) loopOf(id string) (*loopRun, int, int) {
	for _, lr := range s.loops {
		if r, i, ok := lr.loop.Locate(id); ok {
			return lr, r, i
		}
	}
	return nil, 0, 0
}

// gate makes a node of round r > 1 of a loop wait for the decision after
// round r-1. It reports false when the node must not run: the loop stopped
// before its round (the node is marked stopped) or could not decide (the
// node is skipped).
func (s *scheduler) gate(ctx context.Context, ns *nodeState) bool {
	lr, r, _ := s.loopOf(ns.node.ID)
	if lr == nil || r < 2 {
		return true
	}
	select {
	case <-lr.after[r-2]:
	case <-lr.done:
	case <-ctx.Done():
		s.skip(ns, ctx.Err())
		return false
	}
	select {
	case <-lr.done:
		switch {
		case lr.err != nil:
			s.skip(ns, fmt.Errorf("repeat %s: %v", lr.loop.Name, lr.err))
			return false
		case len(lr.dec.Values) < r:
			ns.res.Status = StatusStopped
			ns.res.Err = fmt.Errorf("not needed: repeat %s stopped after round %d (%s); selected round %d",
				lr.loop.Name, len(lr.dec.Values), lr.dec.Reason, lr.dec.Best)
			s.em.emit(Event{Kind: EventStopped, Node: ns.res.ID, Type: ns.res.Type, Err: ns.res.Err})
			return false
		}
	default:
	}
	return true
}

// edge resolves an input of node n: an edge from outside a loop into its
// last round waits for the loop's selection and reads the selected round.
func (s *scheduler) edge(ctx context.Context, n *graph.Node, e graph.Edge) (graph.Edge, error) {
	lr, r, _ := s.loopOf(e.Node)
	if lr == nil || r != len(lr.loop.Rounds) {
		return e, nil
	}
	if own, _, _ := s.loopOf(n.ID); own == lr {
		return e, nil
	}
	select {
	case <-lr.done:
	case <-ctx.Done():
		return e, ctx.Err()
	}
	if lr.err != nil {
		return e, fmt.Errorf("repeat %s: %v", lr.loop.Name, lr.err)
	}
	e.Node = lr.loop.Selected(e.Node, lr.dec.Best)
	return e, nil
}

// loopResults reports every loop of the run once the run is over.
func (s *scheduler) loopResults() []LoopResult {
	var out []LoopResult
	for _, lr := range s.loops {
		<-lr.done
		out = append(out, LoopResult{loop: lr.loop, Name: lr.loop.Name, Rule: lr.loop.Describe(), Decision: lr.dec, Err: lr.err})
	}
	return out
}

// Resolve maps a node of a loop's last round to the node of the round the
// loop selected (what `repeat.R.last` means once the loop has stopped);
// other IDs come back unchanged. Reports read values through it.
func (r *Result) Resolve(id string) string {
	for _, l := range r.Loops {
		if l.loop != nil && l.Err == nil && l.Stopped {
			id = l.loop.Selected(id, l.Best)
		}
	}
	return id
}
