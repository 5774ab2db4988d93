package tokenizer

import "sort"

// pieceTrie is a byte trie over piece strings for the Viterbi lattice: from
// a start position it yields every piece that begins there. Once frozen it
// is a double array (as sentencepiece's Darts): the child of node s by
// byte c is slot base[s]+c when check of that slot is s, so a step is two
// array reads. Nodes are slots; the root is slot 0.
type pieceTrie struct {
	// While building: children as maps.
	build  []map[byte]int32
	bvalue []int32
	// After freeze.
	base  []int32
	check []int32
	value []int32 // piece id ending at the slot, or -1
}

func newPieceTrie() *pieceTrie {
	return &pieceTrie{build: []map[byte]int32{{}}, bvalue: []int32{-1}}
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
			t.bvalue = append(t.bvalue, -1)
			t.build[node][s[i]] = next
		}
		node = next
	}
	t.bvalue[node] = id
}

// freeze lays the trie out as a double array: breadth first, each node's
// children at the first base where all their slots are free. Free slots
// are found through a union-find "next free slot" pointer, so taken runs
// are skipped in near-constant time.
func (t *pieceTrie) freeze() {
	if t.build == nil {
		return
	}
	var nextFree []int32 // nextFree[p] == p: p is free
	grow := func(n int) {
		for len(t.check) < n {
			nextFree = append(nextFree, int32(len(t.check)))
			t.check = append(t.check, -1)
			t.base = append(t.base, 0)
			t.value = append(t.value, -1)
		}
	}
	find := func(p int) int {
		grow(p + 1)
		for int(nextFree[p]) != p {
			nextFree[p] = nextFree[nextFree[p]]
			p = int(nextFree[p])
			grow(p + 1)
		}
		return p
	}
	take := func(p int) { nextFree[p] = int32(p + 1); grow(p + 2) }
	grow(256)
	t.check[0] = 0 // the root's slot is taken
	take(0)
	t.value[0] = t.bvalue[0]
	slot := make([]int32, len(t.build)) // build node -> slot
	queue := []int32{0}
	var labels []int
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if len(t.build[n]) == 0 {
			continue
		}
		labels = labels[:0]
		for l := range t.build[n] {
			labels = append(labels, int(l))
		}
		sort.Ints(labels)
		var b int
		for p := find(labels[0] + 1); ; p = find(p + 1) {
			b = p - labels[0]
			grow(b + 257)
			ok := true
			for _, l := range labels[1:] {
				if t.check[b+l] >= 0 {
					ok = false
					break
				}
			}
			if ok {
				break
			}
		}
		s := slot[n]
		t.base[s] = int32(b)
		for _, l := range labels {
			c := t.build[n][byte(l)]
			p := b + l
			t.check[p] = s
			take(p)
			t.value[p] = t.bvalue[c]
			slot[c] = int32(p)
			queue = append(queue, c)
		}
	}
	t.build, t.bvalue = nil, nil
}

// next follows the edge labelled c from node; -1 when there is none.
func (t *pieceTrie) next(node int32, c byte) int32 {
	p := t.base[node] + int32(c)
	if t.base[node] == 0 || int(p) >= len(t.check) || t.check[p] != node {
		return -1
	}
	return p
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
