package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"repro/internal/llm/llmtest"
	"repro/store"
)

// llmWorkspace is workspace with the LLM experiment (testdata/llm.hcl)
// and a loopback chat-completions server answering every label request.
func llmWorkspace(t *testing.T) (file string, srv *llmtest.Server) {
	t.Helper()
	dir := filepath.Dir(workspace(t))
	src, err := os.ReadFile("testdata/llm.hcl")
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "llm.hcl")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	srv = llmtest.New()
	t.Cleanup(srv.Close)
	srv.Answer = func(r *llmtest.ChatRequest) string { return "Label for: " + r.Last() }
	return file, srv
}

func storedAnswers(t *testing.T) int {
	t.Helper()
	st, err := store.Open(os.Getenv("REPRO_CACHE"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stats, err := st.RequestStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range stats {
		n += s.Requests
	}
	return n
}

// repro plan counts the requests before anything is sent; after the run
// the stage is cached and sends nothing; repro cache requests prices them.
func TestPlanAndCacheRequests(t *testing.T) {
	file, srv := llmWorkspace(t)
	url := "url=" + srv.BaseURL()
	code, out, errs := repro(t, "plan", file, "-var", url)
	if code != 0 || !strings.Contains(out, "label") || !strings.Contains(out, "<= 120") || !strings.Contains(out, "inputs not computed yet") {
		t.Fatalf("plan before the data: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs = repro(t, "run", file, "-var", url, "--target", "premises"); code != 0 {
		t.Fatalf("run --target premises: %s%s", out, errs)
	}
	_, out, _ = repro(t, "plan", file, "-var", url)
	if !strings.Contains(out, "120 request(s) to send") || !strings.Contains(out, "openai/loopback") {
		t.Fatalf("plan with the inputs computed:\n%s", out)
	}
	if srv.Count() != 0 {
		t.Fatalf("plan sent %d requests", srv.Count())
	}
	if code, out, errs = repro(t, "run", file, "-var", url); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	if srv.Count() != 120 {
		t.Fatalf("run sent %d requests, want 120", srv.Count())
	}
	_, out, _ = repro(t, "plan", file, "-var", url)
	if !strings.Contains(out, "stage cached: sends nothing") || !strings.Contains(out, "0 request(s) to send") {
		t.Fatalf("plan after the run:\n%s", out)
	}
	// A change that cannot change an answer re-runs the stage, which
	// answers everything from the cache.
	code, out, _ = repro(t, "run", file, "-var", url, "--set", "stage.label.concurrency=2")
	if code != 0 || srv.Count() != 120 || !strings.Contains(out, "done     label") {
		t.Fatalf("re-run with concurrency 2 (exit %d, %d requests):\n%s", code, srv.Count(), out)
	}
	code, out, _ = repro(t, "cache", "requests", file)
	if code != 0 || !strings.Contains(out, "loopback") || !strings.Contains(out, "120 answer(s) cached") || !strings.Contains(out, "worth $") {
		t.Fatalf("cache requests:\n%s", out)
	}
	// gc keeps every answer; only --drop removes them.
	if code, out, _ = repro(t, "cache", "gc", "--all", "--keep-newer", "-1s"); code != 0 {
		t.Fatalf("gc: %s", out)
	}
	if n := storedAnswers(t); n != 120 {
		t.Fatalf("gc left %d of 120 answers", n)
	}
	if code, out, _ = repro(t, "cache", "requests", "--drop", "--model", "loopback"); code != 0 || !strings.Contains(out, "dropped 120") {
		t.Fatalf("drop: %s", out)
	}
}

// TestKillDuringRequests kills `repro run` with SIGKILL while the label
// stage is receiving answers: every answer it had committed survives, and
// the next run sends exactly the requests that were not committed.
func TestKillDuringRequests(t *testing.T) {
	file, srv := llmWorkspace(t)
	srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Delay: 15 * time.Millisecond} }
	url := "url=" + srv.BaseURL()
	if code, out, errs := repro(t, "run", file, "-var", url, "--target", "premises"); code != 0 {
		t.Fatalf("run --target premises: %s%s", out, errs)
	}
	cmd := cliCmd(t, "run", file, "-var", url)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for srv.Answered() < 40 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	answered, sent := srv.Answered(), srv.Count()
	if answered < 40 || answered >= 120 {
		t.Fatalf("killed after %d answers (want 40 <= n < 120):\n%s", answered, out.String())
	}
	stored := storedAnswers(t)
	// Answers written by the server but not yet committed when the kill
	// came are at most one per worker.
	if stored > answered || stored < answered-4 {
		t.Fatalf("%d answers stored after %d answered (%d requests)", stored, answered, sent)
	}
	if code, vout, _ := repro(t, "cache", "verify"); code != 0 {
		t.Fatalf("cache verify after kill -9: %s", vout)
	}
	code, rout, errs := repro(t, "run", file, "-var", url)
	if code != 0 {
		t.Fatalf("re-run: exit %d\n%s%s", code, rout, errs)
	}
	if resent := srv.Count() - sent; resent != 120-stored {
		t.Fatalf("the re-run sent %d requests; %d of 120 were stored, so want %d", resent, stored, 120-stored)
	}
	t.Logf("killed after %d answers, %d stored, re-run sent %d", answered, stored, 120-stored)
}
