package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"repro/experiment"
	"repro/graph"
	"repro/internal/llm/llmtest"
	"repro/runner"
	"repro/runner/remote"
	"repro/store"
)

// labelJobSpec writes the job spec that `repro run --executor slurm` would
// hand a cluster job for stage label of the LLM experiment with
// max_inputs set to inputs: its canonical parameters, the digests of its
// cached inputs, a snapshot of the request cache and a journal of its own.
func labelJobSpec(t *testing.T, file, url, inputs string) string {
	t.Helper()
	ctx := context.Background()
	x, _, _, err := experiment.Load(defaultRegistry(), file, experiment.Options{
		Vars: map[string]string{"url": url}, Sets: []string{"stage.label.max_inputs=" + inputs}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(os.Getenv("REPRO_CACHE"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	plan, err := x.Plan(ctx, st, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, pe := range plan {
		keys[pe.ID] = pe.Key
		if pe.ID == "label" && pe.Status != runner.PlanRun {
			t.Fatalf("label is %v, not to run", pe.Status)
		}
	}
	n := x.Graph.Node("label")
	params, err := graph.CanonicalParams(n.Params)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := &remote.Spec{Node: n.ID, Source: n.Source, Type: n.Type.Name, Version: n.Type.Version, Params: params,
		Seed: n.Seed, Backend: "cpu", Key: keys["label"], Store: st.Dir(), Inputs: map[string]remote.Input{},
		Outcome: filepath.Join(dir, "outcome.json"), Progress: filepath.Join(dir, "progress.json"),
		Journal: filepath.Join(dir, "requests.jsonl"), Requests: filepath.Join(dir, "requests.db")}
	for port, e := range n.Inputs {
		outs, err := st.Outputs(ctx, keys[e.Node])
		if err != nil || outs == nil {
			t.Fatalf("input %s: stage %s not cached (%v)", port, e.Node, err)
		}
		a := outs[e.Output]
		spec.Inputs[port] = remote.Input{Kind: string(a.Kind), Digest: a.Digest, Node: e.Node}
	}
	if _, err := st.SnapshotRequests(ctx, spec.Requests); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "spec.json")
	if err := remote.WriteJSON(path, spec); err != nil {
		t.Fatal(err)
	}
	return path
}

// Two cluster jobs of one experiment (`repro stage-exec`, which reads a
// snapshot of the request cache and writes a journal, never the index)
// that share requests pay for each shared one once: a request one job is
// sending is claimed where the other sees it, and the other waits for the
// answer the holder publishes. Before, the 80 requests the smaller job
// shares with the larger were each paid twice.
func TestLLMJobsSharedRequestsPaidOnce(t *testing.T) {
	file, srv := llmWorkspace(t)
	url := srv.BaseURL()
	if code, out, errs := repro(t, "run", file, "-var", "url="+url, "--target", "premises"); code != 0 {
		t.Fatalf("run --target premises: %s%s", out, errs)
	}
	big, small := labelJobSpec(t, file, url, "60"), labelJobSpec(t, file, url, "40")
	// The server answers the first job's first request (sent alone, the
	// probe), then holds every answer until the second job's probe
	// arrives: the first job's 4 workers wait on theirs, and the second
	// job, whose first requests to send are those 4 (the bug: sent again),
	// probes with the next one it can claim and waits for the 4.
	four, release := make(chan struct{}), make(chan struct{})
	srv.Script = func(n int, r *llmtest.ChatRequest) llmtest.Reply {
		switch n {
		case 1:
			return llmtest.Reply{}
		case 5:
			close(four)
		case 6:
			close(release)
		}
		<-release
		return llmtest.Reply{}
	}
	start := func(spec string) (*exec.Cmd, *bytes.Buffer) {
		cmd := cliCmd(t, "stage-exec", spec)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	bigJob, bigOut := start(big)
	<-four
	smallJob, smallOut := start(small)
	if err := bigJob.Wait(); err != nil {
		t.Fatalf("the larger job: %v\n%s", err, bigOut)
	}
	if err := smallJob.Wait(); err != nil {
		t.Fatalf("the smaller job: %v\n%s", err, smallOut)
	}
	seen := map[string]int{}
	for _, r := range srv.Received() {
		b, _ := json.Marshal(r.Body.Messages)
		seen[string(b)]++
	}
	dup := 0
	for _, n := range seen {
		dup += n - 1
	}
	if dup > 0 || srv.Count() != 120 {
		t.Fatalf("%d requests sent for 120 distinct ones (%d paid twice)\nlarger job:\n%s\nsmaller job:\n%s", srv.Count(), dup, bigOut, smallOut)
	}
	// Both jobs finished with every answer; what each sent is in its
	// journal, and what it waited for in the other's: merged, the index
	// holds 120 answers and a run on it sends nothing.
	for _, spec := range []string{big, small} {
		s, err := remote.ReadSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		o, err := remote.ReadOutcome(s.Outcome)
		if err != nil || !o.OK() {
			t.Fatalf("outcome of %s: %+v %v", spec, o, err)
		}
		rs, err := remote.ReadJournal(s.Journal)
		if err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(s.Store)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.PutRequests(context.Background(), rs); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	if n := storedAnswers(t); n != 120 {
		t.Fatalf("%d answers stored, want 120", n)
	}
	sent := srv.Count()
	srv.Script = nil
	if code, out, errs := repro(t, "run", file, "-var", "url="+url); code != 0 {
		t.Fatalf("run: %s%s", out, errs)
	}
	if srv.Count() != sent {
		t.Fatalf("a run after the jobs sent %d requests", srv.Count()-sent)
	}
}

// A job killed while it holds claims does not keep them: the other job,
// waiting for those requests, finds the holder's process gone and sends
// them itself.
func TestLLMJobsClaimOfKilledJob(t *testing.T) {
	file, srv := llmWorkspace(t)
	url := srv.BaseURL()
	if code, out, errs := repro(t, "run", file, "-var", "url="+url, "--target", "premises"); code != 0 {
		t.Fatalf("run --target premises: %s%s", out, errs)
	}
	big, small := labelJobSpec(t, file, url, "60"), labelJobSpec(t, file, url, "40")
	// The first request (the larger job's probe, sent alone) is never
	// answered.
	first, hang := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(hang) })
	srv.Script = func(n int, r *llmtest.ChatRequest) llmtest.Reply {
		if n == 1 {
			close(first)
			<-hang
		}
		return llmtest.Reply{}
	}
	start := func(spec string) (*exec.Cmd, *bytes.Buffer) {
		cmd := cliCmd(t, "stage-exec", spec)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	bigJob, _ := start(big)
	<-first
	smallJob, smallOut := start(small)
	// Once the smaller job says it waits for the larger one's requests,
	// the larger one dies.
	s, err := remote.ReadSpec(small)
	if err != nil {
		t.Fatal(err)
	}
	smallDone := make(chan error, 1)
	go func() { smallDone <- smallJob.Wait() }()
	for waiting := false; !waiting; {
		select {
		case err := <-smallDone:
			bigJob.Process.Kill()
			bigJob.Wait()
			t.Fatalf("the smaller job ended (%v) without waiting for the larger one:\n%s", err, smallOut)
		case <-time.After(20 * time.Millisecond):
		}
		p := remote.ReadProgress(s.Progress)
		waiting = p != nil && strings.Contains(p.Status, "another run is sending")
	}
	bigJob.Process.Kill()
	bigJob.Wait()
	if err := <-smallDone; err != nil {
		t.Fatalf("the smaller job: %v\n%s", err, smallOut)
	}
	killed := map[string]bool{}
	seen := map[string]int{}
	for _, r := range srv.Received() {
		b, _ := json.Marshal(r.Body.Messages)
		seen[string(b)]++
		if r.N == 1 {
			killed[string(b)] = true
		}
	}
	for m, n := range seen {
		if n > 1 && !killed[m] {
			t.Errorf("sent %d times, and not the one the killed job had sent: %s", n, m)
		}
	}
	if len(seen) != 80 || srv.Count() != 81 {
		t.Fatalf("%d requests for %d distinct ones; want the smaller job's 80 and the killed job's 1\n%s", srv.Count(), len(seen), smallOut)
	}
}
