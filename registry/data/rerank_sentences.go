package data

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"repro/internal/gense"
	"repro/internal/rows"
	"repro/registry"
)

// RerankSentencesParams are data.rerank_sentences' parameters.
type RerankSentencesParams struct {
	Fields   []string `cty:"fields" doc:"which texts of each query row: query, positive, negative (the related questions)"`
	Split    bool     `cty:"split" doc:"break each text into sentences (after . ! ? followed by a space and an upper-case letter or digit); false keeps texts whole"`
	MinWords int      `cty:"min_words" doc:"drop sentences with fewer words"`
	MaxWords int      `cty:"max_words" doc:"keep only a sentence's first max_words words (0: all)"`
	Max      int      `cty:"max" doc:"write at most this many sentences, a seeded sample (0: all, in first-seen order)"`
	// Added after results were cached: unset, the texts come from the
	// queries input, as before.
	Source string `cty:"source" key:"added" doc:"unset: the texts of the queries input; askubuntu_train: the lines of USEB's data-train/askubuntu/unsupervised/train.txt at path (the paper's in-domain sentences for AskUbuntu), with queries left unconnected"`
	Path   string `cty:"path" path:"file" key:"added" doc:"source askubuntu_train: a local copy of the published file (one sentence a line); its content is in the key"`
}

// rerankSentenceSources are data.rerank_sentences' file sources.
var rerankSentenceSources = []string{"askubuntu_train"}

// CheckStart refuses a file source without a path, and wants the texts
// from exactly one place: the queries input or a file source
// (registry.StartChecker).
func (p RerankSentencesParams) CheckStart(connected func(string) bool) error {
	switch {
	case p.Source == "" && !connected("queries"):
		return fmt.Errorf("queries: not connected: connect a reranking task's training split (data.rerank, split = \"train_part2\"), or read a file with source (%s) and path", strings.Join(rerankSentenceSources, ", "))
	case p.Source != "" && connected("queries"):
		return fmt.Errorf("queries: connected beside source %q: the texts come from one place; leave queries unconnected to read the file, or unset source", p.Source)
	}
	return needPath(p.Source, p.Path)
}

// Validate checks the parameters at load time.
func (p *RerankSentencesParams) Validate() error {
	var c registry.Checks
	c.Add(len(p.Fields) > 0, "fields", "empty; name at least one of query, positive, negative")
	for _, f := range p.Fields {
		c.OneOf("fields", f, "query", "positive", "negative")
	}
	c.NonNegative("min_words", p.MinWords)
	c.NonNegative("max_words", p.MaxWords)
	c.Add(p.MaxWords == 0 || p.MaxWords >= p.MinWords, "max_words", "%d is below min_words (%d)", p.MaxWords, p.MinWords)
	c.NonNegative("max", p.Max)
	if p.Source != "" {
		c.OneOf("source", p.Source, rerankSentenceSources...)
	}
	checkPath(&c, p.Path, p.Source)
	return c.Result()
}

func rerankSentencesType() *registry.StageType {
	return &registry.StageType{
		Name:    "data.rerank_sentences",
		Version: 1,
		Doc: `A reranking task's unlabelled training texts as in-domain sentences (GenSE section 2.3, following
TSDAE: the task's training set without its labels): the chosen texts of every query row (the query, its
related questions), or with source the lines of the paper's own in-domain file (USEB's AskUbuntu
train.txt), split into sentences, short ones dropped, long ones cut to max_words, each distinct
sentence once. Every sentence that is, or is a sentence of, a text of exclude (the evaluation split)
is dropped, so no evaluation text becomes training text; the counts go to the log and
rerank_sentences.json beside the sentences.`,
		Params: RerankSentencesParams{Fields: []string{"query", "positive", "negative"}, Split: true, MinWords: 5, MaxWords: 40},
		Inputs: []registry.Port{
			{Name: "queries", Kind: registry.KindRerank, Optional: true, Doc: "the task's training split (data.rerank, split = train_part2); unconnected with source"},
			{Name: "exclude", Kind: registry.KindRerank, Optional: true, Doc: "the evaluation split, whose texts never become sentences"},
		},
		Outputs:   []registry.Port{{Name: "sentences", Kind: registry.KindSentences, Doc: "sentences.jsonl, rerank_sentences.json (counts)"}},
		Seeded:    true,
		Externals: func(p any) ([]registry.External, error) { return pathExternal(p.(*RerankSentencesParams).Path), nil },
		Run:       runRerankSentences,
	}
}

