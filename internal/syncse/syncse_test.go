package syncse

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"repro/internal/llm"
)

// Every placeholder of the paper's pools is restored where the copy lost
// it, and fills.
func TestPaperPools(t *testing.T) {
	if len(PositivePrompts) != 4 || len(NegativePrompts) != 4 || len(SentencePrompts) != 4 || len(CaptionPrompts) != 4 {
		t.Fatal("the paper's pools have four prompts each")
	}
	if len(Genres) != 21 || len(Topics) != 37 {
		t.Fatalf("%d genres, %d topics; Table 10 prints 21, Appendix B lists 37", len(Genres), len(Topics))
	}
	for i, p := range SentencePrompts {
		want := []string{"count", "genre", "topic1", "topic2", "topic3", "topic4", "topic5", "topic6"}
		if got := Placeholders(p); !reflect.DeepEqual(got, want) {
			t.Errorf("Table 15 prompt %d placeholders %v, want %v", i+1, got, want)
		}
	}
	for i, p := range CaptionPrompts {
		got := Placeholders(p)
		if !contains(got, "count") || (i != 2 && !contains(got, "genre")) {
			t.Errorf("Table 16 prompt %d placeholders %v", i+1, got)
		}
	}
	if got := Placeholders(CaptionPrompts[3]); !reflect.DeepEqual(got, []string{"caption1", "caption2", "caption3", "caption4", "count", "genre"}) {
		t.Errorf("Table 16 prompt 4 placeholders %v", got)
	}
	for _, p := range append(append([]string{}, PositivePrompts...), NegativePrompts...) {
		if len(Placeholders(p)) != 0 {
			t.Errorf("labelling prompt with a placeholder: %q", p)
		}
	}
	cfg := paperScratch()
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	for _, g := range CaptionGenres {
		if !contains(Genres, g) {
			t.Errorf("caption genre %q is not a genre", g)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func paperScratch() *ScratchConfig {
	return &ScratchConfig{
		Genres: Genres, Topics: Topics, TopicsPerCall: 6, Prompts: SentencePrompts, CaptionPrompts: CaptionPrompts,
		CaptionGenres: CaptionGenres, CallsPerGenre: 3, Count: 20, ExampleCount: 10, ExamplesPerGenre: 30, MaxWords: 32, Seed: 42,
	}
}

func corpus(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("Corpus sentence number %d is here.", i)
	}
	return out
}

func TestScratchCalls(t *testing.T) {
	cfg := paperScratch()
	calls, err := cfg.Calls(ExamplePool(corpus(200), 32), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 21*3 {
		t.Fatalf("%d calls, want 63", len(calls))
	}
	for _, c := range calls {
		if len(c.Messages) != 3 || c.Messages[0].Role != "user" || c.Messages[1].Role != "assistant" || c.Messages[2].Role != "user" {
			t.Fatalf("call %+v: not a one-shot chat", c)
		}
		ask := c.Messages[2].Content
		if strings.ContainsAny(ask, "{}") {
			t.Fatalf("unfilled placeholder in %q", ask)
		}
		if !strings.Contains(ask, " 20 ") || !strings.Contains(c.Messages[0].Content, " 10 ") {
			t.Errorf("counts missing: %q / %q", c.Messages[0].Content, ask)
		}
		if len(ParseList(c.Messages[1].Content)) != 10 {
			t.Errorf("the example is not a 10-item list: %q", c.Messages[1].Content)
		}
		if c.Caption {
			if !contains(CaptionGenres, c.Genre) || c.Prompt >= len(CaptionPrompts) {
				t.Errorf("caption call %+v", c)
			}
			continue
		}
		if len(c.Topics) != 6 {
			t.Fatalf("%d topics", len(c.Topics))
		}
		for _, tp := range c.Topics {
			if !strings.Contains(ask, tp) {
				t.Errorf("topic %q not in the prompt %q", tp, ask)
			}
		}
		if !strings.Contains(ask, c.Genre) {
			t.Errorf("genre %q not in the prompt", c.Genre)
		}
	}
	// Deterministic, and a pure function of (genre, call): more calls per
	// genre and more genres leave the existing calls unchanged.
	again, _ := cfg.Calls(ExamplePool(corpus(200), 32), nil)
	if !reflect.DeepEqual(calls, again) {
		t.Fatal("the same configuration planned different calls")
	}
	wider := paperScratch()
	wider.CallsPerGenre = 5
	wider.Genres = append([]string{"limericks"}, Genres...)
	more, err := wider.Calls(ExamplePool(corpus(200), 32), nil)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]ScratchCall{}
	for _, c := range more {
		byKey[fmt.Sprint(c.Genre, c.Call)] = c
	}
	for _, c := range calls {
		if !reflect.DeepEqual(byKey[fmt.Sprint(c.Genre, c.Call)], c) {
			t.Fatalf("call %s/%d changed when the grid grew", c.Genre, c.Call)
		}
	}
	// Prompts, topics and examples vary across calls.
	prompts, examples := map[int]bool{}, map[int]bool{}
	for _, c := range calls {
		prompts[c.Prompt], examples[c.Example] = true, true
	}
	if len(prompts) < 3 || len(examples) < 10 {
		t.Errorf("little variety: %d prompts, %d examples over 63 calls", len(prompts), len(examples))
	}
}

// Table 8's naive generation: one prompt, one example, no topics; the calls
// differ only by their sample index, so each is its own request.
func TestNaiveScratch(t *testing.T) {
	cfg := &ScratchConfig{Genres: []string{"any"}, Prompts: []string{"Write {count} diverse sentences."}, CallsPerGenre: 4,
		Count: 20, ExampleCount: 10, ExamplesPerGenre: 30, Fixed: true, MaxWords: 32, Seed: 1}
	calls, err := cfg.Calls(ExamplePool(corpus(100), 32), nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, c := range calls {
		if !reflect.DeepEqual(c.Messages, calls[0].Messages) {
			t.Fatal("naive calls differ")
		}
		keys[llm.Key("openai", c.Request("m", llm.Sampling{Temperature: 1.3, TopP: 1}))] = true
	}
	if len(keys) != 4 {
		t.Fatalf("%d distinct request keys for 4 naive calls", len(keys))
	}
}

func TestScratchCheck(t *testing.T) {
	bad := []func(c *ScratchConfig){
		func(c *ScratchConfig) { c.Genres = nil },
		func(c *ScratchConfig) { c.Genres = []string{"a", "a"} },
		func(c *ScratchConfig) { c.Prompts = nil },
		func(c *ScratchConfig) { c.TopicsPerCall = 5 }, // the prompts name {topic6}
		func(c *ScratchConfig) { c.TopicsPerCall = 40 },
		func(c *ScratchConfig) { c.CallsPerGenre = 0 },
		func(c *ScratchConfig) { c.Prompts = []string{"Write sentences about {topic1}."} }, // no {count}
		func(c *ScratchConfig) { c.Prompts = []string{"Write {count} {colour} sentences."} },
		func(c *ScratchConfig) { c.Prompts = []string{"Write {count} like {caption1}."} }, // captions only in caption prompts
	}
	for i, f := range bad {
		c := paperScratch()
		f(c)
		if err := c.Check(); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	c := paperScratch()
	if _, err := c.Calls(corpus(5), nil); err == nil {
		t.Error("an example corpus of 5 sentences accepted")
	}
}

func exemplars(n int) []Exemplar {
	out := make([]Exemplar, n)
	for i := range out {
		out[i] = Exemplar{Input: fmt.Sprintf("Premise %d about a dog.", i), Output: fmt.Sprintf("Hypothesis %d.", i)}
	}
	return out
}

func TestAnnotator(t *testing.T) {
	cfg := AnnotateConfig{Name: "positive", Prompts: PositivePrompts, PoolSize: 18, Shots: 5, MaxWords: 32, Seed: 42}
	a, err := NewAnnotator(cfg, exemplars(100))
	if err != nil {
		t.Fatal(err)
	}
	own := "Premise 7 about a dog."
	used := map[int]bool{}
	prompts := map[int]bool{}
	for call := 0; call < 200; call++ {
		input := fmt.Sprintf("Premise %d about a dog.", call%100)
		c := a.Call(input, call)
		if len(c.Messages) != 1+2*5+1 || c.Messages[0].Role != "system" || c.Messages[0].Content != PositivePrompts[c.Prompt] {
			t.Fatalf("call %d: %d messages", call, len(c.Messages))
		}
		if c.Messages[len(c.Messages)-1].Content != input {
			t.Fatal("the input is not the last turn")
		}
		for _, s := range c.Shots {
			if a.Exemplars()[s].Input == input {
				t.Fatalf("input %q got its own exemplar", input)
			}
			used[s] = true
		}
		prompts[c.Prompt] = true
	}
	// 4 prompts x 18 exemplars: the pools, and nothing outside them.
	if len(prompts) != 4 || len(used) > 4*18 || len(used) < 30 {
		t.Errorf("%d prompts, %d distinct exemplars used", len(prompts), len(used))
	}
	// A call is a function of (input, call): other inputs do not matter.
	c1 := a.Call(own, 3)
	b, _ := NewAnnotator(cfg, exemplars(100))
	if !reflect.DeepEqual(b.Call(own, 3), c1) {
		t.Fatal("the same call planned twice differs")
	}
	// Editing one prompt's text changes only the calls that chose it.
	edited := cfg
	edited.Prompts = append([]string{}, PositivePrompts...)
	edited.Prompts[1] = "Paraphrase, please."
	e, _ := NewAnnotator(edited, exemplars(100))
	changed := 0
	for call := 0; call < 100; call++ {
		x, y := a.Call(fmt.Sprintf("s%d", call), 0), e.Call(fmt.Sprintf("s%d", call), 0)
		if !reflect.DeepEqual(x, y) {
			changed++
			if x.Prompt != 1 {
				t.Fatalf("a call that chose prompt %d changed", x.Prompt)
			}
		}
	}
	if changed == 0 || changed > 50 {
		t.Errorf("%d of 100 calls changed with prompt 2's text", changed)
	}
	// Fixed: the same prompt and exemplars for every input.
	fixed := cfg
	fixed.Fixed = true
	f, _ := NewAnnotator(fixed, exemplars(100))
	x, y := f.Call("one", 0), f.Call("two", 5)
	if x.Prompt != 0 || !reflect.DeepEqual(x.Shots, y.Shots) {
		t.Errorf("fixed calls differ: %+v / %+v", x.Shots, y.Shots)
	}
}

func TestAnnotatorErrors(t *testing.T) {
	base := AnnotateConfig{Name: "negative", Prompts: NegativePrompts, PoolSize: 18, Shots: 5, MaxWords: 32}
	cases := []func(c *AnnotateConfig) []Exemplar{
		func(c *AnnotateConfig) []Exemplar { c.Prompts = nil; return exemplars(50) },
		func(c *AnnotateConfig) []Exemplar { c.PoolSize = 5; return exemplars(50) },
		func(c *AnnotateConfig) []Exemplar { return exemplars(10) },
		func(c *AnnotateConfig) []Exemplar { c.Prompts = []string{"Negate {input}."}; return exemplars(50) },
		func(c *AnnotateConfig) []Exemplar { return append(exemplars(10), exemplars(10)...) }, // repeats count once
	}
	for i, f := range cases {
		c := base
		ex := f(&c)
		if _, err := NewAnnotator(c, ex); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
}

func TestParse(t *testing.T) {
	list := "Here are 5 sentences:\n\n1. The sun rose.\n2) \"Quoted one.\"\n3: Colon item\n- A dash item\n  10. Indented ten.\nThanks!"
	want := []string{"The sun rose.", "Quoted one.", "Colon item", "A dash item", "Indented ten."}
	if got := ParseList(list); !reflect.DeepEqual(got, want) {
		t.Errorf("ParseList = %q", got)
	}
	if got := ParseList("I cannot do that."); len(got) != 0 {
		t.Errorf("a refusal parsed as %q", got)
	}
	if got := ParseList(""); len(got) != 0 {
		t.Error("empty answer")
	}
	cases := map[string]string{
		"A man plays guitar.":                          "A man plays guitar.",
		"  \"A man plays guitar.\"  ":                  "A man plays guitar.",
		"Here is a paraphrase:\nA man plays a guitar.": "A man plays a guitar.",
		"1. First.\n2. Second.":                        "First.",
		"“Curly quoted.”":                              "Curly quoted.",
		`"He said "hi" to me"`:                         `"He said "hi" to me"`,
	}
	for in, want := range cases {
		if got, ok := ParseSentence(in); !ok || got != want {
			t.Errorf("ParseSentence(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "   \n\n", "Here you go:", "\"\""} {
		if got, ok := ParseSentence(bad); ok {
			t.Errorf("ParseSentence(%q) = %q, ok", bad, got)
		}
	}
	if Words("a  b\tc\n") != 3 || DedupeKey("  The  Cat. ") != "the cat." {
		t.Error("Words/DedupeKey")
	}
	if _, err := Render("{genre} and {topic1}", map[string]string{"genre": "x"}); err == nil || !strings.Contains(err.Error(), "topic1") {
		t.Errorf("Render with a missing value: %v", err)
	}
}

func TestChooser(t *testing.T) {
	ch := Chooser{Seed: 7}
	ids := positions(10)
	counts := make([]int, 10)
	for call := 0; call < 5000; call++ {
		counts[ch.Pick("p", "k", call, ids)]++
	}
	for i, n := range counts {
		if n < 400 || n > 600 {
			t.Errorf("candidate %d picked %d of 5000 times", i, n)
		}
	}
	top := ch.Top("p", "k", 0, ids, 3, func(i int) bool { return i == 2 })
	if len(top) != 3 {
		t.Errorf("Top = %v", top)
	}
	for _, i := range top {
		if i == 2 {
			t.Error("Top returned a skipped candidate")
		}
	}
	if (Chooser{Seed: 8}).Pick("p", "k", 0, ids) == ch.Pick("p", "k", 0, ids) && (Chooser{Seed: 9}).Pick("p", "k", 0, ids) == ch.Pick("p", "k", 0, ids) &&
		(Chooser{Seed: 10}).Pick("p", "k", 0, ids) == ch.Pick("p", "k", 0, ids) {
		t.Error("the seed does not change choices")
	}
}

// BenchmarkScratchCalls plans the paper's sentence calls (21 genres x 660).
func BenchmarkScratchCalls(b *testing.B) {
	cfg := paperScratch()
	cfg.CallsPerGenre = 660
	pool := ExamplePool(corpus(12000), 32)
	for i := 0; i < b.N; i++ {
		if _, err := cfg.Calls(pool, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnnotateCall plans one labelling call (prompt, five of the
// prompt's 18 exemplars, the messages).
func BenchmarkAnnotateCall(b *testing.B) {
	a, err := NewAnnotator(AnnotateConfig{Name: "positive", Prompts: PositivePrompts, PoolSize: 18, Shots: 5, MaxWords: 32, Seed: 1}, exemplars(8816))
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		a.Call("A man is playing a guitar on stage.", i)
	}
}

// TestCheckNamesParam: a configuration error names its parameter by type,
// so a stage maps it to its own parameter without reading the message.
func TestCheckNamesParam(t *testing.T) {
	ok := ScratchConfig{Genres: []string{"news"}, Prompts: []string{"Write {count} {genre} sentences."},
		CallsPerGenre: 1, Count: 5, ExampleCount: 2, ExamplesPerGenre: 3, MaxWords: 20}
	for _, tc := range []struct {
		param string
		index int
		edit  func(c *ScratchConfig)
		text  string
	}{
		{"genres", -1, func(c *ScratchConfig) { c.Genres = nil }, "genres: empty list"},
		{"prompts", -1, func(c *ScratchConfig) { c.Prompts = nil }, "prompts: empty pool"},
		{"prompts", 0, func(c *ScratchConfig) { c.Prompts = []string{"Write {genre}."} }, "prompts[0]: the prompt never says how many sentences ({count})"},
		{"topics", -1, func(c *ScratchConfig) { c.Topics = []string{"a", "a"} }, `topics: "a" listed twice`},
	} {
		c := ok
		tc.edit(&c)
		err := c.Check()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Param != tc.param || ce.Index != tc.index || err.Error() != tc.text {
			t.Errorf("%s: got %#v (%v), want %s[%d] %q", tc.param, ce, err, tc.param, tc.index, tc.text)
		}
	}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
}
