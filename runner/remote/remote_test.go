package remote

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/graph"
	"repro/registry"
	"repro/registry/builtin"
	"repro/store"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// A job rebuilds every built-in stage type's parameters from the canonical
// JSON the coordinator sends, byte for byte: otherwise it would refuse
// every job of that type.
func TestParamsRoundTrip(t *testing.T) {
	reg := builtin.Default()
	for _, name := range reg.Names() {
		st, _ := reg.Lookup(name)
		pv, err := st.ParamObject(nil)
		if err != nil {
			t.Fatal(err)
		}
		canon, err := graph.CanonicalParams(pv)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := st.ParamsFromJSON(canon)
		if err != nil {
			t.Errorf("%s: %v\n%s", name, err, canon)
			continue
		}
		again, _ := graph.CanonicalParams(back)
		if !bytes.Equal(canon, again) {
			t.Errorf("%s: %s reads back as %s", name, canon, again)
		}
	}
	// Numbers that HCL parses at high precision round-trip too.
	v := cty.ObjectVal(map[string]cty.Value{"lr": cty.NumberFloatVal(3e-5), "n": cty.NumberIntVal(1 << 60), "l": cty.ListVal([]cty.Value{cty.StringVal("a\"b")})})
	canon, _ := graph.CanonicalParams(v)
	back, err := ctyjson.Unmarshal(canon, v.Type())
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := graph.CanonicalParams(back); !bytes.Equal(canon, again) {
		t.Errorf("%s reads back as %s", canon, again)
	}
}

type echoParams struct {
	Text string `cty:"text"`
}

func echoRegistry(version int) *registry.Registry {
	reg := registry.New()
	reg.Add(&registry.StageType{
		Name: "test.echo", Version: version, Params: echoParams{Text: "hi"},
		Inputs:  []registry.Port{{Name: "in", Kind: registry.KindSentences, Optional: true}},
		Outputs: []registry.Port{{Name: "out", Kind: registry.KindSentences}},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*echoParams)
			text := p.Text
			if in, err := env.Input("in"); err == nil {
				b, err := os.ReadFile(in.Path("data.txt"))
				if err != nil {
					return err
				}
				text = strings.TrimSpace(string(b)) + " " + text
			}
			env.Log.Info("echo", "text", text)
			return os.WriteFile(filepath.Join(env.Output("out"), "data.txt"), []byte(text+"\n"), 0o644)
		},
	})
	return reg
}

// spec writes a job spec for test.echo in st and returns its path.
func writeSpec(t *testing.T, st *store.Store, key string, inputs map[string]Input) (string, *Spec) {
	t.Helper()
	dir := t.TempDir()
	s := &Spec{Node: "echo", Type: "test.echo", Version: 1, Params: []byte(`{"text":"hi"}`), Backend: "cpu",
		Key: key, Inputs: inputs, Store: st.Dir(), Outcome: filepath.Join(dir, "o.json"),
		Progress: filepath.Join(dir, "p.json"), Journal: filepath.Join(dir, "j.jsonl")}
	if s.Inputs == nil {
		s.Inputs = map[string]Input{}
	}
	p := filepath.Join(dir, "spec.json")
	if err := WriteJSON(p, s); err != nil {
		t.Fatal(err)
	}
	return p, s
}

// The job's key equals the coordinator's for the same declaration; it
// stores its output as an object and reports the complete provenance; an
// input named by another job's outcome is read from that outcome.
func TestExecKeyAndOutcome(t *testing.T) {
	reg := echoRegistry(1)
	st, err := store.Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	typ, _ := reg.Lookup("test.echo")
	pv, _ := typ.ParamObject(nil)
	n := &graph.Node{ID: "echo", Type: typ, Params: pv}
	want, _ := graph.Key(n, map[string]string{}, "cpu")
	path, spec := writeSpec(t, st, want, nil)
	var log bytes.Buffer
	if err := Exec(context.Background(), reg, path, "12_3", &log, nil); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	o, err := ReadOutcome(spec.Outcome)
	if err != nil {
		t.Fatal(err)
	}
	if !o.OK() || o.Key != want || o.Job != "12_3" || o.Device != "cpu" || len(o.Outputs) != 1 || o.Host == "" {
		t.Fatalf("outcome %+v", o)
	}
	if _, err := os.Stat(st.ObjectPath(o.Outputs[0].Digest)); err != nil {
		t.Errorf("output object: %v", err)
	}
	if !strings.Contains(log.String(), "msg=echo text=hi") {
		t.Errorf("the stage's log is not copied to the job's:\n%s", log.String())
	}
	// A second job reads the first one's output through its outcome file.
	path2, spec2 := writeSpec(t, st, "", map[string]Input{"in": {Kind: string(registry.KindSentences), From: spec.Outcome, Output: "out", Node: "echo"}})
	if err := Exec(context.Background(), reg, path2, "13", &log, nil); err != nil {
		t.Fatal(err)
	}
	o2, _ := ReadOutcome(spec2.Outcome)
	b, _ := os.ReadFile(filepath.Join(st.ObjectPath(o2.Outputs[0].Digest), "data.txt"))
	if string(b) != "hi hi\n" || o2.Inputs["in"] != o.Outputs[0].Digest {
		t.Errorf("chained job: %q, inputs %v", b, o2.Inputs)
	}
	// Nothing in the index: the coordinator records runs.
	if outs, _ := st.Outputs(context.Background(), o.Key); outs != nil {
		t.Error("the job wrote the index")
	}
}

