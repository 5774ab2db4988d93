package infocse

import (
	"fmt"
	"math/rand/v2"
	"sort"
)

// Split divides the documents of a labelled corpus, by index.
type Split struct {
	Validation []int // model selection (and InfoCSE's stopping rule); ascending
	Test       []int // the few-shot test set; ascending
	// Pool holds every other document in the seeded order: the labelled
	// training documents are a prefix of it (Labeled).
	Pool []int
}

// FewShotSplit draws a seeded permutation of n documents: the first
// validation of them are the validation set, the next test the test set,
// the rest the pool of labelled training documents.
func FewShotSplit(n, validation, test int, seed uint64) (Split, error) {
	switch {
	case validation < 1:
		return Split{}, fmt.Errorf("split: validation size %d must be at least 1", validation)
	case test < 1:
		return Split{}, fmt.Errorf("split: test size %d must be at least 1", test)
	case validation+test >= n:
		return Split{}, fmt.Errorf("split: %d validation + %d test documents leave none of the %d for training", validation, test, n)
	}
	perm := rand.New(rand.NewPCG(seed, 0x73706c6974)).Perm(n) // "split"
	s := Split{
		Validation: sorted(perm[:validation]),
		Test:       sorted(perm[validation : validation+test]),
		Pool:       append([]int(nil), perm[validation+test:]...),
	}
	return s, nil
}

// Labeled returns the first labels documents of the pool (all of it for
// labels = 0), ascending.
func (s Split) Labeled(labels int) ([]int, error) {
	switch {
	case labels < 0:
		return nil, fmt.Errorf("split: labels %d is negative (0 means the whole pool)", labels)
	case labels > len(s.Pool):
		return nil, fmt.Errorf("split: %d labelled documents asked for, the pool holds %d", labels, len(s.Pool))
	case labels == 0:
		labels = len(s.Pool)
	}
	return sorted(s.Pool[:labels]), nil
}

// HeldIn is every document outside the validation set, ascending: the
// zero-shot test set (validation documents are held out of every test).
func (s Split) HeldIn() []int {
	return sorted(append(append([]int(nil), s.Test...), s.Pool...))
}

func sorted(xs []int) []int {
	out := append([]int(nil), xs...)
	sort.Ints(out)
	return out
}
