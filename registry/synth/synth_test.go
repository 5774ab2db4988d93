package synth

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/llm/llmtest"
	"repro/internal/rows"
	"repro/internal/syncse"
	"repro/registry"
)

// memStore is a registry.RequestStore in memory.
type memStore struct {
	mu sync.Mutex
	m  map[string]registry.StoredRequest
}

func newMemStore() *memStore { return &memStore{m: map[string]registry.StoredRequest{}} }

func (s *memStore) LookupRequest(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[key]
	return r.Response, ok, nil
}

func (s *memStore) PutRequest(_ context.Context, r registry.StoredRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[r.Key]; !ok {
		s.m[r.Key] = r
	}
	return nil
}

// stage is one stage type set up for tests: parameters are its defaults
// with overrides, inputs are files written to temporary artifacts.
type stage struct {
	t      *testing.T
	typ    *registry.StageType
	set    map[string]cty.Value
	inputs map[string]registry.Artifact
	store  registry.RequestStore
	seed   int64
}

func newStage(t *testing.T, name string, srv *llmtest.Server) *stage {
	r := registry.New()
	Register(r)
	st, ok := r.Lookup(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	s := &stage{t: t, typ: st, set: map[string]cty.Value{}, inputs: map[string]registry.Artifact{}, store: newMemStore(), seed: 42}
	if srv != nil {
		s.set["base_url"] = cty.StringVal(srv.BaseURL())
		s.set["model"] = cty.StringVal("test-model")
		s.set["api_key_env"] = cty.StringVal("")
		s.set["concurrency"] = cty.NumberIntVal(4)
		s.set["requests_per_minute"] = cty.NumberIntVal(0)
		s.set["tokens_per_minute"] = cty.NumberIntVal(0)
	}
	return s
}

func (s *stage) input(port, file string, rs any) {
	dir := s.t.TempDir()
	var err error
	switch v := rs.(type) {
	case []rows.Sentence:
		err = rows.Write(filepath.Join(dir, file), v)
	case []rows.Triplet:
		err = rows.Write(filepath.Join(dir, file), v)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	s.inputs[port] = registry.Artifact{Dir: dir, Digest: port}
}

func (s *stage) env() *registry.Env {
	ps, err := s.typ.ParamSchema()
	if err != nil {
		s.t.Fatal(err)
	}
	attrs := map[string]cty.Value{}
	for _, p := range ps {
		attrs[p.Name] = p.Default
		if v, ok := s.set[p.Name]; ok {
			attrs[p.Name] = v
		}
	}
	params, err := s.typ.DecodeParams(cty.ObjectVal(attrs))
	if err != nil {
		s.t.Fatal(err)
	}
	outs := map[string]string{}
	for _, p := range s.typ.Outputs {
		outs[p.Name] = s.t.TempDir()
	}
	return &registry.Env{Params: params, Inputs: s.inputs, Outputs: outs, Seed: s.seed, Requests: s.store}
}

// run runs the stage and returns its output directories.
func (s *stage) run() (map[string]string, error) {
	env := s.env()
	return env.Outputs, s.typ.Call(context.Background(), env)
}

func (s *stage) mustRun() map[string]string {
	s.t.Helper()
	out, err := s.run()
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

func strs(ss ...string) cty.Value {
	vs := make([]cty.Value, len(ss))
	for i, x := range ss {
		vs[i] = cty.StringVal(x)
	}
	return cty.ListVal(vs)
}

func sentences(n int, f string) []rows.Sentence {
	out := make([]rows.Sentence, n)
	for i := range out {
		out[i] = rows.Sentence{Text: fmt.Sprintf(f, i)}
	}
	return out
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// listAnswer answers a sentence request with a numbered list (a function of
// all its messages): about every fifth call refuses (no list), items repeat across calls, one is too long.
func listAnswer(r *llmtest.ChatRequest) string {
	last := r.Last()
	if strings.Contains(last, "naive") {
		return "1. Naive one.\n2. Naive two."
	}
	h := 0
	for _, m := range r.Messages {
		for _, c := range m.Content {
			h = h*31 + int(c)
		}
	}
	if h%5 == 0 {
		return "I am sorry, but I cannot help with that."
	}
	var b strings.Builder
	b.WriteString("Here are the sentences:\n")
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&b, "%d. Sentence %d of answer %d.\n", i, i, h)
	}
	b.WriteString("5. The same sentence in every answer.\n")
	b.WriteString("6. " + strings.Repeat("word ", 40) + "\n")
	return b.String()
}

func TestSentences(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Answer = listAnswer
	s := newStage(t, "synth.sentences", srv)
	s.set["genres"] = strs("fiction", "letters", "short image captions")
	s.set["calls_per_genre"] = cty.NumberIntVal(5)
	s.input("examples", registry.FileSentences, sentences(50, "Example sentence number %d here."))
	out := s.mustRun()
	if n := srv.Count(); n != 15 {
		t.Fatalf("%d requests, want 3 genres x 5 calls", n)
	}
	for _, r := range srv.Received() {
		b := r.Body
		if *b.Temperature != 1.3 || *b.TopP != 1.0 || *b.PresencePenalty != 0.3 || *b.FrequencyPenalty != 0.3 || b.Model != "test-model" {
			t.Fatalf("sampling on the wire: %s", r.Raw)
		}
		if r.Authorization != "" {
			t.Fatal("a key was sent with api_key_env empty")
		}
		if len(b.Messages) != 3 || !strings.Contains(b.Messages[2].Content, "20") {
			t.Fatalf("not the one-shot format: %s", r.Raw)
		}
	}
	ss, err := rows.Read[rows.Sentence](filepath.Join(out["sentences"], registry.FileSentences))
	if err != nil {
		t.Fatal(err)
	}
	type prov struct {
		Genre   string `json:"genre"`
		Request string `json:"request"`
	}
	var ps []map[string]any
	if ps, err = rows.Read[map[string]any](filepath.Join(out["sentences"], FileProvenance)); err != nil || len(ps) != len(ss) {
		t.Fatalf("provenance: %d rows for %d sentences (%v)", len(ps), len(ss), err)
	}
	metrics := string(read(t, filepath.Join(out["metrics"], registry.FileMetrics)))
	var mal int
	fmt.Sscanf(metrics[strings.Index(metrics, `"malformed_answers"`)+len(`"malformed_answers": `):], "%d", &mal)
	// 15 calls: the refusals are malformed, each list has 4 own items, a
	// repeated one (kept once) and a too-long one (dropped).
	wantSentences := (15-mal)*4 + 1
	if len(ss) != wantSentences || !strings.Contains(metrics, fmt.Sprintf(`"too_long": %d`, 15-mal)) {
		t.Fatalf("%d sentences (%d malformed answers), want %d\n%s", len(ss), mal, wantSentences, metrics)
	}
	for _, x := range ss {
		if syncse.Words(x.Text) > 32 {
			t.Fatalf("a sentence over 32 words kept: %q", x.Text)
		}
	}

	// A re-run sends nothing and writes the same bytes; so does a change of
	// a parameter that cannot change an answer.
	s.set["concurrency"] = cty.NumberIntVal(1)
	s.set["timeout_seconds"] = cty.NumberIntVal(5)
	out2 := s.mustRun()
	if srv.Count() != 15 {
		t.Fatalf("the re-run sent %d requests", srv.Count()-15)
	}
	for _, f := range []string{"sentences/" + registry.FileSentences, "sentences/" + FileProvenance, "metrics/" + registry.FileMetrics} {
		port, name, _ := strings.Cut(f, "/")
		if !bytes.Equal(read(t, filepath.Join(out[port], name)), read(t, filepath.Join(out2[port], name))) {
			t.Errorf("%s differs on a re-run", f)
		}
	}
	// A wider grid sends only the new calls.
	s.set["calls_per_genre"] = cty.NumberIntVal(7)
	s.set["genres"] = strs("fiction", "letters", "short image captions", "travelogue")
	s.mustRun()
	if n := srv.Count() - 15; n != 3*2+7 {
		t.Fatalf("the wider grid sent %d requests, want %d", n, 3*2+7)
	}
}

// Table 8's naive generation: the same messages every call, each call its
// own request; a provider that always refuses fails the stage clearly.
func TestSentencesNaiveAndNothingParsed(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Answer = listAnswer
	s := newStage(t, "synth.sentences", srv)
	s.set["genres"] = strs("any")
	s.set["topics_per_call"] = cty.NumberIntVal(0)
	s.set["prompts"] = strs("Write {count} naive sentences.")
	s.set["fixed"] = cty.True
	s.set["calls_per_genre"] = cty.NumberIntVal(3)
	s.input("examples", registry.FileSentences, sentences(50, "Example sentence number %d here."))
	out := s.mustRun()
	rs := srv.Received()
	if len(rs) != 3 || string(rs[0].Raw) != string(rs[1].Raw) {
		t.Fatalf("%d requests; naive requests should be identical on the wire", len(rs))
	}
	ss, _ := rows.Read[rows.Sentence](filepath.Join(out["sentences"], registry.FileSentences))
	if len(ss) != 2 {
		t.Fatalf("%d sentences, want 2 (identical answers deduplicated)", len(ss))
	}

	srv.Answer = func(*llmtest.ChatRequest) string { return "No." }
	s.store = newMemStore()
	_, err := s.run()
	if err == nil || !strings.Contains(err.Error(), "no sentence survived") || !strings.Contains(err.Error(), "3 malformed") {
		t.Fatalf("error %v", err)
	}
}

// labelAnswer answers labelling calls: positives "P: input" (quoted),
// negatives "Not input", an empty answer for inputs containing "blank".
func labelAnswer(r *llmtest.ChatRequest) string {
	in := r.Last()
	if strings.Contains(in, "blank") {
		return "   "
	}
	for _, p := range syncse.PositivePrompts {
		if r.Messages[0].Content == p {
			return `"P: ` + in + `"`
		}
	}
	return "Here is one:\nNot " + in
}

func nli(n int) []rows.Triplet {
	out := make([]rows.Triplet, n)
	for i := range out {
		out[i] = rows.Triplet{Anchor: fmt.Sprintf("Premise %d.", i), Positive: fmt.Sprintf("Entailed %d.", i), Negative: fmt.Sprintf("Contradicted %d.", i)}
	}
	return out
}

func TestAnnotate(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Answer = labelAnswer
	s := newStage(t, "synth.annotate", srv)
	inputs := []rows.Sentence{{Text: "Premise 3."}, {Text: "A dog runs."}, {Text: "A blank one."}, {Text: strings.Repeat("long ", 33)}, {Text: "A dog runs."}}
	s.input("input", registry.FileSentences, inputs)
	s.input("exemplars", registry.FileTriplets, nli(40))
	out := s.mustRun()
	if n := srv.Count(); n != 2*4 {
		t.Fatalf("%d requests, want 8 (4 distinct inputs x 2 labels; the repeated input's requests are the same)", n)
	}
	for _, r := range srv.Received() {
		b := r.Body
		pos := b.Messages[0].Content == syncse.PositivePrompts[0] || b.Messages[0].Content == syncse.PositivePrompts[1] ||
			b.Messages[0].Content == syncse.PositivePrompts[2] || b.Messages[0].Content == syncse.PositivePrompts[3]
		wantTopP := 0.95
		if pos {
			wantTopP = 0.9
		}
		if len(b.Messages) != 12 || b.Messages[0].Role != "system" || *b.Temperature != 1.0 || *b.TopP != wantTopP {
			t.Fatalf("request %s", r.Raw)
		}
		for i := 1; i < 11; i += 2 {
			if b.Messages[i].Role != "user" || b.Messages[i+1].Role != "assistant" {
				t.Fatalf("not a multi-turn few-shot chat: %s", r.Raw)
			}
			if b.Messages[i].Content == b.Last() {
				t.Fatalf("the input's own triplet shown as an exemplar: %s", r.Raw)
			}
		}
	}
	ts, err := rows.Read[rows.Triplet](filepath.Join(out["triplets"], registry.FileTriplets))
	if err != nil {
		t.Fatal(err)
	}
	want := []rows.Triplet{
		{Anchor: "Premise 3.", Positive: "P: Premise 3.", Negative: "Not Premise 3."},
		{Anchor: "A dog runs.", Positive: "P: A dog runs.", Negative: "Not A dog runs."},
	}
	if !reflect.DeepEqual(ts, want) {
		t.Fatalf("triplets %+v", ts)
	}
	m := string(read(t, filepath.Join(out["metrics"], registry.FileMetrics)))
	for _, w := range []string{`"malformed_positive": 1`, `"malformed_negative": 1`, `"too_long": 1`, `"repeated": 1`, `"unlabelled": 1`, `"triplets": 2`, `"requests": 10`} {
		if !strings.Contains(m, w) {
			t.Errorf("metrics lack %s:\n%s", w, m)
		}
	}

	// tries = 2 asks again only for the malformed answers, as new requests.
	s.set["tries"] = cty.NumberIntVal(2)
	s.mustRun()
	if n := srv.Count(); n != 8+2 {
		t.Fatalf("tries=2 sent %d more requests, want 2", n-8)
	}
	// Editing one negative prompt re-sends only the negatives that chose it.
	neg := append([]string{}, syncse.NegativePrompts...)
	neg[2] = "Contradict the sentence."
	s.set["negative_prompts"] = strs(neg...)
	s.set["tries"] = cty.NumberIntVal(1)
	before := srv.Count()
	s.mustRun()
	for _, r := range srv.Received()[before:] {
		if r.Body.Messages[0].Content != "Contradict the sentence." {
			t.Fatalf("a request that did not choose the edited prompt was sent again: %s", r.Body.Messages[0].Content)
		}
	}
}

// The key is read from the variable api_key_env names, only when a request
// must be sent; it reaches the server and nothing else.
func TestAPIKey(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Answer = labelAnswer
	s := newStage(t, "synth.annotate", srv)
	s.set["api_key_env"] = cty.StringVal("REPRO_TEST_LLM_KEY")
	s.input("input", registry.FileSentences, []rows.Sentence{{Text: "A cat sleeps."}})
	s.input("exemplars", registry.FileTriplets, nli(30))
	os.Unsetenv("REPRO_TEST_LLM_KEY")
	_, err := s.run()
	if err == nil || !strings.Contains(err.Error(), "REPRO_TEST_LLM_KEY") || srv.Count() != 0 {
		t.Fatalf("no key: error %v, %d requests sent", err, srv.Count())
	}
	t.Setenv("REPRO_TEST_LLM_KEY", "sk-secret-123")
	out := s.mustRun()
	for _, r := range srv.Received() {
		if r.Authorization != "Bearer sk-secret-123" {
			t.Fatalf("Authorization %q", r.Authorization)
		}
	}
	// Every answer is cached now: no key needed.
	os.Unsetenv("REPRO_TEST_LLM_KEY")
	out2 := s.mustRun()
	for _, dir := range []string{out["triplets"], out["metrics"], out2["triplets"]} {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && bytes.Contains(read(t, p), []byte("sk-secret")) {
				t.Errorf("%s holds the key", p)
			}
			return nil
		})
	}
	for _, r := range s.store.(*memStore).m {
		if bytes.Contains(r.Request, []byte("sk-secret")) || bytes.Contains(r.Response, []byte("sk-secret")) || strings.Contains(r.Key, "sk-secret") {
			t.Error("the request store holds the key")
		}
	}
	// A rejected key stops the stage at once with a message naming the variable.
	srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Status: 401, Error: "Incorrect API key provided"}
	}
	t.Setenv("REPRO_TEST_LLM_KEY", "sk-wrong")
	s.store = newMemStore()
	before := srv.Count()
	_, err = s.run()
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "api_key_env") || strings.Contains(err.Error(), "sk-wrong") {
		t.Fatalf("401: %v", err)
	}
	if n := srv.Count() - before; n > 4 {
		t.Fatalf("%d requests after a 401", n)
	}
}

