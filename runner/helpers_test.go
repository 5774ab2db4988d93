package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"repro/graph"
	"repro/registry"
	"repro/store"

	"github.com/zclconf/go-cty/cty"
)

// Stage types used by the tests. They are defined here, never registered in
// a shared registry: the runner only needs *registry.StageType values.

// counter counts stage executions by node ID and, when side is set, appends
// each execution to a side file, so executions in other processes count too.
type counter struct {
	mu   sync.Mutex
	n    map[string]int
	side string
}

func newCounter(side string) *counter { return &counter{n: map[string]int{}, side: side} }

func (c *counter) hit(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[node]++
	if c.side != "" {
		f, err := os.OpenFile(c.side, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, node)
			f.Close()
		}
	}
}

func (c *counter) get(node string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[node]
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := 0
	for _, v := range c.n {
		t += v
	}
	return t
}

func (c *counter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = map[string]int{}
}

type sourceParams struct {
	Text   string `cty:"text"`
	Repeat int    `cty:"repeat"`
	// Chunks > 0 writes the data in that many chunks with SleepMS between
	// them, so a kill can land in the middle of a write.
	Chunks  int     `cty:"chunks"`
	SleepMS int     `cty:"sleep_ms"`
	Scale   float64 `cty:"scale"`
}

type transformParams struct {
	Suffix  string `cty:"suffix"`
	SleepMS int    `cty:"sleep_ms"`
}

// testTypes returns the test stage types, counting executions in cnt.
func testTypes(cnt *counter) map[string]*registry.StageType {
	ts := map[string]*registry.StageType{}
	// source writes Text*Repeat into data.txt.
	ts["source"] = &registry.StageType{
		Name: "test.source", Version: 1, Params: sourceParams{Text: "hello", Repeat: 1},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*sourceParams)
			cnt.hit(nodeFrom(env))
			return writeChunks(ctx, filepath.Join(env.Output("out"), "data.txt"), p.Text, p.Repeat, p.Chunks, p.SleepMS)
		},
	}
	// upper appends Suffix to its input (and the seed when Seeded).
	transform := func(name string, seeded bool) *registry.StageType {
		return &registry.StageType{
			Name: name, Version: 1, Params: transformParams{Suffix: "!"}, Seeded: seeded,
			Inputs:  []registry.Port{{Name: "in", Kind: registry.KindSentences}, {Name: "extra", Kind: registry.KindSentences, Optional: true}},
			Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
			Run: func(ctx context.Context, env *registry.Env) error {
				p := env.Params.(*transformParams)
				cnt.hit(nodeFrom(env))
				in, err := env.Input("in")
				if err != nil {
					return err
				}
				b, err := os.ReadFile(in.Path("data.txt"))
				if err != nil {
					return err
				}
				if ex, err := env.Input("extra"); err == nil {
					eb, err := os.ReadFile(ex.Path("data.txt"))
					if err != nil {
						return err
					}
					b = append(b, eb...)
				}
				if p.SleepMS > 0 {
					select {
					case <-time.After(time.Duration(p.SleepMS) * time.Millisecond):
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				out := string(b) + p.Suffix
				if seeded {
					out += fmt.Sprint(env.Seed)
				}
				env.Log.Info("transform", "bytes", len(out))
				return os.WriteFile(filepath.Join(env.Output("out"), "data.txt"), []byte(out), 0o644)
			},
		}
	}
	ts["transform"] = transform("test.transform", false)
	ts["seeded"] = transform("test.seeded", true)
	// constant ignores its input's content: early cut-off.
	ts["constant"] = &registry.StageType{
		Name: "test.constant", Version: 1,
		Inputs:  []registry.Port{{Name: "in", Kind: registry.KindSentences}},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Run: func(ctx context.Context, env *registry.Env) error {
			cnt.hit(nodeFrom(env))
			return os.WriteFile(filepath.Join(env.Output("out"), "data.txt"), []byte("constant"), 0o644)
		},
	}
	ts["fail"] = &registry.StageType{
		Name: "test.fail", Version: 1,
		Inputs:  []registry.Port{{Name: "in", Kind: registry.KindSentences, Optional: true}},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Run: func(ctx context.Context, env *registry.Env) error {
			cnt.hit(nodeFrom(env))
			os.WriteFile(filepath.Join(env.Output("out"), "half.txt"), []byte("half"), 0o644)
			return errors.New("bad row at data.txt:3: score is not a number")
		},
	}
	ts["panic"] = &registry.StageType{
		Name: "test.panic", Version: 1,
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Run: func(ctx context.Context, env *registry.Env) error {
			cnt.hit(nodeFrom(env))
			var m map[string]int
			m["boom"]++ // a genuine runtime panic
			return nil
		},
	}
	// wait blocks until cancelled, reporting progress.
	ts["wait"] = &registry.StageType{
		Name: "test.wait", Version: 1, Tensor: true,
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Run: func(ctx context.Context, env *registry.Env) error {
			cnt.hit(nodeFrom(env))
			os.WriteFile(filepath.Join(env.Output("out"), "partial.txt"), []byte("partial"), 0o644)
			env.Progress.Update(0, 10, "waiting")
			<-ctx.Done()
			return ctx.Err()
		},
	}
	// steps reports progress over 20 steps of 5ms.
	ts["steps"] = &registry.StageType{
		Name: "test.steps", Version: 1, Tensor: true,
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindMetrics}},
		Run: func(ctx context.Context, env *registry.Env) error {
			cnt.hit(nodeFrom(env))
			for i := 0; i <= 20; i++ {
				env.Progress.Update(i, 20, fmt.Sprintf("loss %.2f", 1/float64(i+1)))
				time.Sleep(5 * time.Millisecond)
			}
			return os.WriteFile(filepath.Join(env.Output("out"), "metrics.json"), []byte(`{"device":"`+env.Device.Name+`"}`), 0o644)
		},
	}
	return ts
}

// nodeFrom returns the node ID for counting. Stages are not told their node
// (their output must not depend on it), but the runner writes
// "# stage <id> ..." as the first line of the stage's log; read it back.
func nodeFrom(env *registry.Env) string {
	f, ok := env.LogWriter.(*os.File)
	if !ok {
		return "?"
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return "?"
	}
	var id string
	fmt.Sscanf(string(b), "# stage %s", &id)
	return id
}

func writeChunks(ctx context.Context, path, text string, repeat, chunks, sleepMS int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if chunks <= 0 {
		chunks = 1
	}
	per := repeat / chunks
	for c := 0; c < chunks; c++ {
		n := per
		if c == chunks-1 {
			n = repeat - per*(chunks-1)
		}
		for i := 0; i < n; i++ {
			if _, err := f.WriteString(text); err != nil {
				return err
			}
		}
		if sleepMS > 0 {
			select {
			case <-time.After(time.Duration(sleepMS) * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// params builds a complete parameter object from the type's defaults and
// overrides, as the dsl would.
func params(t testing.TB, st *registry.StageType, over map[string]cty.Value) cty.Value {
	t.Helper()
	v, err := st.ParamObject(over)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func node(t testing.TB, id string, st *registry.StageType, over map[string]cty.Value, inputs map[string]graph.Edge) *graph.Node {
	return &graph.Node{ID: id, Type: st, Params: params(t, st, over), Inputs: inputs}
}

func openTemp(t testing.TB) *store.Store {
	t.Helper()
	c, err := store.Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func statuses(r *Result) map[string]string {
	m := map[string]string{}
	for _, n := range r.Nodes {
		m[n.ID] = n.Status.String()
	}
	return m
}
