package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"repro/graph"
	"repro/store"
)

// PlanStatus says whether a node would run.
type PlanStatus int

const (
	PlanCached  PlanStatus = iota // its key is in the cache
	PlanRun                       // it would run
	PlanStopped                   // it would not run: its repeat block's `until` stops before its round
)

func (s PlanStatus) String() string {
	switch s {
	case PlanCached:
		return "cached"
	case PlanStopped:
		return "not needed"
	}
	return "will run"
}

// ReasonKind classifies why a node would run.
type ReasonKind int

const (
	ReasonNeverRun        ReasonKind = iota // no run of this node is recorded for the scope
	ReasonTypeChanged                       // the node now uses another stage type
	ReasonVersionChanged                    // the stage type's version changed
	ReasonParamChanged                      // a parameter changed (Name, Old, New: JSON values; "" = absent)
	ReasonSeedChanged                       // a Seeded type's seed changed
	ReasonInputRuns                         // input Name comes from a stage that will run first
	ReasonInputChanged                      // input Name's artifact differs from the last run's
	ReasonInputAdded                        // input Name is newly connected
	ReasonInputRemoved                      // input Name is no longer connected
	ReasonMissing                           // same key as the last run, but its result is no longer in the cache (gc?)
	ReasonExternalChanged                   // the file or directory Name (New: its path) reads differently
	ReasonExternalError                     // the file or directory Name cannot be read (New: why)
	ReasonUntil                             // Name: a repeat block with `until`; New: what of its decision the node waits for
	ReasonBackendChanged                    // a tensor stage last ran on backend Old, the run declares New
)

// Reason is one cause of a node being stale.
type Reason struct {
	Kind     ReasonKind
	Name     string // parameter or input port
	Old, New string
}

func (r Reason) String() string {
	switch r.Kind {
	case ReasonNeverRun:
		return "never run"
	case ReasonTypeChanged:
		return fmt.Sprintf("stage type changed (%s -> %s)", r.Old, r.New)
	case ReasonVersionChanged:
		return fmt.Sprintf("stage version changed (%s -> %s)", r.Old, r.New)
	case ReasonParamChanged:
		return fmt.Sprintf("parameter %s changed (%s -> %s)", r.Name, orAbsent(r.Old), orAbsent(r.New))
	case ReasonSeedChanged:
		return fmt.Sprintf("seed changed (%s -> %s)", r.Old, r.New)
	case ReasonInputRuns:
		return fmt.Sprintf("input %s changed (upstream %s will run)", r.Name, r.New)
	case ReasonInputChanged:
		return fmt.Sprintf("input %s changed (%s -> %s)", r.Name, short(r.Old), short(r.New))
	case ReasonInputAdded:
		return fmt.Sprintf("input %s added (%s)", r.Name, r.New)
	case ReasonInputRemoved:
		return fmt.Sprintf("input %s removed (was %s)", r.Name, r.Old)
	case ReasonMissing:
		return "result no longer in the cache"
	case ReasonExternalChanged:
		return fmt.Sprintf("file %s (%s) changed (%s -> %s)", r.New, r.Name, short(r.Old), "new content")
	case ReasonExternalError:
		return fmt.Sprintf("%s: %s", r.Name, r.New)
	case ReasonUntil:
		return fmt.Sprintf("repeat %s: %s", r.Name, r.New)
	case ReasonBackendChanged:
		return fmt.Sprintf("backend changed %s -> %s", r.Old, r.New)
	}
	return "unknown reason"
}