func TestEstimates(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Answer = labelAnswer
	s := newStage(t, "synth.annotate", srv)
	s.set["max_inputs"] = cty.NumberIntVal(100)
	e, err := s.typ.Requests(context.Background(), s.env())
	if err != nil || e.Exact || e.Requests != 200 || e.PromptTokens == 0 || !strings.Contains(e.Note, "not computed") {
		t.Fatalf("estimate without inputs: %+v, %v", e, err)
	}
	s.set["max_inputs"] = cty.NumberIntVal(0)
	s.input("input", registry.FileSentences, sentences(10, "Input sentence %d."))
	s.input("exemplars", registry.FileTriplets, nli(30))
	e, _ = s.typ.Requests(context.Background(), s.env())
	if !e.Exact || e.Requests != 20 || e.Cached != 0 || e.Model != "test-model" || e.Priced {
		t.Fatalf("estimate: %+v", e)
	}
	s.mustRun()
	e, _ = s.typ.Requests(context.Background(), s.env())
	if e.Cached != 20 || e.PromptTokens != 0 {
		t.Fatalf("after the run: %+v", e)
	}
	// The paper's model and prices: an estimate with a cost.
	p := newStage(t, "synth.sentences", nil)
	e, err = p.typ.Requests(context.Background(), p.env())
	if err != nil || !e.Exact || e.Requests != 21*660 || !e.Priced || e.Cost() <= 0 {
		t.Fatalf("paper estimate: %+v %v", e, err)
	}
	// Table 13 prices 1,000 sentences at about $1.5 in all; the sentence
	// calls are a small part: the estimate's order of magnitude must agree.
	perSentence := e.Cost() / float64(e.Requests*20)
	if perSentence < 0.00002 || perSentence > 0.0005 {
		t.Errorf("estimated cost per generated sentence $%.6f (the paper: $0.00007)", perSentence)
	}
}

