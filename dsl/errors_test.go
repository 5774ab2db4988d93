package dsl

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorFixtures checks diagnostics the Terraform way: each fixture in
// testdata/errors carries `# ERROR: text` on the line a diagnostic must point
// at (text is a substring of "Summary; Detail"). Every expected diagnostic
// must appear on its line, and no other diagnostic may appear. A line
// `# OPTIONS: key=value` (profile, ablation, set, var) selects load options.
func TestErrorFixtures(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/errors/*.hcl")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			src := mustRead(t, path)
			want, opts := parseExpectations(t, src)
			if len(want) == 0 {
				t.Fatal("fixture expects no error")
			}
			l := NewLoader(testRegistry())
			cfg, diags := l.LoadSource(path, src, opts)
			if cfg != nil {
				t.Errorf("a config with errors was returned")
			}
			used := make([]bool, len(want))
			for _, d := range diags {
				text := d.Summary + "; " + d.Detail
				if d.Subject == nil || d.Subject.Filename != path {
					t.Errorf("diagnostic outside the fixture: %v %s", d.Subject, text)
					continue
				}
				found := false
				for i, w := range want {
					if !used[i] && w.line == d.Subject.Start.Line && strings.Contains(text, w.text) {
						used[i], found = true, true
						break
					}
				}
				if !found {
					t.Errorf("unexpected diagnostic at line %d: %s", d.Subject.Start.Line, text)
				}
			}
			for i, w := range want {
				if !used[i] {
					t.Errorf("line %d: missing diagnostic containing %q", w.line, w.text)
				}
			}
			if t.Failed() {
				var b bytes.Buffer
				Render(&b, l.Files(), diags)
				t.Logf("all diagnostics:\n%s", b.String())
			}
		})
	}
}

type expectation struct {
	line int
	text string
}

func parseExpectations(t *testing.T, src []byte) ([]expectation, Options) {
	var out []expectation
	var opts Options
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# OPTIONS: "); ok {
			key, val, _ := strings.Cut(rest, "=")
			switch key {
			case "profile":
				opts.Profile = val
			case "ablation":
				opts.Ablation = val
			case "set":
				opts.Sets = append(opts.Sets, val)
			case "var":
				if opts.Vars == nil {
					opts.Vars = map[string]string{}
				}
				k, v, _ := strings.Cut(val, "=")
				opts.Vars[k] = v
			default:
				t.Fatalf("line %d: unknown option %q", n, key)
			}
			continue
		}
		parts := strings.Split(line, "# ERROR: ")
		for _, p := range parts[1:] {
			out = append(out, expectation{line: n, text: strings.TrimSpace(p)})
		}
	}
	if err := sc.Err(); err != nil {
		panic(fmt.Sprint(err))
	}
	return out, opts
}
