package slurm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"repro/runner/remote"
	"repro/store"
)

// adopt takes over what earlier coordinators of the cache left in
// slurm/<run>/ (they crashed, were killed, or stopped while jobs were
// still ending): every job's spec is read back and matched to the queue
// (by the job ID it wrote, else by the job's comment, repro:<run>/<sub>).
// A job that finished has its run recorded in the index and its journal
// merged now, so the plan finds it cached; a job still queued or running
// is kept for this run, which claims it for the node with the same
// identity instead of submitting that stage again. Nothing is lost and
// nothing runs twice.
func (e *Executor) adopt(ctx context.Context, q map[string]queued) error {
	root := filepath.Join(e.st.Dir(), stateDir)
	ents, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	byComment := map[string]string{}
	for id, j := range q {
		if strings.HasPrefix(j.Comment, "repro:") {
			base, _, _ := strings.Cut(id, "_")
			byComment[j.Comment] = base
		}
	}
	var adopted []*handle
	dirs := map[string][]*handle{}
	for _, ent := range ents {
		if !ent.IsDir() || ent.Name() == e.runID {
			continue
		}
		dir := filepath.Join(root, ent.Name())
		e.Adopted.Dirs++
		specs, _ := filepath.Glob(filepath.Join(dir, "*.spec.json"))
		dirs[dir] = nil
		for _, sp := range specs {
			spec, err := remote.ReadSpec(sp)
			if err != nil {
				continue
			}
			stem := strings.TrimSuffix(filepath.Base(sp), ".spec.json")
			sub, task, isTask := strings.Cut(stem, ".")
			id := ""
			if b, err := os.ReadFile(filepath.Join(dir, sub+".jobid")); err == nil {
				id = strings.TrimSpace(string(b))
			} else {
				id = byComment["repro:"+ent.Name()+"/"+sub]
			}
			if id != "" && isTask {
				id += "_" + task
			}
			h := &handle{id: id, node: spec.Node, identity: spec.Identity, dir: dir, stem: stem, spec: spec,
				adopted: true, ahead: spec.Key == "", notify: make(chan struct{})}
			if id == "" {
				// The coordinator stopped between writing the spec and
				// submitting it.
				h.final, h.failure = true, "never submitted"
			}
			adopted = append(adopted, h)
			dirs[dir] = append(dirs[dir], h)
		}
	}
	now := time.Now()
	for _, h := range adopted {
		if h.final {
			continue
		}
		e.observe(ctx, h, q, nil, now)
		if h.final {
			continue
		}
		switch fi, err := os.Stat(h.path(".spec.json")); {
		case !h.inQueue && err == nil && now.Sub(fi.ModTime()) > e.cfg.Grace:
			// Neither the queue nor the controller knows it, it left no
			// outcome, and it was submitted long ago: no grace to wait.
			h.final, h.failure = true, "Slurm no longer knows the job, and it left no outcome"
		case h.inQueue && terminal(h.q.State) && h.q.State != "COMPLETED" && h.q.State != "PREEMPTED":
			// Failed or cancelled while nobody watched: a new job will
			// run the stage if this run needs it.
			h.final, h.failure = true, "the job ended without an outcome"
		}
	}
	e.mu.Lock()
	e.handles = append(e.handles, adopted...)
	e.mu.Unlock()
	for dir, hs := range dirs {
		live := false
		for _, h := range hs {
			if !h.final {
				live = true
				e.adoptable[h.identity] = append(e.adoptable[h.identity], h)
				e.Adopted.Live++
				continue
			}
			rec := h.out != nil && h.out.OK()
			if err := e.settle(ctx, h); err != nil {
				return fmt.Errorf("adopting slurm job %s (%s): %w", h.id, h.node, err)
			}
			if rec {
				e.Adopted.Recorded++
			}
		}
		if !live {
			store.RemoveAll(dir)
		}
	}
	return nil
}