func TestMix(t *testing.T) {
	s := newStage(t, "synth.mix", nil)
	s.input("a", registry.FileTriplets, nli(5))
	b := make([]rows.Triplet, 20)
	for i := range b {
		b[i] = rows.Triplet{Anchor: fmt.Sprint("b", i), Positive: "p", Negative: "n"}
	}
	s.input("b", registry.FileTriplets, b)
	s.set["sample_b"] = cty.True
	s.set["max_b"] = cty.NumberIntVal(4)
	small, _ := rows.Read[rows.Triplet](filepath.Join(s.mustRun()["triplets"], registry.FileTriplets))
	s.set["max_b"] = cty.NumberIntVal(10)
	large, _ := rows.Read[rows.Triplet](filepath.Join(s.mustRun()["triplets"], registry.FileTriplets))
	if len(small) != 9 || len(large) != 15 || !reflect.DeepEqual(small, large[:9]) || reflect.DeepEqual(large[5:9], b[:4]) {
		t.Fatalf("nested samples: %d, %d", len(small), len(large))
	}
	s.set["max_b"] = cty.NumberIntVal(0)
	s.set["b_fraction"] = cty.NumberFloatVal(0.25)
	quarter, _ := rows.Read[rows.Triplet](filepath.Join(s.mustRun()["triplets"], registry.FileTriplets))
	s.set["b_fraction"] = cty.NumberIntVal(0)
	none, _ := rows.Read[rows.Triplet](filepath.Join(s.mustRun()["triplets"], registry.FileTriplets))
	if len(quarter) != 10 || !reflect.DeepEqual(quarter, large[:10]) || len(none) != 5 {
		t.Fatalf("b_fraction: %d and %d triplets", len(quarter), len(none))
	}
	s.set["max_b"] = cty.NumberIntVal(30)
	if _, err := s.run(); err == nil {
		t.Error("max_b beyond b accepted")
	}
}