func orAbsent(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

// PlanEntry is what Plan says about one node.
type PlanEntry struct {
	ID     string
	Type   string
	Key    string // "" when an input's stage will run first (its digest is not known yet)
	Status PlanStatus
	// Reasons explains a PlanRun entry; empty for PlanCached.
	Reasons []Reason
	// Cost, set by PlanCosts on a PlanRun entry whose stage type
	// estimates its arithmetic, is that estimate; nil otherwise.
	Cost *CostEstimate
}

// Plan says, without running anything, which nodes of g are cached and why
// each other node would run, comparing with the scope's last-run records;
// a node the scope has no record of is compared with the first of the
// fallback scopes that has one (a --set variant never run before is
// explained against its profile: "parameter top_k changed (3 -> 4)"). A nil
// store is an empty cache: everything would run, never having run.
// A node whose inputs are all cached has a key; a node downstream of one
// that will run has none (early cut-off may still leave it cached once its
// input is computed, so Plan says "will run" with the upstream as reason).
// PlanOptions say whose records explain staleness and how keys are made.
type PlanOptions struct {
	Scope    string
	Fallback []string // scopes that explain nodes Scope has no record of
	Backend  string   // the run's tensor backend family (default cpu)
}

func Plan(ctx context.Context, st *store.Store, g *graph.Graph, po PlanOptions) ([]PlanEntry, error) {
	p, err := PlanDetailed(ctx, st, g, po)
	if err != nil {
		return nil, err
	}
	return p.Entries, nil
}

// PlanResult is Plan's entries and, for each repeat block with `until`,
// where its decision stands given what is cached.
type PlanResult struct {
	Entries []PlanEntry
	Loops   []LoopPlan
}

// PlanDetailed is Plan with the loops' decisions.
func PlanDetailed(ctx context.Context, st *store.Store, g *graph.Graph, po PlanOptions) (*PlanResult, error) {
	scope, fallback := po.Scope, po.Fallback
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if st == nil {
		var plan []PlanEntry
		for _, n := range g.Nodes {
			plan = append(plan, PlanEntry{ID: n.ID, Type: n.Type.Name, Status: PlanRun, Reasons: []Reason{{Kind: ReasonNeverRun}}})
		}
		return &PlanResult{Entries: plan, Loops: newLoopPlans(g.Loops).results()}, nil
	}
	last, err := st.LastRuns(ctx, scope)
	if err != nil {
		return nil, err
	}
	for _, fb := range fallback {
		more, err := st.LastRuns(ctx, fb)
		if err != nil {
			return nil, err
		}
		for id, r := range more {
			if _, ok := last[id]; !ok {
				last[id] = r
			}
		}
	}
	type known struct {
		run     bool
		outputs map[string]string // port -> digest, when cached
	}
	state := map[string]known{}
	extPaths := map[string]string{} // node ID + "\x00@name" -> path
	var plan []PlanEntry
	loops := newLoopPlans(g.Loops)
	for _, n := range g.Nodes {
		e := PlanEntry{ID: n.ID, Type: n.Type.Name}
		if why, stopped := loops.gate(n.ID); stopped {
			e.Status, e.Reasons = PlanStopped, []Reason{why}
			state[n.ID] = known{run: true} // nothing downstream outside its loop reads it
			plan = append(plan, e)
			continue
		} else if why.Kind == ReasonUntil {
			e.Reasons = append(e.Reasons, why)
		}
		params, err := graph.CanonicalParams(n.Params)
		if err != nil {
			return nil, err
		}
		digests := map[string]string{}
		var upRuns []Reason
		for _, port := range sortedPorts(n.Inputs) {
			in, why := loops.edge(n.ID, n.Inputs[port])
			if why != nil {
				upRuns = append(upRuns, *why)
				continue
			}
			up := state[in.Node]
			if up.run {
				upRuns = append(upRuns, Reason{Kind: ReasonInputRuns, Name: port, New: in.Node})
				continue
			}
			digests[port] = up.outputs[in.Output]
		}
		if st != nil {
			ext, err := externals(ctx, st, n)
			if err != nil {
				e.Status = PlanRun
				e.Reasons = []Reason{{Kind: ReasonExternalError, Name: n.ID, New: err.Error()}}
				state[n.ID] = known{run: true}
				plan = append(plan, e)
				continue
			}
			for name, in := range ext {
				digests[name] = in.Digest
				extPaths[n.ID+"\x00"+name] = in.Output
			}
		}
		lr := last[n.ID]
		if len(upRuns) > 0 {
			e.Status = PlanRun
			e.Reasons = append(append(e.Reasons, explain(n, params, nil, lr)...), upRuns...)
			if lr == nil {
				e.Reasons = append([]Reason{{Kind: ReasonNeverRun}}, untilReasons(e.Reasons)...)
			}
			state[n.ID] = known{run: true}
			plan = append(plan, e)
			continue
		}
		e.Key = graph.KeyOf(n, params, digests, po.Backend)
		outs, err := st.Outputs(ctx, e.Key)
		if err != nil {
			return nil, err
		}
		if outs != nil && objectsPresent(outs) {
			e.Status, e.Reasons = PlanCached, nil
			m := map[string]string{}
			for p, a := range outs {
				m[p] = a.Digest
			}
			state[n.ID] = known{outputs: m}
			loops.cached(n.ID, outs)
			plan = append(plan, e)
			continue
		}
		e.Status = PlanRun
		e.Reasons = append(e.Reasons, explain(n, params, digests, lr)...)
		for i, r := range e.Reasons {
			if r.Kind == ReasonExternalChanged {
				e.Reasons[i].New = extPaths[n.ID+"\x00"+externalPrefix+r.Name]
			}
		}
		if len(e.Reasons) == 0 {
			e.Reasons = []Reason{backendReason(n, params, digests, lr, po.Backend)}
		}
		state[n.ID] = known{run: true}
		plan = append(plan, e)
	}
	return &PlanResult{Entries: plan, Loops: loops.results()}, nil
}

// backendReason explains a node whose parameters, seed and inputs are
// those of its last run but whose key is not: for a tensor stage last run
// under another backend family, "backend changed cpu -> cuda" (its key
// under that family is the recorded one); otherwise the result was removed
// from the cache.
func backendReason(n *graph.Node, params []byte, digests map[string]string, lr *store.LastRun, backend string) Reason {
	if backend == "" {
		backend = "cpu"
	}
	if lr != nil && n.Type.Tensor {
		for _, b := range graph.Backends {
			if b != backend && graph.KeyOf(n, params, digests, b) == lr.Key {
				return Reason{Kind: ReasonBackendChanged, Old: b, New: backend}
			}
		}
	}
	return Reason{Kind: ReasonMissing}
}

// explain compares a node with its last-run record. digests holds the
// inputs whose digests are known; nil means compare no input digests.
func explain(n *graph.Node, params []byte, digests map[string]string, lr *store.LastRun) []Reason {
	if lr == nil {
		return []Reason{{Kind: ReasonNeverRun}}
	}
	var rs []Reason
	if lr.Type != n.Type.Name {
		return []Reason{{Kind: ReasonTypeChanged, Old: lr.Type, New: n.Type.Name}}
	}
	if lr.Version != n.Type.Version {
		rs = append(rs, Reason{Kind: ReasonVersionChanged, Old: fmt.Sprint(lr.Version), New: fmt.Sprint(n.Type.Version)})
	}
	rs = append(rs, diffParams(lr.Params, params)...)
	if n.Type.Seeded && (!lr.Seeded || lr.Seed != n.Seed) {
		old := fmt.Sprint(lr.Seed)
		if !lr.Seeded {
			old = "none"
		}
		rs = append(rs, Reason{Kind: ReasonSeedChanged, Old: old, New: fmt.Sprint(n.Seed)})
	}
	for _, port := range sortedPorts(n.Inputs) {
		old, had := lr.Inputs[port]
		in := n.Inputs[port]
		switch {
		case !had:
			rs = append(rs, Reason{Kind: ReasonInputAdded, Name: port, New: in.Node + "." + in.Output})
		case digests != nil:
			if d, ok := digests[port]; ok && d != old.Digest {
				rs = append(rs, Reason{Kind: ReasonInputChanged, Name: port, Old: old.Digest, New: d})
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(digests)) {
		if !strings.HasPrefix(name, externalPrefix) {
			continue
		}
		if old, had := lr.Inputs[name]; had && old.Digest != digests[name] {
			rs = append(rs, Reason{Kind: ReasonExternalChanged, Name: strings.TrimPrefix(name, externalPrefix), Old: old.Digest})
		}
	}
	var removed []string
	for port := range lr.Inputs {
		if _, ok := n.Inputs[port]; !ok && !strings.HasPrefix(port, externalPrefix) {
			removed = append(removed, port)
		}
	}
	sort.Strings(removed)
	for _, port := range removed {
		old := lr.Inputs[port]
		rs = append(rs, Reason{Kind: ReasonInputRemoved, Name: port, Old: old.Node + "." + old.Output})
	}
	return rs
}

// diffParams lists the top-level parameters whose canonical JSON differs,
// sorted by name, with their old and new JSON values.
func diffParams(oldJSON, newJSON []byte) []Reason {
	var o, n map[string]json.RawMessage
	if json.Unmarshal(oldJSON, &o) != nil || json.Unmarshal(newJSON, &n) != nil {
		if !bytes.Equal(oldJSON, newJSON) {
			return []Reason{{Kind: ReasonParamChanged, Name: "(all)", Old: string(oldJSON), New: string(newJSON)}}
		}
		return nil
	}
	names := map[string]bool{}
	for k := range o {
		names[k] = true
	}
	for k := range n {
		names[k] = true
	}
	var sorted []string
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var rs []Reason
	for _, k := range sorted {
		if !bytes.Equal(o[k], n[k]) {
			rs = append(rs, Reason{Kind: ReasonParamChanged, Name: k, Old: string(o[k]), New: string(n[k])})
		}
	}
	return rs
}
