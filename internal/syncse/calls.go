package syncse

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"repro/internal/llm"
)

// ScratchConfig describes the calls that write unlabeled sentences from
// scratch (paper section 2.4, Appendix B): for each genre, CallsPerGenre
// calls, each asking in a one-shot chat for Count sentences of that genre
// on TopicsPerCall topics drawn from Topics, with one prompt of the pool.
type ScratchConfig struct {
	Genres, Topics []string
	// TopicsPerCall topics fill {topic1} .. {topicN}; 0 for prompts
	// without topics (the naive generation of Table 8).
	TopicsPerCall int
	// Prompts is the pool for ordinary genres, CaptionPrompts the pool for
	// the genres listed in CaptionGenres (empty: those use Prompts too).
	Prompts, CaptionPrompts []string
	CaptionGenres           []string
	CallsPerGenre           int
	Count                   int // sentences asked for per call ({count}; the paper: 20)
	ExampleCount            int // sentences in a one-shot example (the paper: 10)
	ExamplesPerGenre        int // one-shot examples per genre (the paper: 30)
	// Fixed always takes the first prompt and the first example (Table 8's
	// naive generation).
	Fixed bool
	// MaxWords bounds the corpus sentences an example may show.
	MaxWords int
	Seed     int64
}

// ConfigError is a configuration error that names the parameter at fault
// by its field's role ("prompts", "genres"), so that a stage type can map
// it to its own parameter without reading the message.
type ConfigError struct {
	Param string
	Index int // the entry of a list at fault; -1 for the list as a whole
	Msg   string
}

func (e *ConfigError) Error() string {
	if e.Index >= 0 {
		return e.Param + e.Detail()
	}
	return e.Param + ": " + e.Detail()
}

// Detail is the message after the parameter's name: "[2]: ..." for an
// entry, the message alone for the whole list.
func (e *ConfigError) Detail() string {
	if e.Index >= 0 {
		return fmt.Sprintf("[%d]: %s", e.Index, e.Msg)
	}
	return e.Msg
}

func configErrorf(param string, index int, format string, args ...any) *ConfigError {
	return &ConfigError{Param: param, Index: index, Msg: fmt.Sprintf(format, args...)}
}

// Check reports a configuration that cannot produce calls, naming the
// parameter at fault by its field's role.
func (c *ScratchConfig) Check() error {
	switch {
	case len(c.Genres) == 0:
		return &ConfigError{Param: "genres", Index: -1, Msg: "empty list"}
	case len(c.Prompts) == 0:
		return &ConfigError{Param: "prompts", Index: -1, Msg: "empty pool"}
	case c.TopicsPerCall < 0 || c.TopicsPerCall > len(c.Topics):
		return configErrorf("topics_per_call", -1, "%d, but there are %d topics", c.TopicsPerCall, len(c.Topics))
	case c.CallsPerGenre <= 0:
		return configErrorf("calls_per_genre", -1, "%d must be positive", c.CallsPerGenre)
	case c.Count <= 0 || c.ExampleCount <= 0 || c.ExamplesPerGenre <= 0:
		return fmt.Errorf("sentences_per_call, example_sentences and examples_per_genre must be positive")
	case c.MaxWords <= 0:
		return configErrorf("max_words", -1, "%d must be positive", c.MaxWords)
	}
	if err := distinct("genres", c.Genres); err != nil {
		return err
	}
	if err := distinct("topics", c.Topics); err != nil {
		return err
	}
	check := func(pool string, prompts []string, captions bool) error {
		for i, p := range prompts {
			for _, ph := range Placeholders(p) {
				ok := ph == "genre" || ph == "count"
				if n, isTopic := strings.CutPrefix(ph, "topic"); isTopic {
					k, err := strconv.Atoi(n)
					ok = err == nil && k >= 1 && k <= c.TopicsPerCall
				}
				if n, isCap := strings.CutPrefix(ph, "caption"); isCap && captions {
					k, err := strconv.Atoi(n)
					ok = err == nil && k >= 1 && k <= 4
				}
				if !ok {
					return configErrorf(pool, i, "placeholder {%s} cannot be filled (known: {genre}, {count}, {topic1}..{topic%d}%s)",
						ph, c.TopicsPerCall, map[bool]string{true: ", {caption1}..{caption4}"}[captions])
				}
			}
			if !strings.Contains(p, "{count}") {
				return configErrorf(pool, i, "the prompt never says how many sentences ({count})")
			}
		}
		return nil
	}
	if err := check("prompts", c.Prompts, false); err != nil {
		return err
	}
	return check("caption_prompts", c.CaptionPrompts, true)
}

