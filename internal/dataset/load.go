package dataset

import (
	"fmt"
	"strings"

	"repro/internal/rows"
)

// STSTasks lists the STS task names in the papers' column order.
var STSTasks = []string{"sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"}

// STSSplits returns the splits a task has: "test" for STS12-16 (their
// subsets are all test data), train/dev/test for STS-B and SICK-R.
func STSSplits(task string) ([]string, error) {
	d, ok := Lookup(task)
	if !ok || !isSTSTask(task) {
		return nil, fmt.Errorf("unknown STS task %q (known: %s)", task, strings.Join(STSTasks, ", "))
	}
	if task == "stsb" || task == "sickr" {
		return d.Keys(), nil
	}
	return []string{"test"}, nil
}

func isSTSTask(t string) bool {
	for _, s := range STSTasks {
		if s == t {
			return true
		}
	}
	return false
}

// STS loads the pairs of one task and split, verified. For STS12-16 the
// split must be "test" and the pairs of every subset come in catalogue
// order with Subset set to the subset name; for STS-B and SICK-R Subset is
// the split.
func (c *Catalogue) STS(task, split string) ([]rows.STSPair, error) {
	splits, err := STSSplits(task)
	if err != nil {
		return nil, err
	}
	ok := false
	for _, s := range splits {
		ok = ok || s == split
	}
	if !ok {
		return nil, fmt.Errorf("STS task %s has no split %q (it has: %s)", task, split, strings.Join(splits, ", "))
	}
	d, _ := Lookup(task)
	files := d.Files
	if task == "stsb" || task == "sickr" {
		f, _ := d.File(split)
		files = []File{f}
	}
	var out []rows.STSPair
	for _, f := range files {
		p, err := c.Path(task, f.Key)
		if err != nil {
			return nil, err
		}
		ps, err := ReadSTS(p, task, f.Key)
		if err != nil {
			return nil, err
		}
		if len(ps) != f.Rows {
			return nil, fmt.Errorf("%s: %d pairs, catalogue expects %d", p, len(ps), f.Rows)
		}
		out = append(out, ps...)
	}
	return out, nil
}

// NLI loads one NLI triplet file ("snli_dev", "mnli_dev_matched",
// "snli_test_ptbtok").
func (c *Catalogue) NLI(key string) ([]rows.Triplet, error) {
	p, err := c.Path("nli", key)
	if err != nil {
		return nil, err
	}
	return ReadNLI(p)
}

// Wiki loads the unlabeled Wikipedia sentences.
func (c *Catalogue) Wiki() ([]string, error) {
	p, err := c.Path("wiki", "sentences")
	if err != nil {
		return nil, err
	}
	return ReadLines(p)
}

// BBC loads the BBC News articles (duplicates included; see BBCDoc.DupOf).
func (c *Catalogue) BBC() ([]BBCDoc, error) {
	p, err := c.Path("bbc", "documents")
	if err != nil {
		return nil, err
	}
	return ReadBBC(p)
}

// Brown loads the Brown Corpus documents.
func (c *Catalogue) Brown() ([]BrownDoc, error) {
	p, err := c.Path("brown", "documents")
	if err != nil {
		return nil, err
	}
	return ReadBrown(p)
}

// Rerank loads a split ("dev" or "train_part2") of the SemEval-2016 CQA
// reranking set.
func (c *Catalogue) Rerank(split string) ([]rows.RerankQuery, error) {
	p, err := c.Path("semeval2016_cqa", split)
	if err != nil {
		return nil, err
	}
	return ReadRerank(p)
}

// GloVe loads the word vectors of a vectors dataset (its "vectors" file).
func (c *Catalogue) GloVe(name string) (*Vectors, error) {
	d, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown dataset %q (known: %v)", name, Names())
	}
	f, ok := d.File("vectors")
	if !ok || f.Format != FormatGloVeGz {
		return nil, fmt.Errorf("dataset %s is not a word-vector dataset", name)
	}
	p, err := c.Path(name, "vectors")
	if err != nil {
		return nil, err
	}
	return ReadGloVe(p)
}
