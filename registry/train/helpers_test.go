package train

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/datadir/datadirtest"
	"repro/internal/dataset"
	"repro/internal/rows"
	"repro/registry"
)

// useData points the catalogue at the test data directory and returns it.
func useData(t testing.TB) *dataset.Catalogue {
	t.Helper()
	dir := datadirtest.Dir(t)
	c := &dataset.Catalogue{Dirs: []string{dir}}
	catalogue = func() *dataset.Catalogue { return c }
	t.Cleanup(func() { catalogue = dataset.Default })
	return c
}

// progress records the last update.
type progress struct {
	mu          sync.Mutex
	calls       int
	done, total int
	status      string
	hook        func(done int)
}

func (p *progress) Update(done, total int, status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	p.done, p.total, p.status = done, total, status
	if p.hook != nil {
		p.hook(done)
	}
}

// stageRun is one invocation of a stage type.
type stageRun struct {
	name   string
	set    map[string]cty.Value
	inputs map[string]registry.Artifact
	work   string
	seed   int64
	log    slog.Handler // nil: discarded
}

// run decodes the defaults overridden by set through the registry's
// parameter path and runs the stage; it returns the output directory.
func (s stageRun) run(t testing.TB) (string, *progress, error) {
	t.Helper()
	return s.exec(t, context.Background(), nil)
}

// runCtx runs the stage under ctx, calling hook after every update.
func (s stageRun) runCtx(t testing.TB, ctx context.Context, hook func(done int)) error {
	t.Helper()
	_, _, err := s.exec(t, ctx, hook)
	return err
}

// allTypes is a registry of every train.* type.
func allTypes() *registry.Registry {
	r := registry.New()
	Register(r)
	RegisterPaSeR(r)
	RegisterLM(r)
	RegisterMLM(r)
	RegisterT5(r)
	RegisterCosine(r)
	return r
}

func (s stageRun) exec(t testing.TB, ctx context.Context, hook func(done int)) (string, *progress, error) {
	t.Helper()
	r := allTypes()
	st, ok := r.Lookup(s.name)
	if !ok {
		t.Fatalf("%s not registered", s.name)
	}
	ps, err := st.ParamSchema()
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]cty.Value{}
	for _, p := range ps {
		attrs[p.Name] = p.Default
	}
	for n, v := range s.set {
		if _, ok := attrs[n]; !ok {
			t.Fatalf("%s has no parameter %q", s.name, n)
		}
		attrs[n] = v
	}
	params, err := st.DecodeParams(cty.ObjectVal(attrs))
	if err != nil {
		t.Fatal(err)
	}
	// Each output port gets parent/PORT; the model's directory is returned
	// (the others are its siblings).
	parent := t.TempDir()
	outs := map[string]string{}
	for _, p := range st.Outputs {
		outs[p.Name] = filepath.Join(parent, p.Name)
		if err := os.Mkdir(outs[p.Name], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := outs["model"]
	pr := &progress{hook: hook}
	h := s.log
	if h == nil {
		h = slog.NewTextHandler(io.Discard, nil)
	}
	env := &registry.Env{Params: params, Inputs: s.inputs, Outputs: outs,
		Work: s.work, Seed: s.seed, Progress: pr, Log: slog.New(h)}
	return out, pr, st.Call(ctx, env)
}

// artifact writes rows as an artifact directory of the given kind.
func artifact[T any](t testing.TB, kind registry.Kind, file string, rs []T) registry.Artifact {
	t.Helper()
	dir := t.TempDir()
	if err := rows.Write(filepath.Join(dir, file), rs); err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Kind: kind, Dir: dir, Digest: "test"}
}

func sentencesArtifact(t testing.TB, ss []string) registry.Artifact {
	rs := make([]rows.Sentence, len(ss))
	for i, s := range ss {
		rs[i] = rows.Sentence{Text: s}
	}
	return artifact(t, registry.KindSentences, registry.FileSentences, rs)
}

// dirDigest hashes every file's name and bytes, in name order.
func dirDigest(t testing.TB, dir string) string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(h, strings.TrimPrefix(n, dir)+"\x00")
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}
