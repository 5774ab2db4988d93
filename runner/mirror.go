package runner

import (
	"context"
	"fmt"
	"time"

	"repro/store"
)

// The mirror (store.Mirror) holds recorded runs published with the
// repository. On a cache miss, under the key's lock, the scheduler asks it
// for the node's key: the mirrored run is imported only when its key is
// the node's (so its type, version, parameters, seed, inputs and backend
// are the node's), its outputs are the type's ports with their kinds, and
// each output's bytes hash to the recorded digest (store.
// ImportMirrorObject); then the run is recorded as a run of this scope,
// with the mirror's provenance (duration, device, host, version), and the
// node is cached. Anything else -- a damaged archive above all -- is
// refused with an EventWarning, and the stage runs as if there were no
// mirror. Plan says "mirror" for such a node (see plan.go).

// MirrorStatus is the Event.Status of a node imported from the mirror.
const MirrorStatus = "mirror"

// fromMirror imports ns's outputs from the mirror when it holds ns's key;
// it reports whether ns is now complete (cached).
func (s *scheduler) fromMirror(ctx context.Context, ns *nodeState, lr *store.LastRun) bool {
	m := s.opts.Mirror
	n, r := ns.node, &ns.res
	mr := m.Lookup(r.Key)
	if mr == nil {
		return false
	}
	warn := func(format string, args ...any) bool {
		msg := fmt.Sprintf(format, args...) + "; the stage runs instead"
		r.Warnings = append(r.Warnings, msg)
		s.em.emit(Event{Kind: EventWarning, Node: n.ID, Type: n.Type.Name, Key: r.Key, Status: msg})
		return false
	}
	if mr.Type != n.Type.Name || mr.Version != n.Type.Version {
		return warn("mirror entry %s is %s v%d, the stage is %s v%d", r.Key[:12], mr.Type, mr.Version, n.Type.Name, n.Type.Version)
	}
	var outs []store.Output
	for _, p := range n.Type.Outputs {
		o, ok := mr.Output(p.Name)
		if !ok || o.Kind != string(p.Kind) {
			return warn("mirror entry %s has no %s output %q", r.Key[:12], p.Kind, p.Name)
		}
		size, err := s.st.ImportMirrorObject(m, r.Key, o)
		if err != nil {
			return warn("%v", err)
		}
		outs = append(outs, store.Output{Port: p.Name, Kind: o.Kind, Digest: o.Digest, Size: size})
	}
	rec := &store.Run{
		Key: r.Key, Type: n.Type.Name, NodeID: n.ID, Version: n.Type.Version,
		Params: lr.Params, Inputs: map[string]string{}, Seed: n.Seed, Seeded: n.Type.Seeded,
		Duration: secondsDuration(mr.Seconds), Device: mr.Device, Backend: mr.Backend, ReproVersion: mr.ReproVersion,
		Host: mr.Host, Partial: s.opts.Partial, Scope: s.opts.Scope, LastInputs: lr.Inputs, Outputs: outs,
	}
	for p, in := range lr.Inputs {
		rec.Inputs[p] = in.Digest
	}
	if err := s.st.Record(context.WithoutCancel(ctx), rec); err != nil {
		return warn("recording the mirrored run in %s: %v", s.st.Dir(), err)
	}
	outputs, err := s.st.Outputs(ctx, r.Key)
	if err != nil || outputs == nil {
		return warn("reading back the mirrored run: %v", err)
	}
	r.Status, r.Outputs, r.Mirror = StatusCached, outputs, true
	s.em.emit(Event{Kind: EventCached, Node: r.ID, Type: r.Type, Key: r.Key, Status: MirrorStatus, Outputs: outputDigests(outputs)})
	return true
}

func secondsDuration(s float64) time.Duration {
	return time.Duration(s * float64(time.Second))
}
