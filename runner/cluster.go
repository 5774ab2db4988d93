package runner

import (
	"context"

	"repro/graph"
)

// Cluster is an Executor whose stages run as jobs of a batch scheduler
// (Slurm) on other machines. The scheduler treats it differently in three
// ways:
//
//   - Before each pass it calls Start with the pass's graph and plan, so
//     that the executor can submit every stage that will run at once, each
//     job depending on its inputs' jobs (Slurm's afterok), instead of one
//     job per stage as inputs finish: a chain of stages then flows through
//     the cluster's queue without a round trip to this process between
//     them. Execute later claims the job submitted for its node (or submits
//     one, if none was or it can no longer run).
//   - It calls Release for every node once the scheduler is done with it in
//     the pass -- executed, cached, failed or skipped -- so a job submitted
//     ahead for a node that turned out cached (an upstream stage re-ran and
//     wrote the same bytes) or whose input failed is cancelled; Stop ends
//     the pass and cancels whatever is left.
//   - Its stages take no local device or -j slots: the cluster's scheduler
//     places them. Outcome.Device and Outcome.Host say where they ran.
//
// The scheduler still computes every key, takes the key's lock, verifies
// inputs and is the only writer of the index.
type Cluster interface {
	Executor
	Start(ctx context.Context, pass *Pass) error
	Release(nodeID string)
	Stop()
}

// Pass is what one pass of Run will consider.
type Pass struct {
	Graph   *graph.Graph // the nodes of the run (narrowed to Options.Targets)
	Plan    []PlanEntry  // Plan of Graph (with its loops) against the store, in graph order
	Backend string       // the run's tensor backend family
	Scope   string
	Partial bool
}

// startCluster plans the pass and hands it to the cluster executor. The
// loops go with the nodes: a round that waits for its loop's decision is
// planned with a ReasonUntil reason, which the executor must not submit
// ahead.
func (s *scheduler) startCluster(ctx context.Context, c Cluster, nodes []*graph.Node, loops []*graph.Loop) error {
	g := &graph.Graph{Nodes: nodes, Loops: loops}
	plan, err := Plan(ctx, s.st, g, PlanOptions{Scope: s.opts.Scope, Backend: s.opts.Backend})
	if err != nil {
		return err
	}
	return c.Start(ctx, &Pass{Graph: g, Plan: plan, Backend: s.opts.Backend, Scope: s.opts.Scope, Partial: s.opts.Partial})
}
