package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"repro/registry"
	"repro/runner"
)

// excerpt is a stage's readable excerpt of its output (samples.md of a
// generation stage: seeded samples a reader judges the model by), shown
// under the table.
type excerpt struct {
	stage, output string
	text          string
}

// stageExcerpts collects every samples.md among the run's artifacts, in
// graph order.
func stageExcerpts(res *runner.Result) []excerpt {
	var out []excerpt
	for _, n := range res.Nodes {
		names := make([]string, 0, len(n.Outputs))
		for name := range n.Outputs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			b, err := os.ReadFile(filepath.Join(n.Outputs[name].Dir, registry.FileSamples))
			if err != nil {
				continue
			}
			out = append(out, excerpt{stage: n.ID, output: name, text: strings.TrimSpace(string(b))})
		}
	}
	return out
}

// writeExcerpts renders excerpts as markdown sections.
func writeExcerpts(w io.Writer, xs []excerpt) {
	for _, x := range xs {
		fmt.Fprintf(w, "\n### stage.%s.%s\n\n%s\n", x.stage, x.output, x.text)
	}
}
