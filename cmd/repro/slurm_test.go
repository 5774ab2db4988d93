package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
	"repro/registry"
	"repro/runner/slurm/slurmtest"
)

// The Slurm tests run `repro run --executor slurm` against a throwaway
// single-node cluster (runner/slurm/slurmtest, skipped without Slurm); the
// jobs run this test binary as repro (REPRO_TEST_AS_CLI, exported to them
// by sbatch).

func init() { extraStages = addTestStages }

type sleepParams struct {
	Seconds float64 `cty:"seconds"`
	Text    string  `cty:"text"`
}

// addTestStages registers test.sleep: it sleeps (cancellably, reporting
// progress), then writes metrics.json {"seconds", "chain"} where chain
// counts the test.sleep stages before it. A stage slow on demand, for
// killing things while it runs.
func addTestStages(reg *registry.Registry) {
	reg.Add(&registry.StageType{
		Name: "test.sleep", Version: 1, Doc: "Sleep, then write metrics (tests only).",
		Params:  sleepParams{Text: "x"},
		Inputs:  []registry.Port{{Name: "after", Kind: registry.KindMetrics, Optional: true}},
		Outputs: []registry.Port{{Name: "metrics", Kind: registry.KindMetrics}},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*sleepParams)
			chain := 1.0
			if in, err := env.Input("after"); err == nil {
				var m map[string]float64
				b, err := os.ReadFile(in.Path(registry.FileMetrics))
				if err != nil {
					return err
				}
				if err := json.Unmarshal(b, &m); err != nil {
					return err
				}
				chain += m["chain"]
			}
			end := time.Now().Add(time.Duration(p.Seconds * float64(time.Second)))
			if time.Now().Before(end) {
				announceSleep(p.Text)
			}
			for time.Now().Before(end) {
				env.Progress.Update(0, 0, "sleeping "+p.Text)
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(50 * time.Millisecond):
				}
			}
			b, _ := json.Marshal(map[string]float64{"seconds": p.Seconds, "chain": chain})
			return os.WriteFile(filepath.Join(env.Output("metrics"), registry.FileMetrics), b, 0o644)
		},
	})
}

// sleepsEnv names the Unix socket where test.sleep says that it sleeps
// (see sleeps); the jobs inherit it through sbatch.
const sleepsEnv = "REPRO_TEST_SLEEPS"

// announceSleep tells the test listening on $REPRO_TEST_SLEEPS, if any,
// that the stage whose text this is sleeps: its job runs it, and a signal
// now reaches a running stage.
func announceSleep(text string) {
	path := os.Getenv(sleepsEnv)
	if path == "" {
		return
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		return // the test is not listening
	}
	defer c.Close()
	fmt.Fprintln(c, text)
}

// sleeps listens on a Unix socket for the test.sleep stages of this test's
// runs (their jobs included) and delivers their texts as they start
// sleeping: a channel from the jobs to the test.
func sleeps(t *testing.T) <-chan string {
	t.Helper()
	// A short path: a socket's name has room for about 100 bytes.
	dir, err := os.MkdirTemp("", "sleeps")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); os.RemoveAll(dir) })
	t.Setenv(sleepsEnv, l.Addr().String())
	ch := make(chan string, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			ch <- strings.TrimSpace(line)
		}
	}()
	return ch
}

// slurmCluster starts a test cluster and lets the jobs run this binary as
// repro.
func slurmCluster(t *testing.T) *slurmtest.Cluster {
	t.Helper()
	c := slurmtest.Start(t)
	t.Setenv("REPRO_TEST_AS_CLI", "1")
	return c
}