// TestMixCountOf: count_of cuts a to another set's size (Table 4's same
// count); a smaller a is kept whole.
func TestMixCountOf(t *testing.T) {
	s := newStage(t, "synth.mix", nil)
	s.input("a", registry.FileTriplets, nli(5))
	s.input("count_of", registry.FileTriplets, nli(3))
	got, _ := rows.Read[rows.Triplet](filepath.Join(s.mustRun()["triplets"], registry.FileTriplets))
	if !reflect.DeepEqual(got, nli(3)) {
		t.Fatalf("count_of 3: %v", got)
	}
	s.input("count_of", registry.FileTriplets, nli(8))
	got, _ = rows.Read[rows.Triplet](filepath.Join(s.mustRun()["triplets"], registry.FileTriplets))
	if !reflect.DeepEqual(got, nli(5)) {
		t.Fatalf("count_of 8 over 5 triplets: %v", got)
	}
}

func TestBadParameters(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	cases := []struct {
		typ, param string
		v          cty.Value
		want       string
	}{
		{"synth.annotate", "provider", cty.StringVal("anthropic"), "provider"},
		{"synth.annotate", "base_url", cty.StringVal("localhost:8000"), "base_url"},
		{"synth.annotate", "api_key_env", cty.StringVal("sk-abc def"), "NAME"},
		{"synth.annotate", "api_key_env", cty.StringVal("sk-proj-0123456789abcdef"), "never the key"},
		{"synth.annotate", "api_key_env", cty.StringVal("0f3a9c2b7d"), "NAME"},
		{"synth.annotate", "positive_top_p", cty.NumberFloatVal(1.5), "top_p"},
		{"synth.annotate", "pool_size", cty.NumberIntVal(5), "pool_size"},
		{"synth.annotate", "tries", cty.NumberIntVal(0), "tries"},
		{"synth.sentences", "temperature", cty.NumberFloatVal(2.5), "temperature"},
		{"synth.sentences", "topics_per_call", cty.NumberIntVal(99), "topics_per_call"},
		{"synth.sentences", "prompts", strs("Write sentences about {topic9}."), "topic9"},
		{"synth.sentences", "concurrency", cty.NumberIntVal(0), "concurrency"},
	}
	for _, c := range cases {
		s := newStage(t, c.typ, srv)
		s.set[c.param] = c.v
		s.input("input", registry.FileSentences, sentences(5, "Input %d."))
		s.input("examples", registry.FileSentences, sentences(50, "Example %d is a sentence."))
		s.input("exemplars", registry.FileTriplets, nli(30))
		_, err := s.run()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s=%v: error %v, want one mentioning %q", c.typ, c.param, c.v.GoString(), err, c.want)
		}
		if c.param == "api_key_env" && strings.Contains(err.Error(), c.v.AsString()) {
			t.Errorf("the error repeats what may be a key: %v", err)
		}
	}
	if srv.Count() != 0 {
		t.Errorf("bad parameters still sent %d requests", srv.Count())
	}
}

