// Package data holds the data.* stage types: they load datasets of the
// catalogue (repro/internal/dataset, which verifies every file's sha256)
// into artifacts (registry/kinds.go). They take no inputs, so their cache
// key is their parameters and version alone; the data files themselves are
// pinned by the catalogue's checksums, which makes that key sound: a file
// that changed is an error, never a silent new result.
//
// Order is always deterministic (catalogue order, then file order), so the
// same parameters give byte-identical artifacts.
package data

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"repro/internal/dataset"
	"repro/internal/rows"
	"repro/registry"
)

// Register adds the data.* stage types to r.
func Register(r *registry.Registry) {
	r.Add(stsType())
	r.Add(stsSentencesType())
	r.Add(nliType())
	r.Add(sentencesType())
	r.Add(documentsType())
	r.Add(corpusType())
	r.Add(rerankType())
	r.Add(tripletSentencesType())
	r.Add(rerankSentencesType())
	r.Add(fewShotSplitType())
	r.Add(sampleType())
}

// catalogue is the catalogue stages read; a variable so tests can point it
// at a temporary directory.
var catalogue = dataset.Default

// STSParams are data.sts's parameters.
type STSParams struct {
	Tasks []string `cty:"tasks" doc:"STS tasks: sts12, sts13, sts14, sts15, sts16, stsb, sickr"`
	Split string   `cty:"split" doc:"test (every task), or train/dev (stsb and sickr only)"`
}

func stsType() *registry.StageType {
	return &registry.StageType{
		Name:     "data.sts",
		Version:  1,
		Doc:      "Gold-scored STS pairs of one split for a list of tasks (STS12-16: every subset of the year's test set).",
		Params:   STSParams{Tasks: append([]string(nil), dataset.STSTasks...), Split: "test"},
		Outputs:  []registry.Port{{Name: "pairs", Kind: registry.KindSTS, Doc: "pairs.jsonl: task, subset, sentence1, sentence2, score"}},
		Datasets: func(p any) []string { return datasets(p.(*STSParams).Tasks...) },
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*STSParams)
			c := catalogue()
			var out []rows.STSPair
			for i, task := range p.Tasks {
				if err := ctx.Err(); err != nil {
					return err
				}
				ps, err := c.STS(task, p.Split)
				if err != nil {
					return err
				}
				out = append(out, ps...)
				env.Report(i+1, len(p.Tasks), task)
			}
			return rows.Write(filepath.Join(env.Output("pairs"), registry.FilePairs), out)
		},
	}
}

// STSSentencesParams are data.sts_sentences's parameters.
type STSSentencesParams struct {
	Tasks  []string `cty:"tasks" doc:"STS tasks whose sentences to collect"`
	Splits []string `cty:"splits" doc:"splits of stsb and sickr to include (sts12-16 have only test, always included)"`
}

func stsSentencesType() *registry.StageType {
	return &registry.StageType{
		Name:    "data.sts_sentences",
		Version: 1,
		Doc: "The unlabeled sentences of a set of STS tasks, without scores (the unsupervised corpus of ConSERT and PaSeR): " +
			"sentence1 then sentence2 of each pair in task, subset and file order, each distinct sentence kept at its first occurrence.",
		Params:   STSSentencesParams{Tasks: append([]string(nil), dataset.STSTasks...), Splits: []string{"train", "dev", "test"}},
		Outputs:  []registry.Port{{Name: "sentences", Kind: registry.KindSentences, Doc: "sentences.jsonl"}},
		Datasets: func(p any) []string { return datasets(p.(*STSSentencesParams).Tasks...) },
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*STSSentencesParams)
			c := catalogue()
			seen := map[string]bool{}
			var out []rows.Sentence
			add := func(s string) {
				if !seen[s] {
					seen[s] = true
					out = append(out, rows.Sentence{Text: s})
				}
			}
			for i, task := range p.Tasks {
				has, _ := dataset.STSSplits(task)
				for _, split := range has {
					if !contains(p.Splits, split) && len(has) > 1 {
						continue
					}
					if err := ctx.Err(); err != nil {
						return err
					}
					ps, err := c.STS(task, split)
					if err != nil {
						return err
					}
					for _, pr := range ps {
						add(pr.Sentence1)
						add(pr.Sentence2)
					}
				}
				env.Report(i+1, len(p.Tasks), task)
			}
			return rows.Write(filepath.Join(env.Output("sentences"), registry.FileSentences), out)
		},
	}
}

