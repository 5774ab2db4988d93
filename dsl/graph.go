package dsl

import (
	"sort"
	"strings"
)

// toposort orders the stage instances so that every input refers to an
// earlier stage. Among stages that are ready together, file order wins
// (Kahn's algorithm always taking the earliest ready instance), so the
// order is stable under edits that do not touch the edges. Instances left
// over sit on or behind a cycle; each cycle is reported once, at the
// reference that closes it.
func (e *evaluator) toposort() []*Stage {
	n := len(e.stages)
	indeg := make([]int, n)
	users := make([][]int, n)
	for i, s := range e.stages {
		for _, in := range sortedInputs(s) {
			j, ok := e.stageIdx[s.Inputs[in].Stage]
			if !ok {
				continue
			}
			indeg[i]++
			users[j] = append(users[j], i)
		}
	}
	done := make([]bool, n)
	var order []*Stage
	for {
		next := -1
		for i := 0; i < n; i++ {
			if !done[i] && indeg[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 {
			break
		}
		done[next] = true
		order = append(order, e.stages[next])
		for _, u := range users[next] {
			indeg[u]--
		}
	}
	if len(order) < n {
		e.cycles(done)
	}
	return order
}

func sortedInputs(s *Stage) []string {
	ins := make([]string, 0, len(s.Inputs))
	for k := range s.Inputs {
		ins = append(ins, k)
	}
	sort.Strings(ins)
	return ins
}

// cycles runs a depth-first search over the instances Kahn's algorithm could
// not order and reports each back edge's cycle.
func (e *evaluator) cycles(ordered []bool) {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(e.stages))
	var stack []int
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		stack = append(stack, i)
		s := e.stages[i]
		for _, in := range sortedInputs(s) {
			ref := s.Inputs[in]
			j, ok := e.stageIdx[ref.Stage]
			if !ok || ordered[j] {
				continue
			}
			switch color[j] {
			case white:
				visit(j)
			case grey:
				// The cycle runs from j down the stack to i, then back to j.
				var path []string
				for k := len(stack) - 1; k >= 0; k-- {
					path = append(path, e.stages[stack[k]].Name)
					if stack[k] == j {
						break
					}
				}
				// Down the stack each instance feeds the one above it, so
				// path is already in data-flow order.
				path = append(path, path[0])
				e.errorf(ref.Range, "Dependency cycle",
					"The stages depend on each other in a loop: %s (each feeds the next).", strings.Join(path, " -> "))
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
	}
	for i := range e.stages {
		if !ordered[i] && color[i] == white {
			visit(i)
		}
	}
}