// scratchLike is a SynCSE-scratch-like set as synth.sentences and
// synth.annotate write it: sentences genre by genre, each call naming two
// of four topics, their provenance beside them, and a triplet per
// sentence in the same order.
func scratchLike(t *testing.T, genres, perGenre int) (registry.Artifact, []rows.Triplet) {
	t.Helper()
	topics := []string{"nature", "war", "food", "sports"}
	var ss []rows.Sentence
	var prov []sentenceProvenance
	var ts []rows.Triplet
	for g := 0; g < genres; g++ {
		for j := 0; j < perGenre; j++ {
			call := j / 2
			s := fmt.Sprintf("Sentence %d of genre %d.", j, g)
			ss = append(ss, rows.Sentence{Text: s})
			prov = append(prov, sentenceProvenance{Genre: fmt.Sprint("genre ", g), Topics: []string{topics[call%4], topics[(call+1)%4]}, Call: call + 1, Item: j%2 + 1})
			ts = append(ts, rows.Triplet{Anchor: s, Positive: "p " + s, Negative: "n " + s})
		}
	}
	dir := t.TempDir()
	if err := rows.Write(filepath.Join(dir, registry.FileSentences), ss); err != nil {
		t.Fatal(err)
	}
	if err := rows.Write(filepath.Join(dir, FileProvenance), prov); err != nil {
		t.Fatal(err)
	}
	return registry.Artifact{Dir: dir, Digest: "strata"}, ts
}

