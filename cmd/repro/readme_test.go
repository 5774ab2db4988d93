package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/datadir"
	"repro/internal/datadir/datadirtest"
)

// TestReadmeListsPaperDeviations: README's "The papers" table has one row
// per paper experiment, `| Paper | [F.md](docs/papers/F.md) | -var ... |
// deviations |`, whose last cell names the deviations the file's paper
// profile declares now (its own, in the file's order; a module's are on the
// module's page, as TestPaperPagesListDeviations has it), and whose -var
// cell names only variables the file declares. A deviation added, removed
// or renamed fails here until the front page says so.
func TestReadmeListsPaperDeviations(t *testing.T) {
	t.Setenv(datadir.Env, datadirtest.Dir(t))
	src, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(l, "| ") || !strings.Contains(l, "](docs/papers/") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "| "), " | ")
		if len(cells) != 4 {
			continue
		}
		i := strings.Index(cells[1], "](docs/papers/")
		name := strings.TrimSuffix(cells[1][i+len("](docs/papers/"):], ".md)")
		rows[name] = cells
	}
	for _, paper := range []string{"gense", "syncse", "dino", "paser", "infocse", "simcse"} {
		cells, ok := rows[paper]
		if !ok {
			t.Errorf("README.md: no row | ... | [%s.md](docs/papers/%s.md) | ... | in the papers table", paper, paper)
			continue
		}
		file := filepath.Join("..", "..", "experiments", paper+".hcl")
		want := paperDeviationNames(t, file)
		if cells[3] != want {
			t.Errorf("README.md, %s's row: deviations cell\n  %s\nwant (the paper profile's declared deviations)\n  %s", paper, cells[3], want)
		}
		hcl, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range strings.Split(cells[2], ", ") {
			v = strings.Trim(v, "`")
			if v == "none" {
				continue
			}
			if !strings.HasPrefix(v, "-var ") {
				t.Errorf("README.md, %s's row: %q in the -var cell is not `-var NAME`", paper, v)
				continue
			}
			if !strings.Contains(string(hcl), "variable \""+strings.TrimPrefix(v, "-var ")+"\"") {
				t.Errorf("README.md, %s's row: %s names no variable of %s", paper, v, file)
			}
		}
	}
}