// progress reports to env.Progress when the runner gave one.

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// NLIParams are data.nli's parameters.
type NLIParams struct {
	Files []string `cty:"files" doc:"NLI files: snli_dev, mnli_dev_matched, snli_test_ptbtok"`
	// Added after results were cached: the default reads the stand-in, as
	// before.
	Source string `cty:"source" key:"added" doc:"nli: the data directory's dev/test-derived triplets (files), a stand-in; simcse_nli: SimCSE's NLI training set (nli_for_simcse.csv) from path, the papers' data"`
	Path   string `cty:"path" path:"file" key:"added" doc:"source simcse_nli: a local copy of SimCSE's nli_for_simcse.csv as published (header sent0,sent1,hard_neg; CSV quoting); its content is in the key"`
}

// CheckStart refuses source simcse_nli without a path (registry.StartChecker).
func (p NLIParams) CheckStart(func(string) bool) error { return needPath(p.Source, p.Path) }

func nliType() *registry.StageType {
	d, _ := dataset.Lookup("nli")
	return &registry.StageType{
		Name:      "data.nli",
		Version:   1,
		Doc:       "NLI triplets (anchor, entailment, contradiction) from the dev/test-derived SNLI and MNLI files, in the order listed.",
		Params:    NLIParams{Files: d.Keys(), Source: "nli"},
		Outputs:   []registry.Port{{Name: "triplets", Kind: registry.KindTriplets, Doc: "triplets.jsonl"}},
		Externals: func(p any) ([]registry.External, error) { return pathExternal(p.(*NLIParams).Path), nil },
		StandIns: func(p any) []string {
			if q := p.(*NLIParams); q.Source == "nli" {
				return standIns("nli")
			}
			return nil
		},
		Datasets: func(p any) []string {
			if q := p.(*NLIParams); q.Source == "nli" {
				return datasets("nli")
			}
			return nil
		},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*NLIParams)
			if p.Source == "simcse_nli" {
				ts, err := dataset.ReadSimCSENLI(p.Path)
				if err != nil {
					return err
				}
				env.Report(1, 1, "nli_for_simcse.csv")
				return rows.Write(filepath.Join(env.Output("triplets"), registry.FileTriplets), ts)
			}
			c := catalogue()
			var out []rows.Triplet
			for i, f := range p.Files {
				ts, err := c.NLI(f)
				if err != nil {
					return err
				}
				out = append(out, ts...)
				env.Report(i+1, len(p.Files), f)
			}
			return rows.Write(filepath.Join(env.Output("triplets"), registry.FileTriplets), out)
		},
	}
}

// SentencesParams are data.sentences's parameters.
type SentencesParams struct {
	Source string `cty:"source" doc:"the data directory's wiki (SimCSE wiki1m, first 11,914 lines), bbc (BBC News article sentences, duplicate articles left out) or brown (Brown Corpus sentences, tokens joined by spaces), stand-ins; or the papers' wiki1m (wiki1m_for_simcse.txt), c4 (an allenai/c4 json.gz file: its text lines) or mind (MIND's news.tsv: the abstracts' sentences), read from path"`
	Limit  int    `cty:"limit" doc:"keep only the first N sentences (0: all)"`
	Path   string `cty:"path" path:"file" key:"added" doc:"sources wiki1m, c4 and mind: a local copy of the published file; its content is in the key"`
}

// CheckStart refuses a paper source without a path (registry.StartChecker).
func (p SentencesParams) CheckStart(func(string) bool) error { return needPath(p.Source, p.Path) }