func distinct(name string, xs []string) error {
	seen := map[string]bool{}
	for _, x := range xs {
		if strings.TrimSpace(x) == "" {
			return configErrorf(name, -1, "an empty entry")
		}
		if seen[x] {
			return configErrorf(name, -1, "%q listed twice", x)
		}
		seen[x] = true
	}
	return nil
}

// ScratchCall is one planned call for sentences, with where it came from.
type ScratchCall struct {
	Genre    string
	Call     int // index among its genre's calls; also the request's sample index
	Prompt   int // index in its pool
	Caption  bool
	Topics   []string
	Example  int // one-shot example of the genre
	Messages []llm.Message
}

// Request is the call as an llm request (model and sampling from the caller).
func (c ScratchCall) Request(model string, s llm.Sampling) llm.Request {
	return llm.Request{Model: model, Messages: c.Messages, Sampling: s, Sample: c.Call}
}

// ExamplePool picks the corpus sentences one-shot examples may show: those
// of 3 to maxWords words, each once, in corpus order.
func ExamplePool(corpus []string, maxWords int) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range corpus {
		n := Words(s)
		k := DedupeKey(s)
		if n < 3 || n > maxWords || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, strings.Join(strings.Fields(s), " "))
	}
	return out
}

// Calls plans every call. Examples are drawn from examples (a pool made by
// ExamplePool), or for caption genres from captions when it is not empty:
// the paper's 30 GPT-4-written examples per genre are not published, so an
// example here is ExampleCount sentences of local text.
func (c *ScratchConfig) Calls(examples, captions []string) ([]ScratchCall, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if len(examples) < c.ExampleCount+4 {
		return nil, fmt.Errorf("examples: %d usable sentences (3 to %d words), need at least %d", len(examples), c.MaxWords, c.ExampleCount+4)
	}
	if len(captions) > 0 && len(captions) < c.ExampleCount+4 {
		return nil, fmt.Errorf("caption_examples: %d usable sentences, need at least %d", len(captions), c.ExampleCount+4)
	}
	isCaption := map[string]bool{}
	if len(c.CaptionPrompts) > 0 {
		for _, g := range c.CaptionGenres {
			isCaption[g] = true
		}
	}
	ch := Chooser{Seed: c.Seed}
	var out []ScratchCall
	for _, g := range c.Genres {
		pool, capGenre := c.Prompts, isCaption[g]
		corpus := examples
		if capGenre {
			pool = c.CaptionPrompts
			if len(captions) > 0 {
				corpus = captions
			}
		}
		for j := 0; j < c.CallsPerGenre; j++ {
			call := ScratchCall{Genre: g, Call: j, Caption: capGenre}
			if !c.Fixed {
				call.Prompt = ch.Pick("sentence prompt", g, j, positions(len(pool)))
				call.Example = ch.Pick("sentence example", g, j, positions(c.ExamplesPerGenre))
			}
			exSents, exCaps := c.example(ch, g, call.Example, corpus)
			exTopics := c.topics(ch, "example topics", g, call.Example)
			call.Topics = c.topics(ch, "topics", g, j)
			capsNow := c.captions(ch, g, j, corpus)
			first, err := Render(pool[call.Prompt], c.values(g, exTopics, c.ExampleCount, exCaps))
			if err != nil {
				return nil, err
			}
			ask, err := Render(pool[call.Prompt], c.values(g, call.Topics, c.Count, capsNow))
			if err != nil {
				return nil, err
			}
			call.Messages = []llm.Message{
				{Role: "user", Content: first},
				{Role: "assistant", Content: FormatList(exSents)},
				{Role: "user", Content: ask},
			}
			out = append(out, call)
		}
	}
	return out, nil
}

