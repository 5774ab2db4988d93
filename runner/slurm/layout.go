package slurm

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"repro/graph"
	"repro/registry"
	"repro/runner"
)

// PlannedJob is one sbatch submission: one stage, or several stages of the
// same stage block that can start together (the cells of an ablation grid)
// as a job array, task i running Nodes[i].
type PlannedJob struct {
	N     int // 1-based number in the layout, for people ("#3")
	Nodes []*graph.Node
	// Needs is what each task asks for (graph.Node.Needs); GPUs is what
	// is actually asked for: Needs.GPUs when the run's backend can use a
	// GPU (cuda), else 0.
	Needs registry.Resources
	GPUs  int
	After []Dep
	// Adopted is the ID of a job still running from an earlier
	// coordinator that computes this node: it is not submitted again.
	Adopted string

	id string // the scheduler's job ID once submitted
}

// Dep is a dependency of a job on another: on the whole job (Task -1), on
// one task of an array, or task for task on an array of the same size
// (Corr: Slurm's aftercorr, so that each grid cell starts as soon as its
// own upstream cell is done).
type Dep struct {
	Job  *PlannedJob
	Task int
	Corr bool
}

// Array reports whether the job is a job array.
func (j *PlannedJob) Array() bool { return len(j.Nodes) > 1 }

// Name is the job's name in the queue: the stage's ID, or for an array the
// stage block's name and the number of cells.
func (j *PlannedJob) Name() string {
	if !j.Array() {
		return j.Nodes[0].ID
	}
	base, _, _ := strings.Cut(j.Nodes[0].ID, "@")
	return fmt.Sprintf("%s[%d]", base, len(j.Nodes))
}

// ref names the job (or one task of it) in a dependency: its scheduler
// ID once submitted, "#N" in a plan.
func (j *PlannedJob) ref(task int) string {
	id := j.id
	if j.Adopted != "" {
		id = j.Adopted
	}
	if id == "" {
		id = fmt.Sprintf("#%d", j.N)
	}
	if task >= 0 {
		id = fmt.Sprintf("%s_%d", id, task)
	}
	return id
}

// Dependency renders the job's dependencies as sbatch's --dependency value
// ("" for none): every listed job must have finished successfully.
func (j *PlannedJob) Dependency() string {
	var ok, corr []string
	for _, d := range j.After {
		if d.Corr {
			corr = append(corr, d.Job.ref(-1))
		} else {
			ok = append(ok, d.Job.ref(d.Task))
		}
	}
	var parts []string
	if len(ok) > 0 {
		parts = append(parts, "afterok:"+strings.Join(ok, ":"))
	}
	if len(corr) > 0 {
		parts = append(parts, "aftercorr:"+strings.Join(corr, ":"))
	}
	return strings.Join(parts, ",")
}

// ResourceArgs are the sbatch arguments of what each task asks for.
func (j *PlannedJob) ResourceArgs() []string {
	args := []string{fmt.Sprintf("--cpus-per-task=%d", max(j.Needs.CPUs, 1))}
	if j.GPUs > 0 {
		args = append(args, fmt.Sprintf("--gres=gpu:%d", j.GPUs))
	}
	if j.Needs.Memory != "" {
		if mb, err := registry.MemoryMB(j.Needs.Memory); err == nil {
			args = append(args, fmt.Sprintf("--mem=%dM", mb))
		}
	}
	if j.Needs.Time != "" {
		if d, err := time.ParseDuration(j.Needs.Time); err == nil {
			args = append(args, "--time="+Duration(d))
		}
	}
	if j.Array() {
		args = append(args, fmt.Sprintf("--array=0-%d", len(j.Nodes)-1))
	}
	return args
}

// Duration renders d as Slurm's time limit, days-hours:minutes:seconds,
// rounded up to the second.
func Duration(d time.Duration) string {
	s := int64(math.Ceil(d.Seconds()))
	days, s := s/86400, s%86400
	hms := fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
	if days > 0 {
		return fmt.Sprintf("%d-%s", days, hms)
	}
	return hms
}

// LayoutOptions are what Layout needs beyond the graph and plan.
type LayoutOptions struct {
	Backend string            // the run's tensor backend family
	Adopted map[string]string // node ID -> job ID of a job still running for it
	// MaxArray is the most tasks of one array (Slurm's MaxArraySize).
	MaxArray int
	// Later lists nodes that will run but are not to be submitted ahead
	// (a round whose running depends on a decision taken at run time):
	// neither they nor anything reading them is laid out; Execute submits
	// them when their inputs are stored.
	Later map[string]bool
}

// Deferred is what a pass must not submit ahead (LayoutOptions.Later):
// the nodes whose running is decided at run time. They are the rounds of a
// repeat block with `until` past those whose metrics are cached, and the
// readers of such a loop's result (runner.ReasonUntil: their input is the
// round the decision selects), and any node reading a round the decision
// already stopped (the runner gives it the selected round instead, which a
// job laid out now would not know of). Execute submits each when the
// runner reaches it; a round that is never reached is never submitted.
func Deferred(g *graph.Graph, plan []runner.PlanEntry) map[string]bool {
	stopped := map[string]bool{}
	for _, e := range plan {
		if e.Status == runner.PlanStopped {
			stopped[e.ID] = true
		}
	}
	out := map[string]bool{}
	willRun := map[string]bool{}
	for _, e := range plan {
		if e.Status != runner.PlanRun {
			continue
		}
		willRun[e.ID] = true
		for _, r := range e.Reasons {
			if r.Kind == runner.ReasonUntil {
				out[e.ID] = true
			}
		}
	}
	if len(stopped) == 0 {
		return out
	}
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			if willRun[n.ID] && stopped[in.Node] {
				out[n.ID] = true
			}
		}
	}
	return out
}

