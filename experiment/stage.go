package experiment

import (
	"context"
	"io"

	"repro/registry"
	"repro/runner/remote"
)

// ExecStage is a cluster job's side of a stage run (`repro stage-exec`):
// it runs the stage the job spec at specPath declares, with the tensor
// backend bound to its device as in a local run, and writes the job's
// outcome (package runner/remote). job is the scheduler's job ID; log
// receives the job's messages and a copy of the stage's log.
func ExecStage(ctx context.Context, reg *registry.Registry, specPath, job string, log io.Writer) error {
	return remote.Exec(ctx, reg, specPath, job, log, bindDevice)
}
