package data

import (
	"strings"

	"repro/internal/dataset"
	"repro/registry"
)

// The data.* parameter checks (registry.Validator): run when the file is
// loaded, so a typo in a task or split is reported at its line.

func checkTasks(c *registry.Checks, tasks []string) {
	c.Add(len(tasks) > 0, "tasks", "empty list (choose from %s)", strings.Join(dataset.STSTasks, ", "))
	seen := map[string]bool{}
	for _, t := range tasks {
		if _, err := dataset.STSSplits(t); err != nil {
			c.Err(registry.Paramf("tasks", "%v", err))
			continue
		}
		c.Add(!seen[t], "tasks", "%s listed twice", t)
		seen[t] = true
	}
}

// Validate checks the tasks and that every one of them has the split.
func (p *STSParams) Validate() error {
	var c registry.Checks
	checkTasks(&c, p.Tasks)
	c.OneOf("split", p.Split, "train", "dev", "test")
	if p.Split == "train" || p.Split == "dev" {
		for _, t := range p.Tasks {
			if splits, err := dataset.STSSplits(t); err == nil && !contains(splits, p.Split) {
				c.Err(registry.Paramf("split", "task %s has no %s split (STS12-16 are test data only)", t, p.Split))
			}
		}
	}
	return c.Result()
}

// Validate checks the tasks and splits.
func (p *STSSentencesParams) Validate() error {
	var c registry.Checks
	checkTasks(&c, p.Tasks)
	c.Add(len(p.Splits) > 0, "splits", "empty list (choose from train, dev, test)")
	for _, s := range p.Splits {
		c.OneOf("splits", s, "train", "dev", "test")
	}
	return c.Result()
}

// Validate checks the file names against the catalogue.
func (p *NLIParams) Validate() error {
	var c registry.Checks
	d, _ := dataset.Lookup("nli")
	c.Add(len(p.Files) > 0, "files", "empty list (choose from %s)", strings.Join(d.Keys(), ", "))
	for i, f := range p.Files {
		if _, ok := d.File(f); !ok {
			c.Err(registry.Paramf("files", "unknown NLI file %q (choose from %s)", f, strings.Join(d.Keys(), ", ")))
		}
		c.Add(!contains(p.Files[:i], f), "files", "%s listed twice", f)
	}
	c.OneOf("source", p.Source, "nli", "simcse_nli")
	checkPath(&c, p.Path, p.Source)
	return c.Result()
}

// Validate checks the source and the limit.
func (p *SentencesParams) Validate() error {
	var c registry.Checks
	c.OneOf("source", p.Source, append(append([]string(nil), sentenceSources...), paperSentenceSources...)...)
	c.Add(p.Limit >= 0, "limit", "%d is negative (0 means all)", p.Limit)
	checkPath(&c, p.Path, p.Source)
	return c.Result()
}

// Validate checks the source and the limit.
func (p *DocumentsParams) Validate() error {
	var c registry.Checks
	c.OneOf("source", p.Source, "bbc", "brown", "mind")
	c.Add(p.Limit >= 0, "limit", "%d is negative (0 means all)", p.Limit)
	checkPath(&c, p.Path, p.Source)
	return c.Result()
}

// Validate checks the split against the catalogue.
func (p *RerankParams) Validate() error {
	var c registry.Checks
	d, _ := dataset.Lookup("semeval2016_cqa")
	if _, ok := d.File(p.Split); !ok {
		c.Err(registry.Paramf("split", "unknown split %q (choose from %s)", p.Split, strings.Join(d.Keys(), ", ")))
	}
	c.OneOf("source", p.Source, "semeval2016_cqa", "askubuntu")
	checkPath(&c, p.Path, p.Source)
	return c.Result()
}

// Validate checks the column names.
func (p *TripletSentencesParams) Validate() error {
	var c registry.Checks
	c.Add(len(p.Columns) > 0, "columns", "empty list: name at least one of anchor, positive, negative")
	for _, col := range p.Columns {
		c.OneOf("columns", col, "anchor", "positive", "negative")
	}
	return c.Result()
}

// Validate checks the sources and the counts.
func (p *CorpusParams) Validate() error {
	var c registry.Checks
	c.Add(len(p.Sources) > 0, "sources", "empty list (choose from %s)", strings.Join(sentenceSources, ", "))
	paper := 0
	for i, src := range p.Sources {
		c.OneOf("sources", src, append(append([]string(nil), sentenceSources...), paperSentenceSources...)...)
		c.Add(!contains(p.Sources[:i], src), "sources", "%s listed twice", src)
		if contains(paperSentenceSources, src) {
			paper++
		}
	}
	c.Add(paper <= 1, "sources", "%d sources read from path; one path names one file", paper)
	checkPath(&c, p.Path, p.Sources...)
	c.NonNegative("min_words", p.MinWords)
	c.NonNegative("dev_size", p.DevSize)
	c.NonNegative("test_size", p.TestSize)
	return c.Result()
}
