package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"repro/internal/llm/llmtest"
)

// What comes back from a language-model server is hostile: these tests run
// the LLM experiment (testdata/llm.hcl) against a loopback server that
// misbehaves, through the whole CLI.

// cacheFilesContaining walks the cache directory (index, its WAL, objects,
// logs) and returns the files holding any of needles.
func cacheFilesContaining(t *testing.T, needles ...string) []string {
	t.Helper()
	var hits []string
	root := os.Getenv("REPRO_CACHE")
	err := filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				hits = append(hits, path+" holds "+n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// A canary key that the server echoes -- in full, masked as providers mask
// it, in an error object, in a body that does not parse, in an answer --
// appears nowhere: not on the console, not in a stage log, not in the
// index, not in an object.
func TestLLMKeyNeverLeaks(t *testing.T) {
	file, srv := llmWorkspace(t)
	const key = "sk-canary7Q2xZpL0vN8rT4wY6uB1eH9cK3456"
	masked := key[:6] + "***********" + key[len(key)-4:] // OpenAI's "sk-can***...3456"
	dotted := "sk-...***" + key[len(key)-4:]
	needles := []string{key, masked, dotted, key[6:20]}
	t.Setenv("REPRO_CANARY_KEY", key)
	url := "url=" + srv.BaseURL()
	if code, out, errs := repro(t, "run", file, "-var", url, "--target", "premises"); code != 0 {
		t.Fatalf("run --target premises: %s%s", out, errs)
	}
	keyed := []string{"-var", url, "--set", `stage.label.api_key_env="REPRO_CANARY_KEY"`}
	check := func(what, out string) {
		t.Helper()
		for _, n := range needles {
			if strings.Contains(out, n) {
				t.Errorf("%s: the console shows %q:\n%s", what, n, out)
			}
		}
		if hits := cacheFilesContaining(t, needles...); len(hits) > 0 {
			t.Errorf("%s: the key is in the cache:\n%s", what, strings.Join(hits, "\n"))
		}
	}
	replies := map[string]llmtest.Reply{
		"401 echoing the key":        {Status: 401, Error: "Incorrect API key provided: " + key + ". You can find your API key at https://platform.openai.com/account/api-keys."},
		"401 masking the key":        {Status: 401, Error: "Incorrect API key provided: " + masked + " (or " + dotted + ")."},
		"a body that does not parse": {RawBody: `{"choices": [{"message": {"content": "` + key + `"`},
		"500 echoing the key":        {Status: 500, Error: "upstream rejected Bearer " + key},
	}
	for what, rep := range replies {
		rep := rep
		srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply { return rep }
		code, out, errs := repro(t, append([]string{"run", file}, keyed...)...)
		if code == 0 {
			t.Fatalf("%s: the run succeeded:\n%s%s", what, out, errs)
		}
		check(what, out+errs)
	}
	// An answer that quotes the key is stored without it.
	srv.Script = nil
	srv.Answer = func(r *llmtest.ChatRequest) string { return "Label for " + key + ": " + r.Last() }
	code, out, errs := repro(t, append([]string{"run", file}, keyed...)...)
	if code != 0 {
		t.Fatalf("answers quoting the key: exit %d\n%s%s", code, out, errs)
	}
	check("answers quoting the key", out+errs)
	code, out, errs = repro(t, "cache", "requests", file)
	check("cache requests", out+errs)
}

// A server that asks to wait an hour fails the run at once, saying how
// long the server asked for, instead of stalling every worker for hours.
func TestLLMRetryAfterBounded(t *testing.T) {
	file, srv := llmWorkspace(t)
	url := "url=" + srv.BaseURL()
	if code, out, errs := repro(t, "run", file, "-var", url, "--target", "premises"); code != 0 {
		t.Fatalf("run --target premises: %s%s", out, errs)
	}
	srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Status: 429, RetryAfter: "3600", Error: "Rate limit reached"}
	}
	// In a process of its own, so that the test can stop a run that waits
	// the hour (the bug) instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := cliCmd(t, "run", file, "-var", url)
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	cmd.Env = append(os.Environ(), "REPRO_TEST_AS_CLI=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the run was still waiting after 2 minutes (%d requests sent):\n%s", srv.Count(), out)
	}
	if err == nil {
		t.Fatalf("the run succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "1h0m0s") {
		t.Errorf("the failure does not say the server asked to wait 1h0m0s:\n%s", out)
	}
	if srv.Count() > 4 {
		t.Errorf("%d requests sent; every worker's first (4) was enough to know", srv.Count())
	}
}

