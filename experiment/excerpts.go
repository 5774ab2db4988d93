package experiment

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

// Excerpt is a stage's readable excerpt of its output (samples.md of a
// generation stage: seeded samples a reader judges the model by), shown
// under the table in the terminal and the markdown report.
type Excerpt struct {
	Stage, Output string
	Text          string
}

// stageExcerpts collects every samples.md among the run's artifacts, in
// graph order.
func stageExcerpts(res *runner.Result) []Excerpt {
	var out []Excerpt
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
			out = append(out, Excerpt{Stage: n.ID, Output: name, Text: strings.TrimSpace(string(b))})
		}
	}
	return out
}

// WriteExcerpts renders excerpts as markdown sections.
func WriteExcerpts(w io.Writer, xs []Excerpt) {
	for _, x := range xs {
		fmt.Fprintf(w, "\n### stage.%s.%s\n\n%s\n", x.Stage, x.Output, x.Text)
	}
}
