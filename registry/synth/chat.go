package synth

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"repro/internal/llm"
	"repro/internal/llm/local"
	"repro/internal/model/lm"
	"repro/internal/rows"
	"repro/internal/syncse"
	"repro/registry"
)

// ChatCorpusParams are synth.chat_corpus's parameters: the labelling and
// sentence calls are planned exactly as synth.annotate and synth.sentences
// plan them, so the same values must be given to both.
type ChatCorpusParams struct {
	PositivePrompts  []string `cty:"positive_prompts" doc:"as synth.annotate's"`
	NegativePrompts  []string `cty:"negative_prompts" doc:"as synth.annotate's"`
	Shots            int      `cty:"shots" doc:"as synth.annotate's"`
	PoolSize         int      `cty:"pool_size" doc:"as synth.annotate's"`
	MaxWords         int      `cty:"max_words" doc:"triplets with a longer sentence are not used; as synth.annotate's"`
	LabelMaxTokens   int      `cty:"label_max_tokens" doc:"the answer length synth.annotate reserves (its max_tokens): the prompt is fitted to the rest of the context, as the provider fits it"`
	MaxTriplets      int      `cty:"max_triplets" doc:"label conversations from the first N usable triplets, two each (0: all)"`
	MaxExclude       int      `cty:"max_exclude" doc:"exclude only the first N sentences of the exclude input (0: all)"`
	Lists            int      `cty:"lists" doc:"sentence-list conversations (synth.sentences' calls answered with corpus sentences); 0: none"`
	Genres           []string `cty:"genres" doc:"as synth.sentences'"`
	Topics           []string `cty:"topics" doc:"as synth.sentences'"`
	TopicsPerCall    int      `cty:"topics_per_call" doc:"as synth.sentences'"`
	SentencePrompts  []string `cty:"sentence_prompts" doc:"as synth.sentences' prompts"`
	SentencesPerCall int      `cty:"sentences_per_call" doc:"as synth.sentences'"`
	ExampleSentences int      `cty:"example_sentences" doc:"as synth.sentences'"`
	ExamplesPerGenre int      `cty:"examples_per_genre" doc:"as synth.sentences'"`
	ListMaxTokens    int      `cty:"list_max_tokens" doc:"the answer length synth.sentences reserves (its max_tokens)"`
	ListMaxWords     int      `cty:"list_max_words" doc:"longest corpus sentence in a list answer (a small context holds only short lists)"`
	FixedPrompts     []string `cty:"fixed_prompts" doc:"the prompt of Table 8's naive calls (synth.sentences with fixed = true, genre \"any\", no topics): its first is used"`
	FixedLists       int      `cty:"fixed_lists" doc:"list conversations of the naive calls (fixed_prompts[0] with the first example, as synth.sentences' fixed calls), answered with corpus sentences; 0: none"`
}

// Validate implements registry.Validator.
func (p *ChatCorpusParams) Validate() error {
	var c registry.Checks
	c.NonNegative("shots", p.Shots)
	c.Add(p.PoolSize > p.Shots, "pool_size", "%d must exceed shots (%d)", p.PoolSize, p.Shots)
	c.Positive("max_words", p.MaxWords)
	c.Positive("label_max_tokens", p.LabelMaxTokens)
	c.NonNegative("max_triplets", p.MaxTriplets)
	c.NonNegative("max_exclude", p.MaxExclude)
	c.NonNegative("lists", p.Lists)
	c.NonNegative("fixed_lists", p.FixedLists)
	c.Add(p.FixedLists == 0 || len(p.FixedPrompts) > 0, "fixed_prompts", "fixed_lists = %d needs a prompt", p.FixedLists)
	if p.Lists > 0 || p.FixedLists > 0 {
		c.Positive("list_max_tokens", p.ListMaxTokens)
		c.Positive("sentences_per_call", p.SentencesPerCall)
		c.Positive("example_sentences", p.ExampleSentences)
		c.Positive("examples_per_genre", p.ExamplesPerGenre)
		c.Positive("list_max_words", p.ListMaxWords)
	}
	return c.Result()
}