func sentencesType() *registry.StageType {
	return &registry.StageType{
		Name:    "data.sentences",
		Version: 1,
		Doc: "A plain sentence corpus in file order. Wiki lines are kept as they are (duplicates included, as in SimCSE's file); " +
			"BBC sentences are those of the 2,089 articles that are not duplicates, headlines left out; " +
			"Brown sentences are their tokens joined by single spaces, with the corpus's quote tokens written as a plain double quote.",
		Params:    SentencesParams{Source: "wiki"},
		Outputs:   []registry.Port{{Name: "sentences", Kind: registry.KindSentences, Doc: "sentences.jsonl"}},
		Externals: func(p any) ([]registry.External, error) { return pathExternal(p.(*SentencesParams).Path), nil },
		StandIns:  func(p any) []string { return standIns(p.(*SentencesParams).Source) },
		Datasets:  func(p any) []string { return datasets(p.(*SentencesParams).Source) },
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*SentencesParams)
			texts, err := readSentences(catalogue(), p.Source, p.Path)
			if err != nil {
				return err
			}
			if p.Limit > 0 && p.Limit < len(texts) {
				texts = texts[:p.Limit]
			}
			out := make([]rows.Sentence, len(texts))
			for i, s := range texts {
				out[i] = rows.Sentence{Text: s}
			}
			return rows.Write(filepath.Join(env.Output("sentences"), registry.FileSentences), out)
		},
	}
}

// Sentence sources of data.sentences and data.corpus: the data
// directory's, then the papers' (read from path).
var (
	sentenceSources      = []string{"wiki", "bbc", "brown"}
	paperSentenceSources = []string{"wiki1m", "c4", "mind"}
)

// readSentences reads one sentence source in file order: a paper's from
// path, else the catalogue's.
func readSentences(c *dataset.Catalogue, source, path string) ([]string, error) {
	if contains(paperSentenceSources, source) {
		return paperSentences(source, path)
	}
	return sourceSentences(c, source)
}

// sourceSentences reads one sentence source in file order.
func sourceSentences(c *dataset.Catalogue, source string) ([]string, error) {
	var texts []string
	switch source {
	case "wiki":
		return c.Wiki()
	case "bbc":
		docs, err := c.BBC()
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if d.DupOf == "" {
				texts = append(texts, d.Sentences...)
			}
		}
	case "brown":
		docs, err := c.Brown()
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			for _, s := range d.Sentences {
				texts = append(texts, s.Text())
			}
		}
	default:
		return nil, fmt.Errorf("source: unknown corpus %q (choose from %s)", source, strings.Join(sentenceSources, ", "))
	}
	return texts, nil
}

// DocumentsParams are data.documents's parameters.
type DocumentsParams struct {
	Source         string `cty:"source" doc:"the data directory's bbc (BBC News, with headlines) or brown (Brown Corpus), stand-ins; or mind (MIND's news.tsv from path: title as headline, the abstract's sentences as body, articles without an abstract left out)"`
	DropDuplicates bool   `cty:"drop_duplicates" doc:"bbc: leave out the 136 articles whose body repeats an earlier one (dup_of set)"`
	Limit          int    `cty:"limit" doc:"keep only the first N documents (0: all)"`
	Path           string `cty:"path" path:"file" key:"added" doc:"source mind: a local copy of MIND's news.tsv as published (eight TAB-separated columns, no header); its content is in the key"`
}

// CheckStart refuses source mind without a path (registry.StartChecker).
func (p DocumentsParams) CheckStart(func(string) bool) error { return needPath(p.Source, p.Path) }

