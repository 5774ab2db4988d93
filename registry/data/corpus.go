package data

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"repro/internal/dataset"
	"repro/internal/rows"
	"repro/registry"
)

// CorpusParams are data.corpus's parameters.
type CorpusParams struct {
	Sources    []string `cty:"sources" doc:"sentence sources concatenated in this order: wiki, bbc, brown, or one of the papers' wiki1m, c4, mind (as data.sentences reads them)"`
	Dedupe     bool     `cty:"dedupe" doc:"keep each distinct sentence once (its first occurrence)"`
	ExcludeSTS bool     `cty:"exclude_sts" doc:"leave out every sentence that also occurs in an STS set (STS12-16, STS-B, SICK-R, all splits): the evaluation text"`
	MinWords   int      `cty:"min_words" doc:"leave out sentences of fewer whitespace-separated words (fragments such as \"On Tuesday,\")"`
	DevSize    int      `cty:"dev_size" doc:"sentences drawn (with the seed) into the dev output and left out of sentences; 0 = none"`
	TestSize   int      `cty:"test_size" doc:"sentences drawn (with the seed, after dev) into the test output and left out of sentences; 0 = none"`
	Path       string   `cty:"path" path:"file" key:"added" doc:"the file of the one paper source among sources (wiki1m, c4 or mind, as data.sentences reads them): a local copy as published; its content is in the key"`
}

// CheckStart refuses a paper source without a path (registry.StartChecker).
func (p CorpusParams) CheckStart(func(string) bool) error {
	for _, s := range p.Sources {
		if err := needPath(s, p.Path); err != nil {
			return err
		}
	}
	return nil
}

func corpusType() *registry.StageType {
	return &registry.StageType{
		Name: "data.corpus",
		// 2: the test output (test_size); sentences and dev are unchanged
		// for test_size = 0.
		Version: 2,
		Doc: "Unlabeled pretraining text: the sentences of several sources (the data directory's, or one paper's file) in order, optionally without repeats, " +
			"without the STS sets' sentences and without fragments, and seeded held-out dev and test splits " +
			"(one permutation: its first dev_size positions are dev, the next test_size test). " +
			"The stage log counts what each filter dropped.",
		Params: CorpusParams{Sources: append([]string(nil), sentenceSources...), Dedupe: true, ExcludeSTS: true, MinWords: 3, DevSize: 1000},
		Outputs: []registry.Port{
			{Name: "sentences", Kind: registry.KindSentences, Doc: "sentences.jsonl: the training sentences, in source order"},
			{Name: "dev", Kind: registry.KindSentences, Doc: "sentences.jsonl: the held-out sentences, in source order"},
			{Name: "test", Kind: registry.KindSentences, Doc: "sentences.jsonl: the test sentences, in source order (empty for test_size = 0)"},
		},
		Seeded:    true,
		Externals: func(p any) ([]registry.External, error) { return pathExternal(p.(*CorpusParams).Path), nil },
		StandIns:  func(p any) []string { return standIns(p.(*CorpusParams).Sources...) },
		Datasets:  func(p any) []string { return datasets(p.(*CorpusParams).Sources...) },
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*CorpusParams)
			c := catalogue()
			sts := map[string]bool{}
			if p.ExcludeSTS {
				for _, task := range dataset.STSTasks {
					splits, _ := dataset.STSSplits(task)
					for _, split := range splits {
						ps, err := c.STS(task, split)
						if err != nil {
							return err
						}
						for _, pr := range ps {
							sts[normSpace(pr.Sentence1)], sts[normSpace(pr.Sentence2)] = true, true
						}
					}
				}
			}
			seen := map[string]bool{}
			var texts []string
			for i, src := range p.Sources {
				ss, err := readSentences(c, src, p.Path)
				if err != nil {
					return err
				}
				var short, repeated, inSTS int
				for _, s := range ss {
					n := normSpace(s)
					switch {
					case len(strings.Fields(n)) < p.MinWords:
						short++
					case p.ExcludeSTS && sts[n]:
						inSTS++
					case p.Dedupe && seen[n]:
						repeated++
					default:
						seen[n] = true
						texts = append(texts, s)
					}
				}
				if env.Log != nil {
					env.Log.Info("corpus source", "source", src, "sentences", len(ss), "short", short, "in_sts", inSTS, "repeated", repeated)
				}
				env.Report(i+1, len(p.Sources), src)
			}
			if p.DevSize+p.TestSize >= len(texts) {
				return fmt.Errorf("dev_size + test_size: %d leaves no training sentence (the sources give %d)", p.DevSize+p.TestSize, len(texts))
			}
			// One permutation: dev is its first dev_size positions (as
			// before test_size existed), test the next test_size.
			split := map[int]int{}
			perm := rand.New(rand.NewPCG(uint64(env.Seed), 0xc0de5)).Perm(len(texts))
			for k, i := range perm[:p.DevSize+p.TestSize] {
				split[i] = 1
				if k >= p.DevSize {
					split[i] = 2
				}
			}
			var out [3][]rows.Sentence // train, dev, test
			for i, s := range texts {
				out[split[i]] = append(out[split[i]], rows.Sentence{Text: s})
			}
			if env.Log != nil {
				env.Log.Info("corpus", "train", len(out[0]), "dev", len(out[1]), "test", len(out[2]))
			}
			for k, name := range []string{"sentences", "dev", "test"} {
				if err := rows.Write(filepath.Join(env.Output(name), registry.FileSentences), out[k]); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// normSpace is SentEval's whitespace normalisation, the form in which the
// STS files store their sentences.
func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