func chatCorpusType() *registry.StageType {
	return &registry.StageType{
		Name:    "synth.chat_corpus",
		Version: 1,
		Doc: `Fine-tuning text that teaches a small language model SynCSE's chats in the in-process
provider's format (chat-v1): for each usable triplet (anchor not among the excluded sentences), the
positive and the hard-negative labelling call synth.annotate would make for its anchor -- one prompt of
the pool, exemplars from the other triplets -- fitted to the model's context as the provider fits it,
answered with the triplet's own positive or negative; and, with lists > 0, synth.sentences' calls
answered with numbered lists of corpus sentences (the format only: corpus sentences are not of the
genre asked for), and with fixed_lists > 0 Table 8's fixed naive calls answered the same way. A departure from the paper, whose LLM needed no such teaching; the excluded
sentences (those the model will label) never appear as an anchor.`,
		Params: ChatCorpusParams{
			PositivePrompts: syncse.PositivePrompts, NegativePrompts: syncse.NegativePrompts,
			Shots: 5, PoolSize: 18, MaxWords: 32, LabelMaxTokens: 48,
			Genres: syncse.Genres, Topics: syncse.Topics, TopicsPerCall: 6, SentencePrompts: syncse.SentencePrompts,
			SentencesPerCall: 20, ExampleSentences: 10, ExamplesPerGenre: 30, ListMaxTokens: 512, ListMaxWords: 32,
		},
		Inputs: []registry.Port{
			{Name: "lm", Kind: registry.KindLanguageModel, Doc: "the model to be fine-tuned: its tokenizer and context window fit the conversations"},
			{Name: "triplets", Kind: registry.KindTriplets, Doc: "labelled triplets (e.g. NLI): exemplars and answers"},
			{Name: "exclude", Kind: registry.KindSentences, Optional: true, Doc: "sentences never used as an anchor (the ones synth.annotate will label)"},
			{Name: "sentences", Kind: registry.KindSentences, Optional: true, Doc: "corpus sentences for the list conversations (needed when lists > 0)"},
		},
		Outputs: []registry.Port{
			{Name: "sentences", Kind: registry.KindSentences, Doc: "sentences.jsonl: one conversation per row (train.causal_lm with pack = false)"},
			{Name: "metrics", Kind: registry.KindMetrics, Doc: "conversations written and skipped, exemplars left out to fit"},
		},
		Seeded: true,
		Run:    runChatCorpus,
	}
}

func runChatCorpus(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*ChatCorpusParams)
	la, err := env.Input("lm")
	if err != nil {
		return err
	}
	l, err := lm.Open(la.Dir)
	if err != nil {
		return fmt.Errorf("lm: %w", err)
	}
	ts, err := registry.ReadTriplets(env, "triplets", registry.TripletNeeds{AllowNone: true})
	if err != nil {
		return err
	}
	excluded, err := p.excluded(env)
	if err != nil {
		return err
	}
	cc := &chatCorpus{l: l, m: map[string]float64{}}
	if err := cc.labels(ctx, p, env.Seed, ts, excluded); err != nil {
		return err
	}
	if p.Lists > 0 || p.FixedLists > 0 {
		if err := cc.lists(env, p); err != nil {
			return err
		}
	}
	out, m := cc.out, cc.m
	if len(out) == 0 {
		return fmt.Errorf("no conversation fits the model's context window of %d tokens (%v)", l.Model.MaxLength(), m)
	}
	m["conversations"] = float64(len(out))
	for _, k := range []string{"label", "list"} {
		if n := m[k+"_conversations"]; n > 0 {
			m[k+"_exemplars_shown"] /= n // a mean per conversation
		}
	}
	env.Logger().Info("chat corpus", "conversations", len(out), "label_exemplars_shown", m["label_exemplars_shown"])
	if err := rows.Write(filepath.Join(env.Output("sentences"), registry.FileSentences), out); err != nil {
		return err
	}
	return registry.WriteMetrics(env, "metrics", m)
}

// excluded is the set (by syncse.DedupeKey) of the exclude input's first
// max_exclude sentences; empty without the input.
func (p *ChatCorpusParams) excluded(env *registry.Env) (map[string]bool, error) {
	excluded := map[string]bool{}
	if _, ok := env.Inputs["exclude"]; !ok {
		return excluded, nil
	}
	ex, err := registry.ReadSentences(env, "exclude", 0)
	if err != nil {
		return nil, err
	}
	if p.MaxExclude > 0 && len(ex) > p.MaxExclude {
		ex = ex[:p.MaxExclude]
	}
	for _, s := range ex {
		excluded[syncse.DedupeKey(s)] = true
	}
	return excluded, nil
}

// chatCorpus collects the conversations and their counts.
type chatCorpus struct {
	l   *lm.LM
	m   map[string]float64
	out []rows.Sentence
}

// add fits one call and appends it with its answer, when it fits whole.
func (cc *chatCorpus) add(kind string, msgs []llm.Message, answer string, maxTokens int) error {
	f, err := local.Prompt(cc.l, msgs, maxTokens)
	if err != nil {
		return err
	}
	if f.Truncated {
		cc.m[kind+"_skipped_prompt_too_long"]++
		return nil
	}
	ans := cc.l.Encode(" " + answer)
	if len(ans) > maxTokens || len(f.IDs)+len(ans)+1 > cc.l.Model.MaxLength() {
		cc.m[kind+"_skipped_answer_too_long"]++
		return nil
	}
	cc.out = append(cc.out, rows.Sentence{Text: local.Conversation(f.Text, answer)})
	cc.m[kind+"_conversations"]++
	head := 0
	if msgs[0].Role == "system" {
		head = 1
	}
	cc.m[kind+"_exemplars_shown"] += float64(len(msgs)-1-head-f.Dropped) / 2
	return nil
}

