package syncse

// Stratum is where one generated row came from: the genre its call asked
// for and the topics the call named (none for prompts without topics).
type Stratum struct {
	Genre  string
	Topics []string
}

// StratifiedOrder orders rows so that every prefix of the order is spread
// as evenly as it can be over genre x topic: SynCSE-scratch's sentences
// come out genre by genre, so the first N rows of a generated set cover a
// genre or two, where a sample of it should cover all 21 as the whole set
// does. strata[i] is row i's; perm is a permutation of the rows (a seeded
// one: the sample's randomness), which breaks every tie. The rule:
//
//  1. Genres are visited in the order of their first row in perm; within a
//     genre, topics in the order of their first row (of that genre) in perm.
//     A row without topics belongs to its genre's topic "".
//  2. Each genre's rows are put in a sequence by rotating over its topics:
//     at each topic, the row earliest in perm that names the topic and is
//     not yet in the sequence is appended; a topic with none left is
//     skipped. (A call names several topics, so a row could come under
//     any of them; it comes under the first whose turn finds it.)
//  3. The order rotates over the genres the same way, taking each genre's
//     next row of its sequence; a genre with none left is skipped.
//
// So the first n rows give every genre n/G rows (the remainder one each to
// the genres first in the order; a genre with fewer rows gives all it has
// and the others share the rest evenly), and within a genre every topic
// the same number of turns, to within one. A smaller n keeps a prefix of a
// larger n's sample (the samples are nested). The result is a permutation
// of 0..len(strata)-1.
func StratifiedOrder(strata []Stratum, perm []int) []int {
	type genre struct {
		topics []string
		rows   map[string][]int // topic -> rows in perm order
		next   map[string]int   // topic -> position in rows of the next candidate
		left   int              // rows of the genre not yet ordered
	}
	byName := map[string]*genre{}
	var genres []*genre
	for _, i := range perm {
		s := strata[i]
		g := byName[s.Genre]
		if g == nil {
			g = &genre{rows: map[string][]int{}, next: map[string]int{}}
			byName[s.Genre] = g
			genres = append(genres, g)
		}
		g.left++
		topics := s.Topics
		if len(topics) == 0 {
			topics = []string{""}
		}
		for _, t := range topics {
			if _, ok := g.rows[t]; !ok {
				g.topics = append(g.topics, t)
			}
			g.rows[t] = append(g.rows[t], i)
		}
	}
	taken := make([]bool, len(strata))
	cursor := make([]int, len(genres)) // next topic of each genre's rotation
	// nextOf takes the next row of genre g's sequence (rule 2).
	nextOf := func(gi int) int {
		g := genres[gi]
		for tries := 0; tries < len(g.topics); tries++ {
			t := g.topics[cursor[gi]]
			cursor[gi] = (cursor[gi] + 1) % len(g.topics)
			rs := g.rows[t]
			k := g.next[t]
			for k < len(rs) && taken[rs[k]] {
				k++
			}
			g.next[t] = k
			if k < len(rs) {
				taken[rs[k]] = true
				g.next[t] = k + 1
				g.left--
				return rs[k]
			}
		}
		return -1 // cannot happen while g.left > 0: every row is under a topic
	}
	out := make([]int, 0, len(strata))
	for len(out) < len(strata) {
		for gi, g := range genres {
			if g.left == 0 {
				continue
			}
			if r := nextOf(gi); r >= 0 {
				out = append(out, r)
			} else {
				g.left = 0 // unreachable (every row is under a topic); never loop
			}
		}
	}
	return out
}
