package tokenizer

import "sort"

// pieceTrie is a byte trie over piece strings for the Viterbi lattice: from
// a start position it yields every piece that begins there. Children are
// kept in one flat edge array sorted by label per node (built once), so a
// step is a short scan rather than a map lookup; the root, which has most
// children, is a direct 256-entry table.
type pieceTrie struct {
	// While building: children as maps.
	build []map[byte]int32
	// After freeze: node i's edges are edges[first[i]:first[i+1]].
	first  []int32
	labels []byte
	child  []int32
	root   [256]int32
	value  []int32 // piece id ending at the node, or -1
}

func newPieceTrie() *pieceTrie {
	return &pieceTrie{build: []map[byte]int32{{}}, value: []int32{-1}}
}

func (t *pieceTrie) insert(s string, id int32) {
	if t.build == nil {
		panic("pieceTrie: insert after freeze")
	}
	node := int32(0)
	for i := 0; i < len(s); i++ {
		next, ok := t.build[node][s[i]]
		if !ok {
			next = int32(len(t.build))
			t.build = append(t.build, map[byte]int32{})
			t.value = append(t.value, -1)
			t.build[node][s[i]] = next
		}
		node = next
	}
	t.value[node] = id
}

func (t *pieceTrie) freeze() {
	if t.build == nil {
		return
	}
	t.first = make([]int32, len(t.build)+1)
	for i, m := range t.build {
		t.first[i] = int32(len(t.labels))
		ls := make([]int, 0, len(m))
		for l := range m {
			ls = append(ls, int(l))
		}
		sort.Ints(ls)
		for _, l := range ls {
			t.labels = append(t.labels, byte(l))
			t.child = append(t.child, m[byte(l)])
		}
	}
	t.first[len(t.build)] = int32(len(t.labels))
	for i := range t.root {
		t.root[i] = -1
	}
	for l, c := range t.build[0] {
		t.root[l] = c
	}
	t.build = nil
}

// next follows the edge labelled c from node; -1 when there is none.
func (t *pieceTrie) next(node int32, c byte) int32 {
	if node == 0 {
		return t.root[c]
	}
	lo, hi := t.first[node], t.first[node+1]
	if hi-lo > 8 {
		for lo < hi {
			mid := (lo + hi) / 2
			switch l := t.labels[mid]; {
			case l == c:
				return t.child[mid]
			case l < c:
				lo = mid + 1
			default:
				hi = mid
			}
		}
		return -1
	}
	for i := lo; i < hi; i++ {
		if t.labels[i] == c {
			return t.child[i]
		}
	}
	return -1
}

// longest returns the length and id of the longest piece prefixing s
// (after freeze).
func (t *pieceTrie) longest(s string) (int, int32) {
	node, best, id := int32(0), 0, int32(-1)
	for i := 0; i < len(s); i++ {
		if node = t.next(node, s[i]); node < 0 {
			break
		}
		if v := t.value[node]; v >= 0 {
			best, id = i+1, v
		}
	}
	return best, id
}
