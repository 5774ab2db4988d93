package mlm

import (
	"fmt"
	"math/rand/v2"
	"sort"
)

// GroupByLength cuts sentences (given by their token counts) into batches
// of size sentences of similar length, so that little padding is computed:
// the indices are shuffled with a generator seeded from seed, cut into
// "megabatches" of megabatch x size, each sorted by length (longest first,
// ties by position), and cut into batches -- the scheme of Hugging Face's
// LengthGroupedSampler. The last batch may be short. The grouping is fixed
// for a run; the training loop shuffles the order of the batches every
// epoch, and Mask draws fresh masks every time a sentence is seen.
func GroupByLength(lens []int, size, megabatch int, seed uint64) ([][]int, error) {
	if size < 1 || megabatch < 1 {
		return nil, fmt.Errorf("mlm: batch size %d and megabatch %d must be positive", size, megabatch)
	}
	if len(lens) == 0 {
		return nil, fmt.Errorf("mlm: no sentences to batch")
	}
	idx := make([]int, len(lens))
	for i := range idx {
		idx[i] = i
	}
	rand.New(rand.NewPCG(seed, 0x6a7c4)).Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	var out [][]int
	for lo := 0; lo < len(idx); lo += size * megabatch {
		mb := idx[lo:min(lo+size*megabatch, len(idx))]
		sort.SliceStable(mb, func(a, b int) bool { return lens[mb[a]] > lens[mb[b]] })
		for b := 0; b < len(mb); b += size {
			out = append(out, append([]int(nil), mb[b:min(b+size, len(mb))]...))
		}
	}
	return out, nil
}
