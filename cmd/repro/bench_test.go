package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
)

// BenchmarkCachedRun100 and BenchmarkPlan100 time `repro run` (every stage
// cached) and `repro plan` on a 100-stage pipeline of real stage types,
// in-process (add ~20 ms for process start; measured with the binary:
// 40-60 ms wall for either).
func BenchmarkCachedRun100(b *testing.B) { bench100(b, "run") }
func BenchmarkPlan100(b *testing.B)      { bench100(b, "plan") }

func bench100(b *testing.B, cmd string) {
	b.Setenv(datadir.Env, datadirtest.Dir(b))
	b.Setenv("CI", "true")
	dir := b.TempDir()
	b.Setenv("REPRO_CACHE", filepath.Join(dir, "cache"))
	var hcl strings.Builder
	hcl.WriteString("experiment \"bench100\" {\n  title = \"100 stages\"\n}\n")
	// The local Wikipedia sentences stand in for a paper's: declared.
	hcl.WriteString("deviation \"wiki\" {\n  what = \"sentences\"\n  paper = \"none\"\n  ours = \"local Wikipedia\"\n  why = \"a benchmark\"\n  stand_ins = [\"wiki\"]\n}\n")
	for i := 0; i < 100; i += 2 {
		fmt.Fprintf(&hcl, "stage \"s%d\" {\n  uses  = \"data.sentences\"\n  limit = %d\n}\n", i, i+1)
		fmt.Fprintf(&hcl, "stage \"s%d\" {\n  uses = \"encode.tfidf\"\n  corpus = stage.s%d.sentences\n  max_features = 50\n}\n", i+1, i)
	}
	file := filepath.Join(dir, "bench100.hcl")
	if err := os.WriteFile(file, []byte(hcl.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if code := run([]string{"run", file}, io.Discard, io.Discard); code != 0 {
		b.Fatalf("first run: exit %d", code)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code := run([]string{cmd, file}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("%s: exit %d", cmd, code)
		}
	}
}
