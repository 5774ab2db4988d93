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
	"repro/registry"
	"repro/store"
)

// PlanStatus says whether a node would run.
type PlanStatus int

const (
	PlanCached  PlanStatus = iota // its key is in the cache
	PlanRun                       // it would run
	PlanStopped                   // it would not run: its repeat block's `until` stops before its round
	PlanMirror                    // it would not run: its output is imported from the mirror (PlanOptions.Mirror)
)

func (s PlanStatus) String() string {
	switch s {
	case PlanCached:
		return "cached"
	case PlanStopped:
		return "not needed"
	case PlanMirror:
		return "mirror"
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
	ReasonMirror                            // (PlanMirror) the mirror in Name holds its output; Old: what it assumes of stages that run first
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
	case ReasonMirror:
		if r.Old != "" {
			return "in the mirror if " + r.Old + ": imported, not run"
		}
		return "in the mirror: imported, not run"
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
	// Reasons explains a PlanRun entry (and a PlanMirror one: ReasonMirror);
	// empty for PlanCached.
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
	// Mirror, when not nil, is what a run would consult on a cache miss:
	// a node whose key it holds (its archives present) is PlanMirror, and
	// so is a node whose key waits for a stage that will run when the
	// mirror holds a run of its type whose recorded inputs complete its
	// key (ReasonMirror says what it assumes those stages write).
	Mirror *store.Mirror
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
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if st == nil && po.Mirror == nil {
		var plan []PlanEntry
		for _, n := range g.Nodes {
			plan = append(plan, PlanEntry{ID: n.ID, Type: n.Type.Name, Status: PlanRun, Reasons: []Reason{{Kind: ReasonNeverRun}}})
		}
		return &PlanResult{Entries: plan, Loops: newLoopPlans(g.Loops).results()}, nil
	}
	last, err := lastRuns(ctx, st, po.Scope, po.Fallback)
	if err != nil {
		return nil, err
	}
	p := &planner{ctx: ctx, st: st, po: po, last: last, state: map[string]known{}, extPaths: map[string]string{}, loops: newLoopPlans(g.Loops)}
	var plan []PlanEntry
	for _, n := range g.Nodes {
		e, err := p.node(n)
		if err != nil {
			return nil, err
		}
		plan = append(plan, e)
	}
	return &PlanResult{Entries: plan, Loops: p.loops.results()}, nil
}

// lastRuns is each node's last run in scope, else in the first fallback
// scope that has one; none without a store.
func lastRuns(ctx context.Context, st *store.Store, scope string, fallback []string) (map[string]*store.LastRun, error) {
	last := map[string]*store.LastRun{}
	if st == nil {
		return last, nil
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
	return last, nil
}

// known is what the plan knows of a node it has decided.
type known struct {
	run     bool
	outputs map[string]string // port -> digest, when cached (or in the mirror)
	// assumes: what a mirror entry at or above this node takes the
	// outputs of stages that will run to be ("node\x00output" ->
	// digest); empty when the digests are certain.
	assumes map[string]string
}

// planner decides one node after another, in topological order.
type planner struct {
	ctx      context.Context
	st       *store.Store
	po       PlanOptions
	last     map[string]*store.LastRun
	state    map[string]known
	extPaths map[string]string // node ID + "\x00@name" -> path
	loops    loopPlans
}

// planInputs is what a node's inputs tell the plan.
type planInputs struct {
	digests     map[string]string
	upRuns      []Reason
	assumedRuns []Reason
	unknown     map[string]graph.Edge // input port -> its edge, whose stage will run
	undecided   bool                  // an input waits for a loop's decision
	assumes     map[string]string
	conflict    bool // two mirror entries above assume different outputs of one stage
}

func (p *planner) inputs(n *graph.Node) planInputs {
	in := planInputs{digests: map[string]string{}, unknown: map[string]graph.Edge{}, assumes: map[string]string{}}
	for _, port := range sortedPorts(n.Inputs) {
		edge, why := p.loops.edge(n.ID, n.Inputs[port])
		if why != nil {
			in.upRuns = append(in.upRuns, *why)
			in.undecided = true
			continue
		}
		up := p.state[edge.Node]
		if up.run {
			in.upRuns = append(in.upRuns, Reason{Kind: ReasonInputRuns, Name: port, New: edge.Node})
			in.unknown[port] = edge
			continue
		}
		in.digests[port] = up.outputs[edge.Output]
		for _, k := range slices.Sorted(maps.Keys(up.assumes)) {
			if d, ok := in.assumes[k]; ok && d != up.assumes[k] {
				in.conflict = true
			}
			in.assumes[k] = up.assumes[k]
			root, _, _ := strings.Cut(k, "\x00")
			in.assumedRuns = append(in.assumedRuns, Reason{Kind: ReasonInputRuns, Name: port, New: root})
		}
	}
	return in
}

// node decides n: stopped by its loop, run, cached, or in the mirror.
func (p *planner) node(n *graph.Node) (PlanEntry, error) {
	po := p.po
	e := PlanEntry{ID: n.ID, Type: n.Type.Name}
	if why, stopped := p.loops.gate(n.ID); stopped {
		e.Status, e.Reasons = PlanStopped, []Reason{why}
		p.state[n.ID] = known{run: true} // nothing downstream outside its loop reads it
		return e, nil
	} else if why.Kind == ReasonUntil {
		e.Reasons = append(e.Reasons, why)
	}
	params, err := graph.CanonicalParams(n.Params)
	if err != nil {
		return e, err
	}
	in := p.inputs(n)
	digests, upRuns := in.digests, in.upRuns
	if p.st == nil && readsExternals(n) {
		// No cache to hash its files with (plan creates none): its
		// key is not known.
		e.Status, e.Reasons = PlanRun, []Reason{{Kind: ReasonNeverRun}}
		p.state[n.ID] = known{run: true}
		return e, nil
	}
	if p.st != nil {
		ext, err := externals(p.ctx, p.st, n)
		if err != nil {
			e.Status = PlanRun
			e.Reasons = []Reason{{Kind: ReasonExternalError, Name: n.ID, New: err.Error()}}
			p.state[n.ID] = known{run: true}
			return e, nil
		}
		for name, a := range ext {
			digests[name] = a.Digest
			p.extPaths[n.ID+"\x00"+name] = a.Output
		}
	}
	lr := p.last[n.ID]
	if len(upRuns) > 0 && !in.undecided && !in.conflict {
		if mr, assumed := mirrorGuess(po, n, params, digests, in.unknown, in.assumes); mr != nil {
			e.Status, e.Key = PlanMirror, mr.Key
			e.Reasons = append(e.Reasons, mirrorReason(po.Mirror, assumed))
			p.state[n.ID] = known{outputs: mirrorOutputs(mr), assumes: assumed}
			return e, nil
		}
	}
	if len(upRuns) == 0 && len(in.assumes) > 0 {
		// The inputs are what mirror entries above assume of a stage
		// that runs first: in the mirror under that assumption, or
		// waiting for that stage.
		key := graph.KeyOf(n, params, digests, po.Backend)
		if mr := po.Mirror.Lookup(key); mr != nil && !in.conflict && po.Mirror.Present(mr) {
			e.Status, e.Key = PlanMirror, key
			e.Reasons = append(e.Reasons, mirrorReason(po.Mirror, in.assumes))
			p.state[n.ID] = known{outputs: mirrorOutputs(mr), assumes: in.assumes}
			return e, nil
		}
		upRuns = dedupeReasons(in.assumedRuns)
	}
	if len(upRuns) > 0 {
		e.Status = PlanRun
		e.Reasons = append(append(e.Reasons, explain(n, params, nil, lr)...), upRuns...)
		if lr == nil {
			e.Reasons = append([]Reason{{Kind: ReasonNeverRun}}, untilReasons(e.Reasons)...)
		}
		p.state[n.ID] = known{run: true}
		return e, nil
	}
	return p.decided(n, e, params, digests, lr)
}

// decided plans a node whose inputs are all known: cached, in the mirror,
// or to run, with the reasons.
func (p *planner) decided(n *graph.Node, e PlanEntry, params []byte, digests map[string]string, lr *store.LastRun) (PlanEntry, error) {
	po := p.po
	e.Key = graph.KeyOf(n, params, digests, po.Backend)
	var outs map[string]registry.Artifact
	if p.st != nil {
		var err error
		if outs, err = p.st.Outputs(p.ctx, e.Key); err != nil {
			return e, err
		}
	}
	if outs != nil && objectsPresent(outs) {
		e.Status, e.Reasons = PlanCached, nil
		m := map[string]string{}
		for port, a := range outs {
			m[port] = a.Digest
		}
		p.state[n.ID] = known{outputs: m}
		p.loops.cached(n.ID, outs)
		return e, nil
	}
	if mr := po.Mirror.Lookup(e.Key); mr != nil && po.Mirror.Present(mr) {
		e.Status = PlanMirror
		e.Reasons = append(e.Reasons, mirrorReason(po.Mirror, nil))
		p.state[n.ID] = known{outputs: mirrorOutputs(mr)}
		return e, nil
	}
	e.Status = PlanRun
	e.Reasons = append(e.Reasons, explain(n, params, digests, lr)...)
	for i, r := range e.Reasons {
		if r.Kind == ReasonExternalChanged {
			e.Reasons[i].New = p.extPaths[n.ID+"\x00"+externalPrefix+r.Name]
		}
	}
	if len(e.Reasons) == 0 {
		e.Reasons = []Reason{backendReason(n, params, digests, lr, po.Backend)}
	}
	p.state[n.ID] = known{run: true}
	return e, nil
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

// mirrorGuess finds the mirrored run of n's type whose recorded inputs,
// put in for the inputs whose stages will run (unknown), give its key: what
// a run imports if those stages write what they wrote when the mirror was
// recorded (deterministic stages do). It returns the run and everything
// assumed so far, or nil.
func mirrorGuess(po PlanOptions, n *graph.Node, params []byte, digests map[string]string, unknown map[string]graph.Edge, assumes map[string]string) (*store.MirrorRun, map[string]string) {
	if po.Mirror == nil || len(unknown) == 0 {
		return nil, nil
	}
	for _, mr := range po.Mirror.Runs(n.Type.Name, n.Type.Version) {
		d, a := maps.Clone(digests), maps.Clone(assumes)
		ok := true
		for port, edge := range unknown {
			v, has := mr.Inputs[port]
			k := edge.Node + "\x00" + edge.Output
			if old, had := a[k]; !has || (had && old != v) {
				ok = false
				break
			}
			d[port], a[k] = v, v
		}
		if ok && graph.KeyOf(n, params, d, po.Backend) == mr.Key && po.Mirror.Present(mr) {
			return mr, a
		}
	}
	return nil, nil
}

func mirrorOutputs(mr *store.MirrorRun) map[string]string {
	m := map[string]string{}
	for _, o := range mr.Outputs {
		m[o.Port] = o.Digest
	}
	return m
}

// mirrorReason is a PlanMirror entry's reason: the mirror, and what it
// assumes of the stages that will run first ("module.t5.corpus's sentences
// come out as recorded (a78a7ac682bb)").
func mirrorReason(m *store.Mirror, assumes map[string]string) Reason {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(assumes)) {
		node, out, _ := strings.Cut(k, "\x00")
		parts = append(parts, fmt.Sprintf("%s writes %s as recorded (%s)", node, out, short(assumes[k])))
	}
	return Reason{Kind: ReasonMirror, Name: m.Dir(), Old: strings.Join(parts, " and ")}
}

func dedupeReasons(rs []Reason) []Reason {
	var out []Reason
	seen := map[Reason]bool{}
	for _, r := range rs {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// readsExternals reports whether n's stage reads files outside the store
// (or cannot say), which only a cache can hash for its key.
func readsExternals(n *graph.Node) bool {
	if n.Type.Externals == nil {
		return false
	}
	params, err := n.Type.DecodeParams(n.Params)
	if err != nil {
		return true
	}
	exts, err := n.Type.Externals(params)
	return err != nil || len(exts) > 0
}