// labels adds the label conversations: for each usable triplet, the
// positive and the negative call synth.annotate would make for its anchor,
// answered with the triplet's own positive and negative.
func (cc *chatCorpus) labels(ctx context.Context, p *ChatCorpusParams, seed int64, ts []rows.Triplet, excluded map[string]bool) error {
	var pos, neg []syncse.Exemplar
	for _, t := range ts {
		pos = append(pos, syncse.Exemplar{Input: t.Anchor, Output: t.Positive})
		if t.Negative != "" {
			neg = append(neg, syncse.Exemplar{Input: t.Anchor, Output: t.Negative})
		}
	}
	anns := make([]*syncse.Annotator, 2)
	for i, lb := range []struct {
		name    string
		prompts []string
		ex      []syncse.Exemplar
	}{{"positive", p.PositivePrompts, pos}, {"negative", p.NegativePrompts, neg}} {
		var err error
		if anns[i], err = syncse.NewAnnotator(syncse.AnnotateConfig{Name: lb.name, Prompts: lb.prompts, PoolSize: p.PoolSize,
			Shots: p.Shots, MaxWords: p.MaxWords, Seed: seed}, lb.ex); err != nil {
			return err
		}
	}
	used := 0
	for _, t := range ts {
		if p.MaxTriplets > 0 && used >= p.MaxTriplets {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if excluded[syncse.DedupeKey(t.Anchor)] {
			cc.m["excluded"]++
			continue
		}
		if t.Negative == "" || syncse.Words(t.Anchor) > p.MaxWords || syncse.Words(t.Positive) > p.MaxWords || syncse.Words(t.Negative) > p.MaxWords {
			cc.m["unusable_triplets"]++
			continue
		}
		used++
		for i, answer := range []string{t.Positive, t.Negative} {
			if err := cc.add("label", anns[i].Call(t.Anchor, 0).Messages, answer, p.LabelMaxTokens); err != nil {
				return err
			}
		}
	}
	cc.m["triplets_used"] = float64(used)
	return nil
}

// lists adds the list conversations: synth.sentences' calls (lists of
// them, and fixed_lists of Table 8's fixed naive calls), each answered
// with sentences_per_call corpus sentences.
func (cc *chatCorpus) lists(env *registry.Env, p *ChatCorpusParams) error {
	if _, ok := env.Inputs["sentences"]; !ok {
		return fmt.Errorf("lists = %d and fixed_lists = %d need the sentences input (corpus sentences for the answers)", p.Lists, p.FixedLists)
	}
	corpus, err := registry.ReadSentences(env, "sentences", 0)
	if err != nil {
		return err
	}
	pool := syncse.ExamplePool(corpus, p.MaxWords)
	// Answers drawn from the corpus apart from the examples' draws.
	answers := syncse.ExamplePool(corpus, p.ListMaxWords)
	if len(answers) < p.SentencesPerCall {
		return fmt.Errorf("sentences: %d sentences of 3 to list_max_words = %d words, fewer than sentences_per_call", len(answers), p.ListMaxWords)
	}
	rng := rand.New(rand.NewPCG(uint64(env.Seed), 0x636861))
	for _, kind := range []struct {
		n   int
		cfg syncse.ScratchConfig
	}{
		{p.Lists, syncse.ScratchConfig{Genres: p.Genres, Topics: p.Topics, TopicsPerCall: p.TopicsPerCall, Prompts: p.SentencePrompts,
			CallsPerGenre: (p.Lists + len(p.Genres) - 1) / max(1, len(p.Genres))}},
		{p.FixedLists, syncse.ScratchConfig{Genres: []string{"any"}, Prompts: p.FixedPrompts, Fixed: true, CallsPerGenre: p.FixedLists}},
	} {
		if kind.n == 0 {
			continue
		}
		cfg := kind.cfg
		cfg.Count, cfg.ExampleCount, cfg.ExamplesPerGenre, cfg.MaxWords, cfg.Seed = p.SentencesPerCall, p.ExampleSentences, p.ExamplesPerGenre, p.MaxWords, env.Seed
		cs, err := cfg.Calls(pool, nil)
		if err != nil {
			// The plan's "prompts" are this stage's sentence_prompts or fixed_prompts.
			prompts := map[bool]string{false: "sentence_prompts", true: "fixed_prompts"}[cfg.Fixed]
			return paramOf(err, map[string]string{"prompts": prompts}, "genres", "topics_per_call", "topics", "max_words")
		}
		for i, c := range cs {
			if i >= kind.n {
				break
			}
			items := make([]string, p.SentencesPerCall)
			for k := range items {
				items[k] = answers[rng.IntN(len(answers))]
			}
			if err := cc.add("list", c.Messages, syncse.FormatList(items), p.ListMaxTokens); err != nil {
				return err
			}
		}
	}
	return nil
}