func documentsType() *registry.StageType {
	return &registry.StageType{
		Name:    "data.documents",
		Version: 1,
		Doc: "Documents of sentences in file order: BBC News (id category/NNN, category, headline; duplicates dropped by default, " +
			"leaving 2,089) or the Brown Corpus (id ca01.., category, no headline).",
		Params:    DocumentsParams{Source: "bbc", DropDuplicates: true},
		Outputs:   []registry.Port{{Name: "documents", Kind: registry.KindDocuments, Doc: "documents.jsonl"}},
		Externals: func(p any) ([]registry.External, error) { return pathExternal(p.(*DocumentsParams).Path), nil },
		StandIns:  func(p any) []string { return standIns(p.(*DocumentsParams).Source) },
		Datasets:  func(p any) []string { return datasets(p.(*DocumentsParams).Source) },
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*DocumentsParams)
			c := catalogue()
			var out []rows.Document
			switch p.Source {
			case "mind":
				docs, err := mindDocuments(p.Path)
				if err != nil {
					return err
				}
				out = docs
			case "bbc":
				docs, err := c.BBC()
				if err != nil {
					return err
				}
				for _, d := range docs {
					if p.DropDuplicates && d.DupOf != "" {
						continue
					}
					out = append(out, rows.Document{ID: d.ID, Category: d.Category, Headline: d.Headline, Sentences: d.Sentences})
				}
			case "brown":
				docs, err := c.Brown()
				if err != nil {
					return err
				}
				for _, d := range docs {
					ss := make([]string, len(d.Sentences))
					for i, s := range d.Sentences {
						ss[i] = s.Text()
					}
					out = append(out, rows.Document{ID: d.ID, Category: d.Category, Sentences: ss})
				}
			default:
				return fmt.Errorf("source: unknown document corpus %q (choose bbc, brown or mind)", p.Source)
			}
			if p.Limit > 0 && p.Limit < len(out) {
				out = out[:p.Limit]
			}
			return rows.Write(filepath.Join(env.Output("documents"), registry.FileDocuments), out)
		},
	}
}

// RerankParams are data.rerank's parameters.
type RerankParams struct {
	Split string `cty:"split" doc:"source semeval2016_cqa: dev (41 queries, the reliable split, used as the test set) or train_part2 (57 queries, for tuning)"`
	// Added after results were cached: the default reads the stand-in, as
	// before.
	Source string `cty:"source" key:"added" doc:"semeval2016_cqa: the data directory's SemEval-2016 CQA set, a stand-in; askubuntu: AskUbuntu's test set as MTEB publishes it, from path"`
	Path   string `cty:"path" path:"file" key:"added" doc:"source askubuntu: a local copy of MTEB's askubuntudupquestions-reranking test.jsonl.gz ({\"query\", \"positive\", \"negative\"} a line); its content is in the key"`
}

// CheckStart refuses source askubuntu without a path (registry.StartChecker).
func (p RerankParams) CheckStart(func(string) bool) error { return needPath(p.Source, p.Path) }

func rerankType() *registry.StageType {
	return &registry.StageType{
		Name:      "data.rerank",
		Version:   1,
		Doc:       "Question reranking: query, relevant and irrelevant candidates; SemEval-2016 Task 3 subtask B (Qatar Living) from the data directory, or AskUbuntu from MTEB's file.",
		Params:    RerankParams{Split: "dev", Source: "semeval2016_cqa"},
		Outputs:   []registry.Port{{Name: "queries", Kind: registry.KindRerank, Doc: "queries.jsonl"}},
		Externals: func(p any) ([]registry.External, error) { return pathExternal(p.(*RerankParams).Path), nil },
		StandIns:  func(p any) []string { return standIns(p.(*RerankParams).Source) },
		Datasets: func(p any) []string {
			if src := p.(*RerankParams).Source; src != "" {
				return datasets(src)
			}
			return datasets("semeval2016_cqa")
		},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*RerankParams)
			if p.Source == "askubuntu" {
				qs, err := dataset.ReadMTEBRerank(p.Path)
				if err != nil {
					return err
				}
				return rows.Write(filepath.Join(env.Output("queries"), registry.FileQueries), qs)
			}
			qs, err := catalogue().Rerank(p.Split)
			if err != nil {
				return err
			}
			return rows.Write(filepath.Join(env.Output("queries"), registry.FileQueries), qs)
		},
	}
}
