package generate

import (
	"fmt"
	"math/rand/v2"
)

// streamOf is the stream of sample s of prompt p: Stream(Seed, p, s), or,
// with per-prompt Seeds, Stream(Seeds[p], 0, s). Per-prompt seeds make a
// prompt's text independent of its position in the call, so a caller that
// gathers unrelated requests into one batch (the in-process chat provider)
// gets for each exactly what it would get alone.
func (o *Options) streamOf(p, s int) *rand.Rand {
	st := o.streamState(p, s)
	return rand.New(rand.NewPCG(st[0], st[1]))
}

// streamState is the initial PCG state (hi, lo) of streamOf(p, s): what a
// session that draws on a device starts each sequence's stream from.
func (o *Options) streamState(p, s int) [2]uint64 {
	if o.Seeds != nil {
		return streamSeeds(o.Seeds[p], 0, s)
	}
	return streamSeeds(o.Seed, p, s)
}

// checkSeeds reports per-prompt seeds that do not match the prompts.
func (o *Options) checkSeeds(prompts int) error {
	if o.Seeds != nil && len(o.Seeds) != prompts {
		return fmt.Errorf("seeds: %d for %d prompts", len(o.Seeds), prompts)
	}
	return nil
}