// startRun starts `repro run --executor slurm` on file with a -var in a
// process of its own; its output goes to the buffer.
func startRun(t *testing.T, file, v string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := cliCmd(t, append([]string{"run", file, "-var", v}, slurmFlags...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// slurmWorkspace is workspace with testdata/slurm.hcl as the experiment.
func slurmWorkspace(t *testing.T) string {
	t.Helper()
	file := workspace(t)
	src, err := os.ReadFile("testdata/slurm.hcl")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(filepath.Dir(file), "slurm.hcl")
	if err := os.WriteFile(f, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// waitJob waits until the cluster shows a job of that name in that state
// and returns its ID.
func waitJob(t *testing.T, c *slurmtest.Cluster, name, state string, out *bytes.Buffer) string {
	t.Helper()
	id, err := c.WaitJob(name, state, 90*time.Second)
	if err != nil {
		t.Fatalf("%v\noutput:\n%s", err, out)
	}
	return id
}

// jobsByName counts the cluster's jobs per name and state, once none is
// still ending (a job reports its outcome, then exits).
func jobsByName(c *slurmtest.Cluster) map[string]map[string]int {
	settle(c)
	return jobCounts(c)
}

// settle waits (up to 30 seconds) until no job is running.
func settle(c *slurmtest.Cluster) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ending := false
		for _, j := range c.Jobs() {
			if f := strings.Split(j, "|"); f[2] == "RUNNING" || f[2] == "COMPLETING" {
				ending = true
			}
		}
		if !ending {
			break
		}
	}
}

// jobCounts counts the cluster's jobs per name and state, now.
func jobCounts(c *slurmtest.Cluster) map[string]map[string]int {
	m := map[string]map[string]int{}
	for _, j := range c.Jobs() {
		f := strings.Split(j, "|")
		if m[f[1]] == nil {
			m[f[1]] = map[string]int{}
		}
		m[f[1]][f[2]]++
	}
	return m
}

var slurmFlags = []string{"--executor", "slurm", "--slurm-poll", "100ms"}

// experiments/baselines.hcl through Slurm writes the same report, byte for
// byte, as a local run.
func TestSlurmBaselinesSameReport(t *testing.T) {
	c := slurmCluster(t)
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	t.Setenv("CI", "true")
	file := filepath.Join("..", "..", "experiments", "baselines.hcl")
	local, onSlurm := filepath.Join(t.TempDir(), "local"), filepath.Join(t.TempDir(), "slurm")
	start := time.Now()
	code, lout, lerr := repro(t, "run", file, "--profile", "ci", "--cache-dir", local)
	if code != 0 {
		t.Fatalf("local run: exit %d\n%s%s", code, lout, lerr)
	}
	localTime, start := time.Since(start), time.Now()
	code, sout, serr := repro(t, append([]string{"run", file, "--profile", "ci", "--cache-dir", onSlurm}, slurmFlags...)...)
	if code != 0 {
		t.Fatalf("slurm run: exit %d\n%s%s\n%s", code, sout, serr, c.Logs())
	}
	t.Logf("baselines.hcl --profile ci: local %s, through Slurm %s", localTime.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	lrep, err := os.ReadFile(filepath.Join(local, "reports", "baselines.ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	srep, err := os.ReadFile(filepath.Join(onSlurm, "reports", "baselines.ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(lrep, srep) {
		t.Errorf("reports differ:\n--- local\n%s\n--- slurm\n%s", lrep, srep)
	}
	if !strings.Contains(string(srep), "TF-IDF") || !strings.Contains(sout, `done     sts_eval["tfidf"]`) {
		t.Errorf("slurm run output:\n%s", sout)
	}
	jobs := jobsByName(c)
	if len(jobs) < 10 {
		t.Errorf("want a job per stage, got %v", jobs)
	}
	for name, states := range jobs {
		if states["COMPLETED"] != 1 || len(states) != 1 {
			t.Errorf("stage %s: jobs %v, want one completed", name, states)
		}
	}
	if code, vout, _ := repro(t, "cache", "verify", "--cache-dir", onSlurm); code != 0 {
		t.Errorf("cache verify: exit %d\n%s", code, vout)
	}
}

// An ablation grid goes out as job arrays, each cell of the next block
// waiting for its own cell (aftercorr); `repro plan --executor slurm` says
// so before anything runs, and the table is the local run's.
func TestSlurmGridArray(t *testing.T) {
	c := slurmCluster(t)
	file := workspace(t)
	grid := []string{"--set", "stage.tfidf.max_features=500,700,900", "--set", "stage.sts.tasks=[\"stsb\",\"sickr\"]"}
	args := append(append([]string{"plan", file}, grid...), slurmFlags...)
	args = append(args, "--slurm-partition", "other", "--slurm-flag=--nice=10")
	code, plan, errs := repro(t, args...)
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", code, plan, errs)
	}
	_, jobs, _ := strings.Cut(plan, "\nslurm:")
	golden(t, "slurm_plan.txt", "slurm:"+jobs)

	code, sout, serr := repro(t, append(append([]string{"run", file}, grid...), append(slurmFlags, "--slurm-partition", "other")...)...)
	if code != 0 {
		t.Fatalf("slurm run: exit %d\n%s%s\n%s", code, sout, serr, c.Logs())
	}
	t.Setenv("REPRO_CACHE", filepath.Join(t.TempDir(), "local"))
	code, lout, lerr := repro(t, append([]string{"run", file}, grid...)...)
	if code != 0 {
		t.Fatalf("local run: exit %d\n%s%s", code, lout, lerr)
	}
	table := func(out string) string {
		_, tab, _ := strings.Cut(out, "\nclitest:")
		tab, _, _ = strings.Cut(tab, "\nreport:")
		return tab
	}
	if table(sout) != table(lout) || !strings.Contains(table(sout), "tfidf.max_features=900") {
		t.Errorf("tables differ:\n--- slurm\n%s\n--- local\n%s", table(sout), table(lout))
	}
	// The tfidf cells are one array, the eval cells another.
	arrays := map[string][]string{}
	for _, j := range c.Jobs() {
		f := strings.Split(j, "|")
		if m := regexp.MustCompile(`^(\d+)_\d+$`).FindStringSubmatch(f[0]); m != nil {
			arrays[f[1]] = append(arrays[f[1]], f[0])
		}
	}
	if len(arrays["tfidf[3]"]) != 3 || len(arrays["eval[3]"]) != 3 {
		t.Errorf("want arrays tfidf[3] and eval[3] of 3 tasks: %v\n%s", arrays, strings.Join(c.Jobs(), "\n"))
	}
}

// A coordinator killed with -9 leaves its jobs running; the next `repro
// run` adopts them -- records what finished, waits for what runs -- and
// submits nothing twice.
func TestSlurmCoordinatorKill9(t *testing.T) {
	c := slurmCluster(t)
	file := slurmWorkspace(t)
	cmd, out := startRun(t, file, "seconds=6")
	waitJob(t, c, "slow", "RUNNING", out)
	waitJob(t, c, "quick", "COMPLETED", out)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if b := jobCounts(c); b["after"]["PENDING"] != 1 {
		t.Fatalf("the dependant should wait in the queue: %v", b)
	}
	code, again, errs := repro(t, append([]string{"run", file, "-var", "seconds=6"}, slurmFlags...)...)
	if code != 0 {
		t.Fatalf("run after kill -9: exit %d\n%s%s", code, again, errs)
	}
	if !strings.Contains(again, "adopted an earlier coordinator's jobs: 1 finished and recorded, 2 still queued or running") {
		t.Errorf("the second run does not say what it adopted:\n%s", again)
	}
	for _, want := range []string{"cached   quick", "done     slow", "done     after", "6.00"} {
		if !strings.Contains(again, want) {
			t.Errorf("second run lacks %q:\n%s", want, again)
		}
	}
	for name, states := range jobsByName(c) {
		if states["COMPLETED"] != 1 || len(states) != 1 {
			t.Errorf("stage %s: jobs %v, want exactly one, completed\n%s", name, states, strings.Join(c.Jobs(), "\n"))
		}
	}
	if code, vout, _ := repro(t, "cache", "verify"); code != 0 {
		t.Errorf("cache verify: exit %d\n%s", code, vout)
	}
}

// A second coordinator on the same cache is refused, naming the first;
// SIGTERM to the first cancels its jobs and exits 130.
func TestSlurmSecondCoordinatorAndSIGTERM(t *testing.T) {
	c := slurmCluster(t)
	file := slurmWorkspace(t)
	cmd, out := startRun(t, file, "seconds=120")
	defer cmd.Process.Kill()
	waitJob(t, c, "slow", "RUNNING", out)
	code, sout, serr := repro(t, append([]string{"run", file, "-var", "seconds=120"}, slurmFlags...)...)
	host, _ := os.Hostname()
	if code != 1 || !strings.Contains(serr, fmt.Sprintf("pid %d on host %s", cmd.Process.Pid, host)) {
		t.Errorf("second coordinator: exit %d\n%s%s", code, sout, serr)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(out.String(), "interrupted") {
		t.Errorf("after SIGTERM: %v\n%s", err, out.String())
	}
	jobs := jobsByName(c)
	if jobs["slow"]["CANCELLED"] != 1 || jobs["after"]["CANCELLED"] != 1 {
		t.Errorf("the coordinator's jobs were not cancelled: %v", jobs)
	}
}

// scancel on a running job: the run fails that stage with the job's
// state and the tail of its log, skips what depends on it, and exits 1.
func TestSlurmScancelMidRun(t *testing.T) {
	c := slurmCluster(t)
	file := slurmWorkspace(t)
	sleeping := sleeps(t)
	cmd, out := startRun(t, file, "seconds=120")
	defer cmd.Process.Kill()
	// scancel once the slow stage sleeps in its job.
	for text := ""; text != "slow"; {
		select {
		case text = <-sleeping:
		case <-time.After(90 * time.Second):
			t.Fatalf("the slow stage did not start\njobs:\n%s\noutput:\n%s", strings.Join(c.Jobs(), "\n"), out)
		}
	}
	id := waitJob(t, c, "slow", "RUNNING", out)
	if err := exec.Command("scancel", id).Run(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("after scancel: %v\n%s", err, out.String())
	}
	for _, want := range []string{"FAILED   slow (test.sleep): slurm job " + id + " CANCELLED",
		"job log", "CANCELLED AT", "skipped  after", "done     quick"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// SIGTERM reaches the job either through its shell (exit status 143)
	// or straight to the step (Slurm records the signal): which one is a
	// race inside Slurm, and both say the same.
	if !strings.Contains(out.String(), "exit code 143") && !strings.Contains(out.String(), "exit code signal 15") {
		t.Errorf("output names neither exit code 143 nor signal 15:\n%s", out.String())
	}
}

// SynCSE's request stage as a Slurm job: the job sends its requests and
// journals the answers, which the coordinator merges into the index; a
// re-run of the stage under another key (concurrency changed) finds every
// answer in the snapshot it is given and sends nothing.
func TestSlurmRequestJournal(t *testing.T) {
	c := slurmCluster(t)
	file, srv := llmWorkspace(t)
	url := "url=" + srv.BaseURL()
	code, out, errs := repro(t, append([]string{"run", file, "-var", url}, slurmFlags...)...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s\n%s", code, out, errs, c.Logs())
	}
	if srv.Count() != 120 || storedAnswers(t) != 120 {
		t.Fatalf("sent %d, stored %d; want 120 and 120", srv.Count(), storedAnswers(t))
	}
	code, out, errs = repro(t, append([]string{"run", file, "-var", url, "--set", "stage.label.concurrency=2"}, slurmFlags...)...)
	if code != 0 || !strings.Contains(out, "done     label") {
		t.Fatalf("re-run: exit %d\n%s%s", code, out, errs)
	}
	if srv.Count() != 120 {
		t.Errorf("the re-run sent %d request(s); every answer was cached", srv.Count()-120)
	}
}