func (c *ScratchConfig) topics(ch Chooser, purpose, genre string, call int) []string {
	if c.TopicsPerCall == 0 {
		return nil
	}
	idx := ch.Top(purpose, genre, call, c.Topics, c.TopicsPerCall, nil)
	out := make([]string, len(idx))
	for i, k := range idx {
		out[i] = c.Topics[k]
	}
	return out
}

// example returns the sentences of one-shot example e of genre g, and four
// further sentences for prompts that quote example captions.
func (c *ScratchConfig) example(ch Chooser, g string, e int, corpus []string) ([]string, []string) {
	idx := distinctDraws(ch.Rand("example sentences", g, e), len(corpus), c.ExampleCount+4)
	var sents, caps []string
	for _, i := range idx[:c.ExampleCount] {
		sents = append(sents, corpus[i])
	}
	for _, i := range idx[c.ExampleCount:] {
		caps = append(caps, corpus[i])
	}
	return sents, caps
}

// captions returns four sentences a call's prompt may quote.
func (c *ScratchConfig) captions(ch Chooser, g string, call int, corpus []string) []string {
	var out []string
	for _, i := range distinctDraws(ch.Rand("quoted captions", g, call), len(corpus), 4) {
		out = append(out, corpus[i])
	}
	return out
}

// distinctDraws draws k distinct indices below n (k <= n) in draw order,
// in O(k) time for k much smaller than n (a corpus of thousands, an example
// of ten), where a permutation of the corpus per call would dominate.
func distinctDraws(rng *rand.Rand, n, k int) []int {
	seen := make(map[int]bool, k)
	out := make([]int, 0, k)
	for len(out) < k {
		i := rng.IntN(n)
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}

func (c *ScratchConfig) values(genre string, topics []string, count int, caps []string) map[string]string {
	v := map[string]string{"genre": genre, "count": strconv.Itoa(count)}
	for i, t := range topics {
		v["topic"+strconv.Itoa(i+1)] = t
	}
	for i, s := range caps {
		v["caption"+strconv.Itoa(i+1)] = `"` + s + `"`
	}
	return v
}

// Exemplar is one few-shot demonstration: an input sentence and the answer
// shown for it.
type Exemplar struct {
	Input, Output string
}

// AnnotateConfig describes the calls that label a sentence with a positive
// or a hard negative (paper section 2.3): one prompt of the pool and Shots
// exemplars from that prompt's pool of PoolSize, per call.
type AnnotateConfig struct {
	// Name ("positive", "negative") keeps the choices of the two kinds of
	// label independent.
	Name     string
	Prompts  []string
	PoolSize int // exemplars per prompt (the paper: 18)
	Shots    int // exemplars per call (the paper: 5)
	// Fixed gives every call the first prompt and the same exemplars
	// (Table 8's naive generation).
	Fixed    bool
	MaxWords int // exemplars longer than this are not shown
	Seed     int64
}

// Annotator plans labelling calls.
type Annotator struct {
	cfg       AnnotateConfig
	exemplars []Exemplar
	pools     [][]int // per prompt: exemplar indices
	ch        Chooser
}

// NewAnnotator builds each prompt's exemplar pool from exemplars (the
// paper's GPT-4-written exemplars are not published; here they are local
// data, e.g. NLI premise -> entailment). Unusable exemplars (empty, too
// long, repeated) are skipped.
func NewAnnotator(cfg AnnotateConfig, exemplars []Exemplar) (*Annotator, error) {
	switch {
	case len(cfg.Prompts) == 0:
		return nil, fmt.Errorf("%s prompts: empty pool", cfg.Name)
	case cfg.Shots < 0:
		return nil, fmt.Errorf("shots: %d is negative", cfg.Shots)
	case cfg.PoolSize < cfg.Shots+1:
		return nil, fmt.Errorf("pool_size: %d must exceed shots (%d), so that an input's own exemplar can be left out", cfg.PoolSize, cfg.Shots)
	}
	for i, p := range cfg.Prompts {
		if ph := Placeholders(p); len(ph) > 0 {
			return nil, fmt.Errorf("%s prompts[%d]: placeholder {%s}: labelling prompts take none (the input is its own message)", cfg.Name, i, ph[0])
		}
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("%s prompts[%d] is empty", cfg.Name, i)
		}
	}
	a := &Annotator{cfg: cfg, ch: Chooser{Seed: cfg.Seed}}
	seen := map[string]bool{}
	var ids []string
	for _, e := range exemplars {
		in, out := strings.Join(strings.Fields(e.Input), " "), strings.Join(strings.Fields(e.Output), " ")
		id := DedupeKey(in) + "\x00" + DedupeKey(out)
		if in == "" || out == "" || Words(in) > cfg.MaxWords || Words(out) > cfg.MaxWords || seen[id] {
			continue
		}
		seen[id] = true
		a.exemplars = append(a.exemplars, Exemplar{in, out})
		ids = append(ids, id)
	}
	if len(a.exemplars) < cfg.PoolSize {
		return nil, fmt.Errorf("exemplars: %d usable for %s labels, need pool_size = %d", len(a.exemplars), cfg.Name, cfg.PoolSize)
	}
	for j := range cfg.Prompts {
		a.pools = append(a.pools, a.ch.Top(cfg.Name+" exemplar pool", "", j, ids, cfg.PoolSize, nil))
	}
	return a, nil
}