// TestMixStratified: count_of and max_a keep a seeded sample spread evenly
// over genre x topic with sample = "stratified" (Table 2's scratch row,
// Table 8's 22k), where the first rows of a genre-by-genre set would hold
// one genre; "random" keeps a seeded random sample; the samples are nested
// and depend on the seed.
func TestMixStratified(t *testing.T) {
	strata, a := scratchLike(t, 7, 60) // 420 triplets, 7 genres
	s := newStage(t, "synth.mix", nil)
	s.input("a", registry.FileTriplets, a)
	s.input("count_of", registry.FileTriplets, nli(70))
	s.inputs["strata"] = strata
	s.set["sample"] = cty.StringVal("stratified")
	got, _ := rows.Read[rows.Triplet](filepath.Join(s.mustRun()["triplets"], registry.FileTriplets))
	if len(got) != 70 {
		t.Fatalf("count_of 70: %d triplets", len(got))
	}
	genre := map[string]int{}
	for i, x := range a {
		genre[x.Anchor] = i / 60
	}
	perGenre := make([]int, 7)
	perTopic := map[[2]int]int{} // (genre, topic) -> rows naming it
	seen := map[string]bool{}
	for _, x := range got {
		g, ok := genre[x.Anchor]
		if !ok || seen[x.Anchor] {
			t.Fatalf("row %q is not a row of a, or repeated", x.Anchor)
		}
		seen[x.Anchor] = true
		perGenre[g]++
		var j int
		fmt.Sscanf(x.Anchor, "Sentence %d", &j)
		perTopic[[2]int{g, (j / 2) % 4}]++
		perTopic[[2]int{g, (j/2 + 1) % 4}]++
	}
	for g, n := range perGenre {
		if n != 10 {
			t.Errorf("genre %d: %d of 70 rows, want 10 (first rows would give genre 0 60 and genre 1 10): %v", g, n, perGenre)
		}
	}
	// Within a genre the four topics take turns: 10 rows give each at
	// least two turns, each taking a row that names it (the first rows of
	// a genre name two or three topics).
	for g := 0; g < 7; g++ {
		for k := 0; k < 4; k++ {
			if n := perTopic[[2]int{g, k}]; n < 2 {
				t.Errorf("genre %d: topic %d named by %d of its rows, want at least 2", g, k, n)
			}
		}
	}
	// max_a: the same order, so a smaller cut is a prefix.
	s.set["max_a"] = cty.NumberIntVal(21)
	small, _ := rows.Read[rows.Triplet](filepath.Join(s.mustRun()["triplets"], registry.FileTriplets))
	if !reflect.DeepEqual(small, got[:21]) {
		t.Error("max_a 21 is not a prefix of the count_of 70 sample")
	}
	s.set["max_a"] = cty.NumberIntVal(0)
	s.seed = 7
	other, _ := rows.Read[rows.Triplet](filepath.Join(s.mustRun()["triplets"], registry.FileTriplets))
	if reflect.DeepEqual(other, got) {
		t.Error("another seed gave the same sample")
	}
	s.seed = 42

	// random: a seeded sample of all rows, not the first ones.
	s.set["sample"] = cty.StringVal("random")
	random, _ := rows.Read[rows.Triplet](filepath.Join(s.mustRun()["triplets"], registry.FileTriplets))
	if len(random) != 70 || reflect.DeepEqual(random, a[:70]) {
		t.Fatalf("random: %d rows, the first ones: %v", len(random), reflect.DeepEqual(random, a[:70]))
	}
	genres := map[int]bool{}
	for _, x := range random {
		genres[genre[x.Anchor]] = true
	}
	if len(genres) < 5 {
		t.Errorf("a random 70 of 420 rows spans %d genres", len(genres))
	}
	// A set that needs no cut is written as it is.
	s.input("count_of", registry.FileTriplets, nli(500))
	whole, _ := rows.Read[rows.Triplet](filepath.Join(s.mustRun()["triplets"], registry.FileTriplets))
	if !reflect.DeepEqual(whole, a) {
		t.Error("an a smaller than count_of was reordered")
	}
}