// An answer the stage cannot parse is recorded as a failure: it is not
// replayed as an answer, repro cache requests shows it, and dropping the
// failures makes the next run ask exactly those again.
func TestLLMParseFailureRecorded(t *testing.T) {
	file, srv := llmWorkspace(t)
	url := "url=" + srv.BaseURL()
	if code, out, errs := repro(t, "run", file, "-var", url, "--target", "premises"); code != 0 {
		t.Fatalf("run --target premises: %s%s", out, errs)
	}
	var mu sync.Mutex
	bad := map[string]bool{}
	srv.Script = func(n int, r *llmtest.ChatRequest) llmtest.Reply {
		if n%10 == 3 { // an answer with no sentence in it
			mu.Lock()
			bad[r.Last()] = true
			mu.Unlock()
			return llmtest.Reply{Content: "Sentence:"}
		}
		return llmtest.Reply{}
	}
	if code, out, errs := repro(t, "run", file, "-var", url); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	if srv.Count() != 120 {
		t.Fatalf("sent %d, want 120", srv.Count())
	}
	code, out, errs := repro(t, "cache", "requests", file)
	if code != 0 || !strings.Contains(out, "12 failure(s)") {
		t.Fatalf("cache requests does not count the 12 unparsable answers as failures:\n%s%s", out, errs)
	}
	code, out, errs = repro(t, "cache", "requests", "--failed")
	if code != 0 || strings.Count(out, "label") != 12 || !strings.Contains(out, "no sentence") {
		t.Fatalf("cache requests --failed does not list the 12 failures with their stage and reason:\n%s%s", out, errs)
	}
	// A re-run of the stage replays the failures as failures: nothing sent.
	code, out, errs = repro(t, "run", file, "-var", url, "--set", "stage.label.concurrency=2")
	if code != 0 || srv.Count() != 120 {
		t.Fatalf("re-run: exit %d, %d requests\n%s%s", code, srv.Count(), out, errs)
	}
	code, out, errs = repro(t, "cache", "requests", "--drop", "--failed", "--stage", "label")
	if code != 0 || !strings.Contains(out, "dropped 12") {
		t.Fatalf("drop --failed --stage label: %s%s", out, errs)
	}
	srv.Script = nil
	if code, out, errs := repro(t, "run", file, "-var", url, "--set", "stage.label.concurrency=3"); code != 0 || srv.Count() != 132 {
		t.Fatalf("run after dropping the failures: exit %d, %d requests (want 132)\n%s%s", code, srv.Count(), out, errs)
	}
	if n := storedAnswers(t); n != 120 {
		t.Fatalf("%d answers stored, want 120", n)
	}
	// One failure can be dropped by its key.
	srv.Script = func(n int, r *llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Content: "Sentence:"} }
	code, out, errs = repro(t, "cache", "requests", "--drop", "--stage", "label")
	if code != 0 || !strings.Contains(out, "dropped 120") {
		t.Fatalf("drop --stage label: %s%s", out, errs)
	}
}

// The same request in flight in two runs on one cache is paid once: the
// second run waits for the answer the first is getting. A larger and a
// smaller run of the label stage share their first 40 inputs' requests.
func TestLLMSharedRequestsPaidOnce(t *testing.T) {
	file, srv := llmWorkspace(t)
	url := "url=" + srv.BaseURL()
	if code, out, errs := repro(t, "run", file, "-var", url, "--target", "premises"); code != 0 {
		t.Fatalf("run --target premises: %s%s", out, errs)
	}
	// The server answers the first run's first request (sent alone, the
	// probe), then holds every answer until the second run's probe
	// arrives: the first run's 4 workers wait on theirs, and the second
	// run, whose first requests to send are those 4, probes with the next
	// one it can claim.
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
	start := func(inputs string) (*exec.Cmd, *bytes.Buffer) {
		cmd := cliCmd(t, "run", file, "-var", url, "--set", "stage.label.max_inputs="+inputs, "--set", "stage.label.timeout_seconds=120")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	big, bigOut := start("60")
	<-four
	small, smallOut := start("40")
	if err := big.Wait(); err != nil {
		t.Fatalf("the larger run: %v\n%s", err, bigOut)
	}
	if err := small.Wait(); err != nil {
		t.Fatalf("the smaller run: %v\n%s", err, smallOut)
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
		t.Fatalf("%d requests sent for 120 distinct ones (%d paid twice)\nlarger run:\n%s\nsmaller run:\n%s", srv.Count(), dup, bigOut, smallOut)
	}
}

// An answer past the size bound fails the run naming the request, and is
// not stored.
func TestLLMAnswerTooLarge(t *testing.T) {
	file, srv := llmWorkspace(t)
	url := "url=" + srv.BaseURL()
	if code, out, errs := repro(t, "run", file, "-var", url, "--target", "premises"); code != 0 {
		t.Fatalf("run --target premises: %s%s", out, errs)
	}
	huge := strings.Repeat("A long answer. ", 10<<20/15)
	srv.Script = func(n int, r *llmtest.ChatRequest) llmtest.Reply {
		if n == 5 {
			return llmtest.Reply{Content: huge}
		}
		return llmtest.Reply{}
	}
	code, out, errs := repro(t, "run", file, "-var", url)
	if code == 0 {
		t.Fatalf("a 10 MB answer was accepted:\n%s%s", out, errs)
	}
	if !strings.Contains(out+errs, "request ") || !strings.Contains(out+errs, "larger than") {
		t.Errorf("the failure does not name the request and the bound:\n%s%s", out, errs)
	}
	var size int64
	filepath.Walk(os.Getenv("REPRO_CACHE"), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	if size > 8<<20 {
		t.Errorf("the cache holds %d bytes after a refused 10 MB answer", size)
	}
}

// A re-run keeps the failed attempt's stage log beside the new one.
func TestLLMFailedLogKept(t *testing.T) {
	file, srv := llmWorkspace(t)
	url := "url=" + srv.BaseURL()
	srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Status: 404, Error: "no such model"}
	}
	if code, out, errs := repro(t, "run", file, "-var", url); code == 0 {
		t.Fatalf("the run succeeded:\n%s%s", out, errs)
	}
	srv.Script = nil
	if code, out, errs := repro(t, "run", file, "-var", url); code != 0 {
		t.Fatalf("re-run: %s%s", out, errs)
	}
	logs, err := filepath.Glob(filepath.Join(os.Getenv("REPRO_CACHE"), "logs", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	failed, done := 0, 0
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if strings.Contains(string(b), "synth.annotate") {
			if strings.Contains(string(b), "# FAILED") && strings.Contains(string(b), "no such model") {
				failed++
			}
			if strings.Contains(string(b), "# done") {
				done++
			}
		}
	}
	if failed != 1 || done != 1 {
		t.Fatalf("label's logs: %d of the failed attempt, %d of the successful one (want 1 and 1) among %v", failed, done, logs)
	}
}
