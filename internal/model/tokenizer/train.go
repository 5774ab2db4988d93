package tokenizer

import (
	"container/heap"
	"fmt"
	"sort"
	"strings"
)

// TrainOptions configures TrainWordPiece.
type TrainOptions struct {
	// VocabSize is the target size including special tokens and alphabet.
	VocabSize int
	// MinFrequency: a merge is only made when the pair occurs at least this
	// often (default 2, as HF's BertWordPieceTokenizer.train).
	MinFrequency int
	// LimitAlphabet keeps only the most frequent characters (default 1000,
	// as HF); rarer ones tokenize to [UNK].
	LimitAlphabet int
	// Basic is the pre-tokenizer applied to the corpus (and to be used
	// with the result).
	Basic BasicOptions
}

// TrainWordPiece learns a WordPiece vocabulary from sentences with the
// algorithm of Hugging Face tokenizers' WordPieceTrainer, which is its BPE
// trainer with "##" as the continuing-subword prefix: words come from Basic
// and are counted; each word starts as its characters, all but the first
// prefixed "##"; the most frequent adjacent pair is merged repeatedly (the
// merged token is a + b without b's "##") until VocabSize is reached. Ties
// are broken by the pair's strings in byte order, so the result is
// deterministic (HF breaks ties by internal ids, so vocabularies can differ
// from HF's in tie order only). Encoding with the result uses WordPiece's
// greedy longest match, as HF does.
//
// The vocabulary is [PAD] [UNK] [CLS] [SEP] [MASK], then the alphabet
// (first-character forms, then "##" forms, each sorted), then merges in
// the order learned.
func TrainWordPiece(sentences []string, o TrainOptions) ([]string, error) {
	if o.VocabSize <= 5 {
		return nil, fmt.Errorf("train wordpiece: vocab size %d too small (need > 5)", o.VocabSize)
	}
	if o.MinFrequency <= 0 {
		o.MinFrequency = 2
	}
	if o.LimitAlphabet <= 0 {
		o.LimitAlphabet = 1000
	}
	counts := map[string]int{}
	for _, s := range sentences {
		for _, w := range Basic(s, o.Basic) {
			counts[w]++
		}
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("train wordpiece: corpus has no words")
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Strings(words) // map order must not leak into the result

	// Alphabet: most frequent characters, ties by rune.
	charFreq := map[rune]int{}
	for _, w := range words {
		for _, r := range w {
			charFreq[r] += counts[w]
		}
	}
	chars := make([]rune, 0, len(charFreq))
	for r := range charFreq {
		chars = append(chars, r)
	}
	sort.Slice(chars, func(i, j int) bool {
		if charFreq[chars[i]] != charFreq[chars[j]] {
			return charFreq[chars[i]] > charFreq[chars[j]]
		}
		return chars[i] < chars[j]
	})
	if len(chars) > o.LimitAlphabet {
		chars = chars[:o.LimitAlphabet]
	}
	keep := map[rune]bool{}
	for _, r := range chars {
		keep[r] = true
	}

	vocab := []string{TokPAD, TokUNK, TokCLS, TokSEP, TokMASK}
	st := &symtab{id: map[string]int{}}
	// Words split into symbols; a word holding a dropped character is
	// skipped whole (it can only ever encode to [UNK]).
	var ws []trainWord
	var initial, cont []string
	for _, w := range words {
		rs := []rune(w)
		ok := true
		for _, r := range rs {
			ok = ok && keep[r]
		}
		if !ok {
			continue
		}
		tw := trainWord{count: counts[w], syms: make([]int, len(rs))}
		for i, r := range rs {
			s := string(r)
			if i > 0 {
				s = "##" + s
			}
			if _, seen := st.id[s]; !seen {
				if i > 0 {
					cont = append(cont, s)
				} else {
					initial = append(initial, s)
				}
			}
			tw.syms[i] = st.get(s)
		}
		ws = append(ws, tw)
	}
	sort.Strings(initial)
	sort.Strings(cont)
	vocab = append(vocab, initial...)
	vocab = append(vocab, cont...)
	vocab, _ = learnMerges(ws, st, vocab, o.VocabSize, o.MinFrequency, func(a, b string) string {
		return a + strings.TrimPrefix(b, "##")
	})
	return vocab, nil
}

// learnMerges is the merge loop of BPE training, shared by TrainWordPiece
// and TrainBPE: the most frequent adjacent pair of symbols in ws (ties by
// the pair's strings) is merged into join(a, b) in every word, until vocab
// holds size entries or no pair occurs minFreq times. It returns vocab
// with the new symbols appended and the merges made, in order.
func learnMerges(ws []trainWord, st *symtab, vocab []string, size, minFreq int, join func(a, b string) string) ([]string, [][2]string) {
	inVocab := map[string]bool{}
	for _, v := range vocab {
		inVocab[v] = true
	}
	var merges [][2]string
	// Pair statistics, with the words each pair occurs in.
	pc := map[uint64]int{}
	where := map[uint64]map[int]struct{}{}
	addWord := func(wi, sign int) {
		w := ws[wi]
		for i := 0; i+1 < len(w.syms); i++ {
			k := pairKey(w.syms[i], w.syms[i+1])
			pc[k] += sign * w.count
			if sign > 0 {
				m := where[k]
				if m == nil {
					m = map[int]struct{}{}
					where[k] = m
				}
				m[wi] = struct{}{}
			}
		}
	}
	for wi := range ws {
		addWord(wi, 1)
	}
	h := &pairHeap{st: st}
	for k, c := range pc {
		h.items = append(h.items, pairItem{k, c})
	}
	heap.Init(h)

	for len(vocab) < size && h.Len() > 0 {
		top := heap.Pop(h).(pairItem)
		if cur := pc[top.key]; cur != top.count {
			continue // stale entry; the current count was pushed when it changed
		}
		if top.count < minFreq {
			break
		}
		a, b := int(top.key>>32), int(uint32(top.key))
		merges = append(merges, [2]string{st.str[a], st.str[b]})
		merged := join(st.str[a], st.str[b])
		mid := st.get(merged)
		if !inVocab[merged] {
			vocab = append(vocab, merged)
			inVocab[merged] = true
		}
		affected := make([]int, 0, len(where[top.key]))
		for wi := range where[top.key] {
			affected = append(affected, wi)
		}
		sort.Ints(affected)
		changed := map[uint64]bool{}
		for _, wi := range affected {
			w := &ws[wi]
			before := pairsOf(w.syms)
			addWord(wi, -1)
			out := w.syms[:0:0]
			for i := 0; i < len(w.syms); i++ {
				if i+1 < len(w.syms) && w.syms[i] == a && w.syms[i+1] == b {
					out = append(out, mid)
					i++
					continue
				}
				out = append(out, w.syms[i])
			}
			w.syms = out
			addWord(wi, 1)
			for _, k := range before {
				changed[k] = true
			}
			for _, k := range pairsOf(w.syms) {
				changed[k] = true
			}
		}
		delete(pc, top.key)
		delete(where, top.key)
		keys := make([]uint64, 0, len(changed))
		for k := range changed {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, k := range keys {
			if c := pc[k]; c > 0 && k != top.key {
				heap.Push(h, pairItem{k, c})
			}
		}
	}
	return vocab, merges
}

type trainWord struct {
	count int
	syms  []int
}

func pairKey(a, b int) uint64 { return uint64(a)<<32 | uint64(uint32(b)) }

func pairsOf(s []int) []uint64 {
	var ks []uint64
	for i := 0; i+1 < len(s); i++ {
		ks = append(ks, pairKey(s[i], s[i+1]))
	}
	return ks
}

// symtab interns symbol strings.
type symtab struct {
	id  map[string]int
	str []string
}

func (s *symtab) get(x string) int {
	if i, ok := s.id[x]; ok {
		return i
	}
	s.id[x] = len(s.str)
	s.str = append(s.str, x)
	return len(s.str) - 1
}

type pairItem struct {
	key   uint64
	count int
}

// pairHeap pops the most frequent pair; ties go to the smaller (a, b) by
// string so training does not depend on interning order.
type pairHeap struct {
	items []pairItem
	st    *symtab
}

func (h *pairHeap) Len() int { return len(h.items) }
func (h *pairHeap) Less(i, j int) bool {
	x, y := h.items[i], h.items[j]
	if x.count != y.count {
		return x.count > y.count
	}
	xa, xb := h.st.str[x.key>>32], h.st.str[uint32(x.key)]
	ya, yb := h.st.str[y.key>>32], h.st.str[uint32(y.key)]
	if xa != ya {
		return xa < ya
	}
	return xb < yb
}
func (h *pairHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *pairHeap) Push(x any)    { h.items = append(h.items, x.(pairItem)) }
func (h *pairHeap) Pop() any {
	n := len(h.items)
	it := h.items[n-1]
	h.items = h.items[:n-1]
	return it
}
