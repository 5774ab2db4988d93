package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary act as the repro command, so the tests
// below can run, kill and race real repro processes.
func TestMain(m *testing.M) {
	if os.Getenv("REPRO_TEST_AS_CLI") == "1" {
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

// TestTwoProcessesOneCache runs the same pipeline in two processes at once:
// both finish, and every stage is computed exactly once.
func TestTwoProcessesOneCache(t *testing.T) {
	file := workspace(t)
	var outs [2]bytes.Buffer
	cmds := make([]*exec.Cmd, 2)
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
	done := strings.Count(outs[0].String(), "done     ") + strings.Count(outs[1].String(), "done     ")
	if done != 4 {
		t.Errorf("the 4 stages were computed %d times in all:\n--- 1\n%s\n--- 2\n%s", done, outs[0].String(), outs[1].String())
	}
	_, ls, _ := repro(t, "cache", "ls")
	if !strings.Contains(ls, "4 run(s)") {
		t.Errorf("cache ls: want 4 runs:\n%s", ls)
	}
	if code, vout, _ := repro(t, "cache", "verify"); code != 0 {
		t.Errorf("cache verify: exit %d\n%s", code, vout)
	}
}