// TestMixStratifiedErrors: a stratified cut without strata, or with
// sentences a was not labelled from, stops with a message saying which.
func TestMixStratifiedErrors(t *testing.T) {
	strata, a := scratchLike(t, 2, 10)
	s := newStage(t, "synth.mix", nil)
	s.input("a", registry.FileTriplets, a)
	s.set["max_a"] = cty.NumberIntVal(5)
	s.set["sample"] = cty.StringVal("stratified")
	if _, err := s.run(); err == nil || !strings.Contains(err.Error(), "strata") {
		t.Errorf("no strata input: %v", err)
	}
	s.inputs["strata"] = strata
	s.input("a", registry.FileTriplets, append(a, rows.Triplet{Anchor: "Written elsewhere.", Positive: "p", Negative: "n"}))
	if _, err := s.run(); err == nil || !strings.Contains(err.Error(), "row 21") || !strings.Contains(err.Error(), "Written elsewhere.") {
		t.Errorf("an anchor not among the strata: %v", err)
	}
	bare := t.TempDir()
	if err := rows.Write(filepath.Join(bare, registry.FileSentences), sentences(3, "S %d.")); err != nil {
		t.Fatal(err)
	}
	s.inputs["strata"] = registry.Artifact{Dir: bare, Digest: "bare"}
	if _, err := s.run(); err == nil || !strings.Contains(err.Error(), FileProvenance) {
		t.Errorf("strata without provenance: %v", err)
	}
	s.set["sample"] = cty.StringVal("stratify")
	if _, err := s.run(); err == nil || !strings.Contains(err.Error(), "sample") {
		t.Errorf("sample = stratify: %v", err)
	}
}