func readQueries(env *registry.Env, port string) ([]rows.RerankQuery, registry.Artifact, error) {
	a, err := env.Input(port)
	if err != nil {
		return nil, a, err
	}
	qs, err := rows.Read[rows.RerankQuery](a.Path(registry.FileQueries))
	if err != nil {
		return nil, a, fmt.Errorf("%s: %w", port, err)
	}
	return qs, a, nil
}

func rerankTexts(qs []rows.RerankQuery, fields []string) []string {
	var out []string
	for _, q := range qs {
		for _, f := range fields {
			switch f {
			case "query":
				out = append(out, q.Query)
			case "positive":
				out = append(out, q.Positive...)
			case "negative":
				out = append(out, q.Negative...)
			}
		}
	}
	return out
}

func runRerankSentences(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*RerankSentencesParams)
	if err := p.Validate(); err != nil {
		return err
	}
	var texts []string
	var in registry.Artifact
	if p.Source != "" {
		ss, err := paperSentences(p.Source, p.Path)
		if err != nil {
			return err
		}
		texts = ss
	} else {
		qs, a, err := readQueries(env, "queries")
		if err != nil {
			return err
		}
		if len(qs) == 0 {
			return fmt.Errorf("queries: %s: no query rows", a.Path(registry.FileQueries))
		}
		texts, in = rerankTexts(qs, p.Fields), a
	}
	var exclude []string
	if _, ok := env.Inputs["exclude"]; ok {
		ex, exA, err := readQueries(env, "exclude")
		if err != nil {
			return err
		}
		if p.Source == "" && exA.Digest == in.Digest {
			return fmt.Errorf("queries and exclude are the same artifact: the in-domain sentences would be the evaluation's texts; connect queries to the training split (data.rerank with split = \"train_part2\")")
		}
		// Every field of the evaluation split is excluded, whatever fields
		// are read from the training split.
		exclude = rerankTexts(ex, []string{"query", "positive", "negative"})
	}
	out, c := gense.InDomainSentences(texts, exclude, gense.InDomainOptions{Split: p.Split, MinWords: p.MinWords, MaxWords: p.MaxWords})
	env.Logger().Info("in-domain sentences", "texts", c.Texts, "sentences", c.Sentences, "short", c.Short, "excluded", c.Excluded,
		"repeated", c.Repeated, "kept", c.Kept, "truncated", c.Truncated)
	if len(out) == 0 {
		return fmt.Errorf("no in-domain sentences left of %d texts (%d sentences: %d shorter than %d words, %d also in the evaluation split, %d repeated): connect queries to the training split (data.rerank with split = \"train_part2\") or lower min_words",
			c.Texts, c.Sentences, c.Short, p.MinWords, c.Excluded, c.Repeated)
	}
	if p.Max > 0 && len(out) > p.Max {
		perm := rand.New(rand.NewPCG(uint64(env.Seed), 0xc0de5)).Perm(len(out))
		sample := make([]string, p.Max)
		for i := range sample {
			sample[i] = out[perm[i]]
		}
		out = sample
	}
	ss := make([]rows.Sentence, len(out))
	for i, s := range out {
		ss[i] = rows.Sentence{Text: s}
	}
	dir := env.Output("sentences")
	if err := registry.WriteJSON(filepath.Join(dir, "rerank_sentences.json"), c); err != nil {
		return err
	}
	return rows.Write(filepath.Join(dir, registry.FileSentences), ss)
}