// Exemplars returns the usable exemplars (indices of AnnotateCall.Shots).
func (a *Annotator) Exemplars() []Exemplar { return a.exemplars }

// AnnotateCall is one planned labelling call.
type AnnotateCall struct {
	Prompt   int
	Shots    []int // indices into Exemplars()
	Messages []llm.Message
}

// Call plans call number call (0 first; a retry of an unusable answer is
// the next) for input: the prompt as the system message, then each
// exemplar as a user turn and the assistant's answer, then the input. The
// input's own exemplar (same input sentence) is never among the shots.
func (a *Annotator) Call(input string, call int) AnnotateCall {
	own := DedupeKey(input)
	prompt, key, n := 0, input, call
	if !a.cfg.Fixed {
		prompt = a.ch.Pick(a.cfg.Name+" prompt", input, call, positions(len(a.cfg.Prompts)))
	} else {
		key, n = "", 0
	}
	pool := a.pools[prompt]
	ids := make([]string, len(pool))
	for i, e := range pool {
		ids[i] = strconv.Itoa(e)
	}
	pick := a.ch.Top(a.cfg.Name+" shots", key, n, ids, a.cfg.Shots, func(i int) bool {
		return DedupeKey(a.exemplars[pool[i]].Input) == own
	})
	c := AnnotateCall{Prompt: prompt, Messages: []llm.Message{{Role: "system", Content: a.cfg.Prompts[prompt]}}}
	for _, i := range pick {
		e := a.exemplars[pool[i]]
		c.Shots = append(c.Shots, pool[i])
		c.Messages = append(c.Messages, llm.Message{Role: "user", Content: e.Input}, llm.Message{Role: "assistant", Content: e.Output})
	}
	c.Messages = append(c.Messages, llm.Message{Role: "user", Content: strings.Join(strings.Fields(input), " ")})
	return c
}