// Layout turns the nodes a pass will run into sbatch submissions, in an
// order in which every job comes after the jobs it depends on:
//
//   - a node whose inputs are all cached depends on nothing; a node
//     reading a node that will run depends on that node's job (afterok),
//     so the whole pass is submitted at once and the cluster starts each
//     stage as soon as its inputs are stored;
//   - nodes of one stage block (same source position and type) at the same
//     depth of the pass, asking for the same resources -- the cells of an
//     ablation grid -- go out as one job array; an array reading another
//     array task for task depends on it with aftercorr, so cell 3's
//     evaluation starts when cell 3's training is done, whatever the
//     others do;
//   - a node in adopted (node ID -> job ID) already has a job, from an
//     earlier coordinator, still queued or running: it is not submitted
//     again, and its dependants depend on that job.
//
// GPUs are asked for only when backend is cuda: a tensor stage of a run
// declared on the cpu or openblas backend computes on the CPU (its key
// says so), and a GPU it cannot use would only wait in the queue.
//
// An array holds at most o.MaxArray tasks (default 1000; Slurm's
// MaxArraySize): a larger grid is split into arrays of that size, which
// still pair up cell by cell.
func Layout(g *graph.Graph, plan []runner.PlanEntry, o LayoutOptions) []*PlannedJob {
	backend, adopted := o.Backend, o.Adopted
	if o.MaxArray <= 0 {
		o.MaxArray = 1000
	}
	willRun := map[string]bool{}
	for _, e := range plan {
		if e.Status == runner.PlanRun && !o.Later[e.ID] {
			willRun[e.ID] = true
		}
	}
	later := map[string]bool{}
	for _, e := range plan {
		if e.Status == runner.PlanRun && o.Later[e.ID] {
			later[e.ID] = true
		}
	}
	// What reads a node left for later is left for later too (graph order
	// is topological, so one pass suffices).
	for _, n := range g.Nodes {
		for _, e := range n.Inputs {
			if later[e.Node] && willRun[n.ID] {
				delete(willRun, n.ID)
				later[n.ID] = true
			}
		}
	}
	type place struct {
		job  *PlannedJob
		task int // -1: a single job
	}
	level := map[string]int{}
	at := map[string]place{}
	var jobs []*PlannedJob
	for _, n := range g.Nodes {
		if !willRun[n.ID] {
			continue
		}
		for _, e := range n.Inputs {
			if willRun[e.Node] {
				level[n.ID] = max(level[n.ID], level[e.Node]+1)
			}
		}
		if id, ok := adopted[n.ID]; ok {
			j := &PlannedJob{Nodes: []*graph.Node{n}, Needs: n.Needs(), Adopted: id}
			at[n.ID] = place{j, -1}
			continue
		}
	}
	// Group the rest, in graph order of each group's first node.
	type groupKey struct {
		level       int
		source, typ string
		needs       registry.Resources
	}
	groups := map[groupKey]*PlannedJob{}
	for _, n := range g.Nodes {
		if !willRun[n.ID] {
			continue
		}
		if _, ok := adopted[n.ID]; ok {
			continue
		}
		needs := n.Needs()
		k := groupKey{level[n.ID], n.Source, n.Type.Name, needs}
		if n.Source == "" {
			k.source = "\x00" + n.ID // nodes built in code: no block to group by
		}
		j, ok := groups[k]
		if ok && len(j.Nodes) >= o.MaxArray {
			ok = false // full: the next cells start another array
		}
		if !ok {
			j = &PlannedJob{Needs: needs}
			if backend == "cuda" {
				j.GPUs = needs.GPUs
			}
			groups[k] = j
			jobs = append(jobs, j)
		}
		j.Nodes = append(j.Nodes, n)
	}
	for _, j := range jobs {
		for i, n := range j.Nodes {
			if j.Array() {
				at[n.ID] = place{j, i}
			} else {
				at[n.ID] = place{j, -1}
			}
		}
	}
	// Jobs in level order (a group's nodes share a level), then graph order.
	slices.SortStableFunc(jobs, func(a, b *PlannedJob) int { return level[a.Nodes[0].ID] - level[b.Nodes[0].ID] })
	for i, j := range jobs {
		j.N = i + 1
		// deps[t] = the places task t reads from.
		deps := make([][]place, len(j.Nodes))
		var ups []*PlannedJob
		for t, n := range j.Nodes {
			for _, port := range slices.Sorted(maps.Keys(n.Inputs)) {
				e := n.Inputs[port]
				p, ok := at[e.Node]
				if !ok {
					continue // cached: nothing to wait for
				}
				if !slices.Contains(deps[t], p) {
					deps[t] = append(deps[t], p)
				}
				if !slices.Contains(ups, p.job) {
					ups = append(ups, p.job)
				}
			}
		}
		for _, up := range ups {
			corr := j.Array() && up.Array() && len(up.Nodes) == len(j.Nodes)
			for t := range j.Nodes {
				var onUp []place
				for _, p := range deps[t] {
					if p.job == up {
						onUp = append(onUp, p)
					}
				}
				if corr && (len(onUp) != 1 || onUp[0].task != t) {
					corr = false
				}
			}
			if corr {
				j.After = append(j.After, Dep{Job: up, Task: -1, Corr: true})
				continue
			}
			var tasks []int
			for t := range j.Nodes {
				for _, p := range deps[t] {
					if p.job == up && !slices.Contains(tasks, p.task) {
						tasks = append(tasks, p.task)
					}
				}
			}
			slices.Sort(tasks)
			for _, task := range tasks {
				j.After = append(j.After, Dep{Job: up, Task: task})
			}
		}
	}
	return jobs
}