// A job whose repro differs from the coordinator's -- another key, another
// stage version, an unknown type -- refuses to run and says why.
func TestExecRefuses(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cases := []struct {
		reg  *registry.Registry
		key  string
		want string
	}{
		{echoRegistry(1), strings.Repeat("ab", 32), "the coordinator's is abab"},
		{echoRegistry(2), "", "version 2 here, version 1 for the coordinator"},
		{registry.New(), "", `no stage type "test.echo"`},
	}
	for _, c := range cases {
		path, spec := writeSpec(t, st, c.key, nil)
		err := Exec(context.Background(), c.reg, path, "1", &bytes.Buffer{}, nil)
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want a refusal saying %q, got %v", c.want, err)
		}
		o, err := ReadOutcome(spec.Outcome)
		if err != nil || !o.Refused || o.OK() || len(o.Outputs) != 0 {
			t.Errorf("outcome %+v %v", o, err)
		}
	}
}

// The journal keeps every answer a job stored, across attempts; a torn
// last line (killed while appending) is left out, never an error.
func TestJournal(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, _ := st.Requests()
	k := func(c byte) string { return strings.Repeat(string(c), 64) }
	rs.PutRequest(ctx, registry.StoredRequest{Key: k('a'), Provider: "p", Model: "m", Request: []byte(`{}`), Response: []byte(`"A"`)})
	snap := filepath.Join(t.TempDir(), "snap.db")
	if n, err := st.SnapshotRequests(ctx, snap); err != nil || n != 1 {
		t.Fatalf("snapshot: %d %v", n, err)
	}
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := OpenJournal(path, snap)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok, _ := j.LookupRequest(ctx, k('a')); !ok || string(r) != `"A"` {
		t.Errorf("snapshot lookup: %q %v", r, ok)
	}
	if err := j.PutRequest(ctx, registry.StoredRequest{Key: k('b'), Provider: "p", Model: "m", Request: []byte(`{"x":1}`), Response: []byte(`"B"`), PromptTokens: 7}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	// A torn line after it.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"key":"cccc`)
	f.Close()
	j2, err := OpenJournal(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if r, ok, _ := j2.LookupRequest(ctx, k('b')); !ok || string(r) != `"B"` {
		t.Errorf("a requeued job does not find its own answer: %q %v", r, ok)
	}
	j2.Close()
	got, err := ReadJournal(path)
	if err != nil || len(got) != 1 || got[0].PromptTokens != 7 || string(got[0].Request) != `{"x":1}` {
		t.Fatalf("journal: %+v %v", got, err)
	}
	if n, err := st.PutRequests(ctx, append(got, got...)); err != nil || n != 1 {
		t.Errorf("merge: %d new, %v", n, err)
	}
	if r, ok, _ := rs.LookupRequest(ctx, k('b')); !ok || string(r) != `"B"` {
		t.Errorf("merged answer: %q %v", r, ok)
	}
}

// Two jobs' journals on one cache share their requests: what one claims
// the other does not, and the answer the holder stores is found by the
// other before any journal is merged (jobs of one experiment pay for a
// shared request once).
func TestJournalShared(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	snap := filepath.Join(t.TempDir(), "snap.db")
	if _, err := st.SnapshotRequests(ctx, snap); err != nil {
		t.Fatal(err)
	}
	open := func(name string) *Journal {
		j, err := OpenJournal(filepath.Join(t.TempDir(), name), snap)
		if err != nil {
			t.Fatal(err)
		}
		j.Share(st.SharedRequests())
		t.Cleanup(func() { j.Close() })
		return j
	}
	a, b := open("a.jsonl"), open("b.jsonl")
	var _ registry.RequestClaimer = a
	k := strings.Repeat("ab", 32)
	if ok, err := a.ClaimRequest(ctx, k); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if ok, err := b.ClaimRequest(ctx, k); ok || err != nil {
		t.Fatalf("the second job took a request the first is sending: %v %v", ok, err)
	}
	if err := a.PutRequest(ctx, registry.StoredRequest{Key: k, Provider: "p", Model: "m", Request: []byte(`{}`), Response: []byte(`"A"`)}); err != nil {
		t.Fatal(err)
	}
	if err := a.ReleaseRequest(ctx, k); err != nil {
		t.Fatal(err)
	}
	if r, ok, err := b.LookupRequest(ctx, k); !ok || err != nil || string(r) != `"A"` {
		t.Fatalf("the waiting job does not find the answer: %q %v %v", r, ok, err)
	}
	// A journal that does not share claims everything and publishes
	// nothing (a stage that sends no requests).
	plain, err := OpenJournal(filepath.Join(t.TempDir(), "c.jsonl"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	k2 := strings.Repeat("cd", 32)
	if ok, _ := b.ClaimRequest(ctx, k2); !ok {
		t.Fatal("no claim")
	}
	if ok, err := plain.ClaimRequest(ctx, k2); !ok || err != nil {
		t.Fatalf("an unshared journal: %v %v", ok, err)
	}
}
