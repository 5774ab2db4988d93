package data

import (
	"context"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"

	"repro/internal/rows"
	"repro/registry"
)

// CorpusParams are data.corpus's parameters.
type CorpusParams struct {
	Sources      []string `cty:"sources" doc:"corpora, in this order: wiki (Wikipedia sentences), bbc (BBC News article sentences), brown (Brown Corpus sentences)"`
	Split        string   `cty:"split" doc:"train, dev, test or all"`
	DevFraction  float64  `cty:"dev_fraction" doc:"share of distinct sentences in dev"`
	TestFraction float64  `cty:"test_fraction" doc:"share of distinct sentences in test"`
	Limit        int      `cty:"limit" doc:"keep the first N sentences of the split; 0 = all"`
}

// corpusSources are the corpora data.corpus reads.
var corpusSources = []string{"wiki", "bbc", "brown"}

func (p *CorpusParams) validate() error {
	if len(p.Sources) == 0 {
		return fmt.Errorf("sources: empty list (choose from %s)", strings.Join(corpusSources, ", "))
	}
	for i, s := range p.Sources {
		if !contains(corpusSources, s) {
			return fmt.Errorf("sources: unknown corpus %q (choose from %s)", s, strings.Join(corpusSources, ", "))
		}
		if contains(p.Sources[:i], s) {
			return fmt.Errorf("sources: %s listed twice", s)
		}
	}
	switch {
	case p.Split != "train" && p.Split != "dev" && p.Split != "test" && p.Split != "all":
		return fmt.Errorf("split: %q is not train, dev, test or all", p.Split)
	case !(p.DevFraction >= 0 && p.TestFraction >= 0 && p.DevFraction+p.TestFraction < 1):
		return fmt.Errorf("dev_fraction %v and test_fraction %v must be >= 0 and leave a training share (sum < 1)", p.DevFraction, p.TestFraction)
	case p.Limit < 0:
		return fmt.Errorf("limit: %d is negative (0 means all)", p.Limit)
	}
	return nil
}

func corpusType() *registry.StageType {
	return &registry.StageType{
		Name:    "data.corpus",
		Version: 1,
		Doc: `Unlabeled sentences of several local corpora (Wikipedia, BBC News, Brown), for language-model
pretraining, split into train / dev / test. Sentences are read in source order and file order,
duplicates dropped (first occurrence kept); each distinct sentence goes to a split by a hash of
its text, so a sentence never lands in two splits and a split does not change when the other
sources do.`,
		Params:  CorpusParams{Sources: append([]string(nil), corpusSources...), Split: "train", DevFraction: 0.02, TestFraction: 0.02},
		Outputs: []registry.Port{{Name: "sentences", Kind: registry.KindSentences, Doc: "sentences.jsonl"}},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*CorpusParams)
			if err := p.validate(); err != nil {
				return err
			}
			c := catalogue()
			seen := map[string]bool{}
			var out []rows.Sentence
			keep := func(s string) {
				if s == "" || seen[s] {
					return
				}
				seen[s] = true
				if p.Split == "all" || splitOf(s, p.DevFraction, p.TestFraction) == p.Split {
					out = append(out, rows.Sentence{Text: s})
				}
			}
			for i, src := range p.Sources {
				if err := ctx.Err(); err != nil {
					return err
				}
				switch src {
				case "wiki":
					ls, err := c.Wiki()
					if err != nil {
						return err
					}
					for _, l := range ls {
						keep(strings.TrimSpace(l))
					}
				case "bbc":
					docs, err := c.BBC()
					if err != nil {
						return err
					}
					for _, d := range docs {
						if d.DupOf != "" {
							continue // its body repeats an earlier article
						}
						for _, s := range d.Sentences {
							keep(strings.TrimSpace(s))
						}
					}
				case "brown":
					docs, err := c.Brown()
					if err != nil {
						return err
					}
					for _, d := range docs {
						for _, s := range d.Sentences {
							keep(strings.TrimSpace(s.Text()))
						}
					}
				}
				progress(env, i+1, len(p.Sources), src)
			}
			if p.Limit > 0 && p.Limit < len(out) {
				out = out[:p.Limit]
			}
			if len(out) == 0 {
				return fmt.Errorf("split %s of %s is empty", p.Split, strings.Join(p.Sources, "+"))
			}
			return rows.Write(filepath.Join(env.Output("sentences"), registry.FileSentences), out)
		},
	}
}

// splitOf assigns a sentence to train, dev or test by a 64-bit FNV-1a hash
// of its text mapped to [0, 1).
func splitOf(s string, dev, test float64) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	u := float64(h.Sum64()>>11) / (1 << 53)
	switch {
	case u < dev:
		return "dev"
	case u < dev+test:
		return "test"
	}
	return "train"
}