// TestModelNotFound: a server without the model (OpenAI's 404
// model_not_found for a retired snapshot such as the paper's
// gpt-3.5-turbo-0301) stops the stage at its first request, with a message
// naming the model and the variable that sets it; no other request goes
// out, and nothing is written.
func TestModelNotFound(t *testing.T) {
	for _, typ := range []string{"synth.annotate", "synth.sentences"} {
		for _, rep := range []llmtest.Reply{
			{Status: 404, Code: "model_not_found", Error: "The model `gpt-3.5-turbo-0301` does not exist or you do not have access to it."},
			{Status: 404, Error: "The model `gpt-3.5-turbo-0301` does not exist."}, // vLLM's words, no code
		} {
			srv := llmtest.New()
			srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply { return rep }
			s := newStage(t, typ, srv)
			s.set["model"] = cty.StringVal("gpt-3.5-turbo-0301")
			s.set["concurrency"] = cty.NumberIntVal(8)
			s.input("input", registry.FileSentences, sentences(20, "Input sentence %d."))
			s.input("examples", registry.FileSentences, sentences(50, "Example %d is a sentence."))
			s.input("exemplars", registry.FileTriplets, nli(30))
			out, err := s.run()
			if err == nil || !strings.Contains(err.Error(), `model "gpt-3.5-turbo-0301"`) || !strings.Contains(err.Error(), "-var llm_model=") {
				t.Errorf("%s, %+v: error %v, want one naming the model and -var llm_model", typ, rep, err)
			}
			if n := srv.Count(); n != 1 {
				t.Errorf("%s: %d requests sent to a server without the model, want 1", typ, n)
			}
			for port, dir := range out {
				if ents, _ := os.ReadDir(dir); len(ents) > 0 {
					t.Errorf("%s: output %s written: %v", typ, port, ents)
				}
			}
			srv.Close()
		}
	}
	// A 404 of a wrong base URL is not a missing model: it stops as before,
	// after one request, saying what a 404 may mean.
	srv := llmtest.New()
	defer srv.Close()
	srv.Script = func(int, *llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Status: 404, Error: "no route"} }
	s := newStage(t, "synth.annotate", srv)
	s.input("input", registry.FileSentences, sentences(20, "Input sentence %d."))
	s.input("exemplars", registry.FileTriplets, nli(30))
	if _, err := s.run(); err == nil || strings.Contains(err.Error(), "llm_model") || !strings.Contains(err.Error(), "base_url") || srv.Count() != 1 {
		t.Errorf("404 no route: %v, %d requests", err, srv.Count())
	}
}
