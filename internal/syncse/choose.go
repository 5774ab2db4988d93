package syncse

import (
	"encoding/binary"
	"math/rand/v2"
	"sort"
	"strconv"

	"github.com/zeebo/blake3"
)

// Chooser makes the pipeline's random choices as pure functions of what a
// choice is about, so that they survive changes elsewhere.
//
// Which prompt and which exemplars a call gets is rendezvous (highest random
// weight) hashing: every candidate gets the score hash(seed, purpose, input,
// call, candidate id) and the call takes the best-scoring ones. Adding an
// input adds calls without touching any other call; editing the text of one
// prompt (candidates are named by position) changes only the calls that
// chose it, so only their requests are sent again; adding a candidate moves
// only the calls where it now scores best. A seeded shuffle would reshuffle
// every call on any such change, and so re-send every request.
type Chooser struct {
	Seed int64
}

// base hashes what a choice is about (BLAKE3 of the seed, purpose, key and
// call); score mixes it with a candidate's id. One BLAKE3 per choice and a
// cheap mix per candidate keep planning fast (a paper-size run plans
// hundreds of thousands of calls over pools of up to thousands of
// candidates).
func (c Chooser) base(purpose, key string, call int) uint64 {
	h := blake3.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(c.Seed))
	h.Write(b[:])
	for _, s := range []string{purpose, key, strconv.Itoa(call)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	sum := h.Sum(nil)
	return binary.LittleEndian.Uint64(sum[:8])
}

// score is the candidate's weight: SplitMix64's finaliser over the choice's
// base and the candidate id's FNV-1a hash.
func score(base uint64, id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	z := base ^ (h * 0x9e3779b97f4a7c15)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Pick returns the index of the candidate (named by ids) that the given
// call about key chooses for purpose.
func (c Chooser) Pick(purpose, key string, call int, ids []string) int {
	best, bi := uint64(0), -1
	b := c.base(purpose, key, call)
	for i, id := range ids {
		if s := score(b, id); bi < 0 || s > best {
			best, bi = s, i
		}
	}
	return bi
}

// Top returns the indices of the k best-scoring candidates, best first,
// leaving out those skip rejects (skip may be nil). Fewer come back when
// fewer remain.
func (c Chooser) Top(purpose, key string, call int, ids []string, k int, skip func(i int) bool) []int {
	type cand struct {
		i int
		s uint64
	}
	cs := make([]cand, 0, len(ids))
	b := c.base(purpose, key, call)
	for i, id := range ids {
		if skip != nil && skip(i) {
			continue
		}
		cs = append(cs, cand{i, score(b, id)})
	}
	sort.Slice(cs, func(a, b int) bool {
		if cs[a].s != cs[b].s {
			return cs[a].s > cs[b].s
		}
		return cs[a].i < cs[b].i
	})
	if k > len(cs) {
		k = len(cs)
	}
	out := make([]int, k)
	for j := range out {
		out[j] = cs[j].i
	}
	return out
}

// Rand returns a generator seeded by what the draws are about, for choices
// where stability under edits does not matter (which corpus sentences make
// up a one-shot example).
func (c Chooser) Rand(purpose, key string, call int) *rand.Rand {
	s := c.base(purpose, key, call)
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

// positions names n candidates by their position: "0", "1", ...
func positions(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	return ids
}
