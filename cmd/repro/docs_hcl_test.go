package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestDocsHCLExamples: every fenced hcl block in the README and docs parses
// as HCL, so an example a reader copies is at least valid syntax (a
// one-line block takes one argument, which is easy to forget in prose).
func TestDocsHCLExamples(t *testing.T) {
	pages := []string{"../../README.md", "../../ARCHITECTURE.md"}
	for _, glob := range []string{"../../docs/*.md", "../../docs/papers/*.md"} {
		m, _ := filepath.Glob(glob)
		pages = append(pages, m...)
	}
	fence := regexp.MustCompile("(?s)```hcl\n(.*?)```")
	blocks := 0
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range fence.FindAllSubmatchIndex(b, -1) {
			blocks++
			line := 1 + countNewlines(b[:m[2]])
			name := fmt.Sprintf("%s (hcl block %d)", filepath.Base(p), i+1)
			if _, diags := hclsyntax.ParseConfig(b[m[2]:m[3]], name, hcl.Pos{Line: line, Column: 1}); diags.HasErrors() {
				t.Errorf("%s: %v", name, diags)
			}
		}
	}
	if blocks < 10 {
		t.Errorf("only %d hcl blocks found in the docs: the page list is wrong", blocks)
	}
}

func countNewlines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}
