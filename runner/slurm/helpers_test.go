package slurm

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"repro/graph"
	"repro/registry"
	"repro/runner/remote"

	"github.com/zclconf/go-cty/cty"
	"github.com/zeebo/blake3"
)

// TestMain lets the test binary act as `repro stage-exec` for the jobs the
// cluster tests submit (REPRO_SLURM_TEST_JOB=1, exported to the jobs by
// sbatch), with the test stage types below as its registry.
func TestMain(m *testing.M) {
	if os.Getenv("REPRO_SLURM_TEST_JOB") == "1" {
		if len(os.Args) != 3 || os.Args[1] != "stage-exec" {
			fmt.Fprintln(os.Stderr, "test job: want stage-exec SPEC")
			os.Exit(2)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := remote.Exec(ctx, testRegistry(), os.Args[2], os.Getenv("REPRO_JOB_ID"), os.Stdout, nil)
		stop()
		var re *remote.RefusedError
		switch {
		case err == nil:
			os.Exit(0)
		case errors.As(err, &re):
			os.Exit(remote.ExitRefused)
		}
		os.Exit(1)
	}
	os.Exit(m.Run())
}

type writeParams struct {
	Text    string  `cty:"text"`
	Seconds float64 `cty:"seconds"` // sleep this long first (cancellable)
	Fail    bool    `cty:"fail"`    // log a line, then fail
}

type joinParams struct {
	Sep string `cty:"sep"`
}

type scoreParams struct {
	Value float64 `cty:"value"` // the metric it writes: {"r5": value}
}

type askParams struct {
	Ask    string `cty:"ask"`    // the question looked up
	Answer string `cty:"answer"` // the question whose answer is stored
}

// testRegistry holds the stage types of these tests: test.write writes its
// text (after sleeping, or failing when asked); test.join joins its
// inputs; test.score writes a metrics artifact (a loop round's
// validation score); test.ask uses the language-model request cache (looks up one key,
// stores another), as a request-sending stage does.
func testRegistry() *registry.Registry {
	reg := registry.New()
	reg.Add(&registry.StageType{
		Name: "test.write", Version: 1, Params: writeParams{Text: "x"},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*writeParams)
			env.Log.Info("writing", "text", p.Text)
			if p.Fail {
				env.Log.Error("the stage fails on purpose")
				return fmt.Errorf("failing as asked")
			}
			deadline := time.Now().Add(time.Duration(p.Seconds * float64(time.Second)))
			for time.Now().Before(deadline) {
				env.Progress.Update(int(time.Until(deadline).Seconds()), 0, "sleeping")
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(50 * time.Millisecond):
				}
			}
			return os.WriteFile(filepath.Join(env.Output("out"), "data.txt"), []byte(p.Text+"\n"), 0o644)
		},
	})
	reg.Add(&registry.StageType{
		Name: "test.join", Version: 1, Params: joinParams{Sep: "+"},
		Inputs: []registry.Port{{Name: "a", Kind: registry.KindSentences},
			{Name: "b", Kind: registry.KindSentences, Optional: true}},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*joinParams)
			var parts []string
			for _, port := range []string{"a", "b"} {
				in, err := env.Input(port)
				if err != nil {
					continue
				}
				b, err := os.ReadFile(in.Path("data.txt"))
				if err != nil {
					return err
				}
				parts = append(parts, strings.TrimSpace(string(b)))
			}
			return os.WriteFile(filepath.Join(env.Output("out"), "data.txt"), []byte(strings.Join(parts, p.Sep)+"\n"), 0o644)
		},
	})
	reg.Add(&registry.StageType{
		Name: "test.score", Version: 1, Params: scoreParams{},
		Inputs:  []registry.Port{{Name: "a", Kind: registry.KindSentences}},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindMetrics}},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*scoreParams)
			return os.WriteFile(filepath.Join(env.Output("out"), registry.FileMetrics), []byte(fmt.Sprintf(`{"r5": %g}`, p.Value)), 0o644)
		},
	})
	reg.Add(&registry.StageType{
		Name: "test.ask", Version: 1, Params: askParams{Ask: "q1", Answer: "q2"},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Requests: func(ctx context.Context, env *registry.Env) (*registry.RequestEstimate, error) {
			return nil, nil
		},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*askParams)
			resp, ok, err := env.Requests.LookupRequest(ctx, key(p.Ask))
			if err != nil {
				return err
			}
			if !ok {
				resp = []byte(`"unanswered"`)
			}
			if err := env.Requests.PutRequest(ctx, registry.StoredRequest{Key: key(p.Answer), Provider: "test", Model: "m",
				Request: []byte(`{"q":"` + p.Answer + `"}`), Response: []byte(`"answer to ` + p.Answer + `"`), PromptTokens: 3}); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(env.Output("out"), "data.txt"), append(resp, '\n'), 0o644)
		},
	})
	return reg
}

// key is a request key for a test question.
func key(q string) string {
	sum := blake3.Sum256([]byte(q))
	return hex.EncodeToString(sum[:])
}

// node builds a graph node of a test type with its parameters.
func node(t *testing.T, reg *registry.Registry, id, typ, source string, params map[string]cty.Value, inputs map[string]graph.Edge) *graph.Node {
	t.Helper()
	st, ok := reg.Lookup(typ)
	if !ok {
		t.Fatalf("no type %s", typ)
	}
	pv, err := st.ParamObject(params)
	if err != nil {
		t.Fatal(err)
	}
	if inputs == nil {
		inputs = map[string]graph.Edge{}
	}
	return &graph.Node{ID: id, Type: st, Params: pv, Inputs: inputs, Source: source, Resources: st.DefaultResources()}
}
