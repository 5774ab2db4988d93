package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// cli runs Slurm's commands. Everything repro asks of Slurm goes through
// sbatch, squeue and scancel: no REST API or library, so it works with the
// client tools any cluster's login node has.
type cli struct {
	env []string // nil: inherit
}

// errSlurm is a Slurm command that failed; its message is the command's.
type errSlurm struct {
	cmd    string
	stderr string
	err    error
}

func (e *errSlurm) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return e.cmd + ": " + msg
}

func (c *cli) run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	if c.env != nil {
		cmd.Env = c.env
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%s: %v (is Slurm's client installed and on PATH?)", name, ee.Err)
		}
		return out.String(), &errSlurm{cmd: name, stderr: errb.String(), err: err}
	}
	return out.String(), nil
}

// transient says whether an sbatch failure is worth retrying: the
// controller busy or unreachable for a moment, or a limit on submitted jobs
// that frees up as jobs finish.
func transient(err error) (retry, limit bool) {
	var se *errSlurm
	if !errors.As(err, &se) {
		return false, false
	}
	m := strings.ToLower(se.stderr)
	for _, s := range []string{"maxsubmit", "submit limit", "job limit", "too many jobs"} {
		if strings.Contains(m, s) {
			return true, true
		}
	}
	for _, s := range []string{"temporarily", "timed out", "try again", "socket", "connection refused", "unable to contact", "resource busy"} {
		if strings.Contains(m, s) {
			return true, false
		}
	}
	return false, false
}

// submit runs sbatch and returns the job ID. A transient failure is
// retried with backoff: a busy controller up to ten times, a limit on
// submitted jobs until it frees up (or ctx ends).
func (c *cli) submit(ctx context.Context, args []string, script string) (string, error) {
	delay := time.Second
	for attempt := 1; ; attempt++ {
		out, err := c.run(ctx, "sbatch", append(append([]string{"--parsable"}, args...), script)...)
		if err == nil {
			id, _, _ := strings.Cut(strings.TrimSpace(out), ";") // "123" or "123;cluster"
			if _, perr := strconv.Atoi(id); perr != nil {
				return "", fmt.Errorf("sbatch: unexpected output %q", out)
			}
			return id, nil
		}
		retry, limit := transient(err)
		if !retry || (!limit && attempt >= 10) || ctx.Err() != nil {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Minute)
	}
}

// queued is one job (or array task) as squeue shows it.
type queued struct {
	ID      string // "123" or "123_4"
	State   string // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
	Reason  string // why it waits or ended (Resources, Dependency, NonZeroExitCode, ...)
	Node    string
	Exit    string // "0", "3" (exit status) or "signal 15"
	Comment string
}

// squeueFormat asks for everything in one call: array tasks one per line,
// every state (a job that just ended stays listed for the cluster's
// MinJobAge), exit code as a raw wait status.
const squeueFormat = "JobArrayID:|,State:|,Reason:|,NodeList:|,exit_code:|,Comment:"

// queue lists this user's jobs, keyed by ID.
func (c *cli) queue(ctx context.Context) (map[string]queued, error) {
	out, err := c.run(ctx, "squeue", "--me", "--noheader", "--states=all", "--array", "--Format="+squeueFormat)
	if err != nil {
		return nil, err
	}
	return parseQueue(out), nil
}

func parseQueue(out string) map[string]queued {
	jobs := map[string]queued{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(strings.TrimSpace(line), "|", 6)
		if len(f) < 6 || f[0] == "" {
			continue
		}
		q := queued{ID: f[0], State: f[1], Reason: f[2], Node: f[3], Exit: waitStatus(f[4]), Comment: f[5]}
		if q.Comment == "(null)" {
			q.Comment = ""
		}
		if q.Reason == "None" {
			q.Reason = ""
		}
		jobs[q.ID] = q
	}
	return jobs
}

// waitStatus renders squeue's raw wait status ("768") as an exit code
// ("3") or a signal ("signal 15").
func waitStatus(s string) string {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return strings.TrimSpace(s)
	}
	if sig := n & 0x7f; sig != 0 {
		return fmt.Sprintf("signal %d", sig)
	}
	return strconv.Itoa(n >> 8)
}

// cancel cancels jobs (IDs or array tasks); jobs that already ended are
// not an error.
func (c *cli) cancel(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := c.run(ctx, "scancel", ids...)
	var se *errSlurm
	if errors.As(err, &se) && strings.Contains(strings.ToLower(se.stderr), "already completed") {
		return nil
	}
	if errors.As(err, &se) && strings.Contains(strings.ToLower(se.stderr), "invalid job id") {
		return nil
	}
	return err
}

// show asks the controller (scontrol) about a job that squeue no longer
// lists, falling back to the accounting database (sacct) where there is
// one; ok is false when neither knows it.
func (c *cli) show(ctx context.Context, id string) (queued, bool) {
	if out, err := c.run(ctx, "scontrol", "show", "job", "--oneliner", id); err == nil {
		q := queued{ID: id}
		for _, f := range strings.Fields(out) {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "JobState":
				q.State = v
			case "Reason":
				if v != "None" {
					q.Reason = v
				}
			case "ExitCode":
				code, sig, _ := strings.Cut(v, ":")
				q.Exit = code
				if sig != "" && sig != "0" {
					q.Exit = "signal " + sig
				}
			case "NodeList":
				if v != "(null)" {
					q.Node = v
				}
			}
		}
		if q.State != "" {
			return q, true
		}
	}
	out, err := c.run(ctx, "sacct", "--jobs="+id, "--allocations", "--noheader", "--parsable2", "--format=State,ExitCode,NodeList")
	if err != nil {
		return queued{}, false
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) < 3 || f[0] == "" {
			continue
		}
		state, _, _ := strings.Cut(f[0], " ") // "CANCELLED by 1000"
		code, sig, _ := strings.Cut(f[1], ":")
		q := queued{ID: id, State: state, Exit: code, Node: f[2]}
		if sig != "" && sig != "0" {
			q.Exit = "signal " + sig
		}
		return q, true
	}
	return queued{}, false
}

// terminal says whether a job state is final.
func terminal(state string) bool {
	switch state {
	case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "PREEMPTED", "NODE_FAIL", "OUT_OF_MEMORY",
		"BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT", "REVOKED":
		return true
	}
	return false
}

// maxArraySize is the cluster's MaxArraySize (the most tasks of an
// array, indices 0 to MaxArraySize-1), 1000 when it cannot be read.
func (c *cli) maxArraySize(ctx context.Context) int {
	out, err := c.run(ctx, "scontrol", "show", "config")
	if err == nil {
		for _, line := range strings.Split(out, "\n") {
			k, v, ok := strings.Cut(line, "=")
			if ok && strings.TrimSpace(k) == "MaxArraySize" {
				if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 1 {
					return n
				}
			}
		}
	}
	return 1000
}
