package data

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"repro/internal/dataset"
	"repro/internal/rows"
	"repro/registry"
)

// The papers' own datasets that are not in the data directory are sources
// of the data.* types like the catalogue's, read from a local copy in their
// published format whose path is the stage's `path` parameter (the
// experiments set it from a -var: simcse_nli, wiki1m, c4, mind,
// askubuntu, askubuntu_train). A paper source without a path cannot work: the stage refuses
// before the run starts (registry.StartChecker), naming the variable, as a
// paper profile without its weights does. The catalogue's stand-ins stay
// the default sources, so the mini and ci profiles, which read them, keep
// their parameters and their cache keys (`path` and data.nli's and
// data.rerank's `source` are key:"added").

// paperSource is one of the papers' datasets read from a local file.
type paperSource struct {
	what     string // the dataset, in words
	file     string // the published file
	variable string // the experiments' -var
	standIn  string // the data directory's stand-in (source value) the mini and ci profiles read
	// instead, when set, says how the mini and ci profiles read a stand-in
	// where it is not a source value.
	instead string
}

var paperSources = map[string]paperSource{
	"simcse_nli": {"SimCSE's NLI training set", "nli_for_simcse.csv", "simcse_nli", "nli", ""},
	"wiki1m":     {"SimCSE's Wikipedia sentences", "wiki1m_for_simcse.txt", "wiki1m", "wiki", ""},
	"c4":         {"C4", "an allenai/c4 en file, c4-train.NNNNN-of-01024.json.gz", "c4", "wiki", ""},
	"mind":       {"MIND news", "MIND's news.tsv", "mind", "bbc", ""},
	"askubuntu":  {"AskUbuntu", "MTEB's askubuntudupquestions-reranking test.jsonl.gz", "askubuntu", "semeval2016_cqa", ""},
	"askubuntu_train": {"AskUbuntu's unlabelled training sentences", "USEB's data-train/askubuntu/unsupervised/train.txt", "askubuntu_train", "",
		"connect queries to the SemEval-2016 CQA set's train_part2 split (data.rerank) and leave source unset"},
}

// MissingDataError refuses a stage whose source is a paper's dataset
// without the path of a local copy.
type MissingDataError struct {
	Source   string // the source value ("simcse_nli")
	What     string // the dataset in words
	File     string // the published file
	Variable string // the experiments' -var
	StandIn  string // the stand-in source
	Instead  string // how to read the stand-in where it is no source value
}

func (e *MissingDataError) Error() string {
	instead := fmt.Sprintf("read the data directory's stand-in with source %q", e.StandIn)
	if e.Instead != "" {
		instead = e.Instead
	}
	return fmt.Sprintf("%s not given: set path to a local copy of %s (the experiments take it as -var %s=FILE), or %s (the mini and ci profiles do)",
		e.What, e.File, e.Variable, instead)
}

// needPath is the start check of a stage reading source from path.
func needPath(source, path string) error {
	ps, ok := paperSources[source]
	if !ok || path != "" {
		return nil
	}
	return &MissingDataError{Source: source, What: ps.what, File: ps.file, Variable: ps.variable, StandIn: ps.standIn, Instead: ps.instead}
}

// checkPath says that path is read only by a paper source.
func checkPath(c *registry.Checks, path string, sources ...string) {
	if path == "" {
		return
	}
	for _, s := range sources {
		if _, ok := paperSources[s]; ok {
			return
		}
	}
	c.Err(registry.Paramf("path", "read only with a paper source (%s); the data directory's %s needs none", strings.Join(paperNames(), ", "), strings.Join(sources, ", ")))
}

func paperNames() []string { return slices.Sorted(maps.Keys(paperSources)) }

// pathExternal names the file a stage reads outside the store: its
// content, not its name, is in the key.
func pathExternal(path string) []registry.External {
	if path == "" {
		return nil
	}
	return []registry.External{{Name: "path", Path: path}}
}

// standIns lists the catalogue datasets among sources that stand in for a
// paper's data (dataset.Dataset.StandIn).
func standIns(sources ...string) []string {
	var out []string
	for _, s := range sources {
		if d, ok := dataset.Lookup(s); ok && d.StandIn != "" && !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// datasets keeps the names that are datasets of the catalogue (a paper
// source read from path is not), each once: what a data stage reads from
// the data directory (registry.StageType.Datasets).
func datasets(names ...string) []string {
	var out []string
	for _, s := range names {
		if _, ok := dataset.Lookup(s); ok && !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// paperSentences reads a paper sentence source from path.
func paperSentences(source, path string) ([]string, error) {
	switch source {
	case "wiki1m":
		return dataset.ReadWiki1M(path)
	case "c4":
		return dataset.ReadC4(path)
	case "askubuntu_train":
		return dataset.ReadUSEBTrain(path)
	case "mind":
		docs, err := mindDocuments(path)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, d := range docs {
			out = append(out, d.Sentences...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("source: %q is not read from a file", source)
}

// mindDocuments reads MIND's news.tsv as documents: the title is the
// headline, the abstract's sentences (split by the rule of the data
// directory's BBC sentences) the body. news.tsv has no bodies -- MIND
// publishes them only as URLs to crawl -- and articles without an abstract
// are left out (the experiment declares both).
func mindDocuments(path string) ([]rows.Document, error) {
	ns, err := dataset.ReadMINDNews(path)
	if err != nil {
		return nil, err
	}
	var out []rows.Document
	for _, n := range ns {
		ss := dataset.SplitSentences(n.Abstract)
		if len(ss) == 0 {
			continue
		}
		out = append(out, rows.Document{ID: n.ID, Category: n.Category, Headline: n.Title, Sentences: ss})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no article has an abstract", path)
	}
	return out, nil
}
