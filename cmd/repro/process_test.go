package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary act as the repro command, so the tests
// below can run, kill and race real repro processes.
func TestMain(m *testing.M) {
	if os.Getenv("REPRO_TEST_AS_CLI") == "1" {
		// REPRO_TEST_FSIZE limits the size of any file this process writes
		// (RLIMIT_FSIZE; Go ignores SIGXFSZ, so a write past it fails with
		// EFBIG): a full disk without needing a mount.
		if v := os.Getenv("REPRO_TEST_FSIZE"); v != "" {
			n, _ := strconv.ParseUint(v, 10, 64)
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
				fmt.Fprintln(os.Stderr, "setrlimit:", err)
				os.Exit(3)
			}
		}
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func cliCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "REPRO_TEST_AS_CLI=1")
	return cmd
}

// TestKillDuringRun kills `repro run` with SIGKILL at random moments of a
// real pipeline; after each kill the cache verifies, and a final run
// completes only what is missing.
func TestKillDuringRun(t *testing.T) {
	file := workspace(t)
	iterations := 8
	if testing.Short() {
		iterations = 3
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < iterations; i++ {
		cmd := cliCmd(t, "run", file, "--set", "stage.tfidf.max_features="+[]string{"500", "700", "900"}[i%3])
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if code, vout, _ := repro(t, "cache", "verify"); code != 0 {
			t.Fatalf("iteration %d: cache verify after kill -9: exit %d\n%s\nrun output:\n%s", i, code, vout, out.String())
		}
	}
	// Whatever was finished stays finished: the plan's "will run" stages are
	// exactly those the next run runs.
	_, plan, _ := repro(t, "plan", file, "--set", "stage.tfidf.max_features=900")
	willRun := 0 // rows whose STATUS is "will run" (a WHY may say it too)
	for _, l := range strings.Split(plan, "\n") {
		if f := strings.Fields(l); len(f) >= 5 && f[3] == "will" && f[4] == "run" {
			willRun++
		}
	}
	code, out, errs := repro(t, "run", file, "--set", "stage.tfidf.max_features=900")
	if code != 0 {
		t.Fatalf("final run: exit %d\n%s%s", code, out, errs)
	}
	if ran := strings.Count(out, "done     "); ran != willRun {
		t.Errorf("final run ran %d stages, plan said %d would run:\n%s\n%s", ran, willRun, plan, out)
	}
}

// TestTwoProcessesOneCache runs the same pipeline in two, then (on a fresh
// cache) three processes at once: all finish, and every stage is computed
// exactly once.
func TestTwoProcessesOneCache(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { concurrentColdRuns(t, n) })
	}
}

func concurrentColdRuns(t *testing.T, n int) {
	file := workspace(t)
	outs := make([]bytes.Buffer, n)
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = cliCmd(t, "run", file)
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i].String())
		}
	}
	done := 0
	for i := range outs {
		done += strings.Count(outs[i].String(), "done     ")
	}
	if done != 4 {
		t.Errorf("the 4 stages were computed %d times in all by %d processes", done, n)
	}
	_, ls, _ := repro(t, "cache", "ls")
	if !strings.Contains(ls, "4 run(s)") {
		t.Errorf("cache ls: want 4 runs:\n%s", ls)
	}
	if code, vout, _ := repro(t, "cache", "verify"); code != 0 {
		t.Errorf("cache verify: exit %d\n%s", code, vout)
	}
}

// TestInterrupt sends SIGINT to a running `repro run`: it stops with exit
// code 130 saying finished stages are cached, the cache verifies, and the
// next run completes only the rest. The interrupted stage trains the Brown
// tagger (seconds, however loaded the machine), so the signal lands in it.
func TestInterrupt(t *testing.T) {
	file := workspace(t)
	slow := filepath.Join(filepath.Dir(file), "slow.hcl")
	os.WriteFile(slow, []byte(`experiment "slow" {}

stage "wiki" {
  uses  = "data.sentences"
  limit = 200
}

stage "mask" {
  uses   = "text.mask_phrases"
  input  = stage.wiki.sentences
  method = "np"
}

deviation "wiki" {
  what      = "sentences"
  paper     = "none (a test)"
  ours      = "200 local Wikipedia sentences"
  why       = "a stage to interrupt"
  stand_ins = ["wiki"]
}
`), 0o644)
	cmd := cliCmd(t, "run", slow)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "running  mask") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(out.String(), "interrupted; finished stages are cached") {
		t.Fatalf("after SIGINT: %v\n%s", err, out.String())
	}
	if code, vout, _ := repro(t, "cache", "verify"); code != 0 {
		t.Fatalf("cache verify after SIGINT: exit %d\n%s", code, vout)
	}
	code, again, _ := repro(t, "run", slow)
	if code != 0 || strings.Count(again, "done     ") != 1 || !strings.Contains(again, "done     mask") || !strings.Contains(again, "cached   wiki") {
		t.Errorf("the next run should run only mask (exit %d):\n%s", code, again)
	}
}

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDiskFull runs with every file this process writes limited in size,
// so storing an output fails as on a full disk: the run fails naming the
// error, nothing half-written is cached, and with room again the run
// completes.
func TestDiskFull(t *testing.T) {
	file := workspace(t)
	// Room for the index and the small artifacts, not for the TF-IDF
	// encoder (about a megabyte of vocabulary and idf).
	cmd := cliCmd(t, "run", file)
	cmd.Env = append(cmd.Env, "REPRO_TEST_FSIZE=200000")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "file too large") {
		t.Fatalf("run on a full disk: %v\n%s", err, out)
	}
	if code, vout, _ := repro(t, "cache", "verify"); code != 0 {
		t.Fatalf("cache verify after a full disk: exit %d\n%s", code, vout)
	}
	code, again, errs := repro(t, "run", file)
	if code != 0 || !strings.Contains(again, "done     eval") || !strings.Contains(again, "54.75") {
		t.Errorf("run with room again: exit %d\n%s%s", code, again, errs)
	}
}
