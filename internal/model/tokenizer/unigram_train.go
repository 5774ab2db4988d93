package tokenizer

import (
	_ "embed"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// nmtNFKC is sentencepiece's compiled nmt_nfkc normalisation rules (the
// precompiled_charsmap every model trained with the default rule carries;
// extracted from testdata/spm/t5like.model, which python sentencepiece
// trained). TrainUnigram's models normalise as T5's do.
//
//go:embed nmt_nfkc.charsmap
var nmtNFKC []byte

// UnigramTrainOptions configures TrainUnigram. Zero values take
// sentencepiece's defaults.
type UnigramTrainOptions struct {
	// VocabSize counts every piece, the three specials included (pad,
	// eos, unk: T5's layout, ids 0, 1, 2); sentinels are not counted.
	VocabSize int
	// MaxPieceLength in characters (16).
	MaxPieceLength int
	// SeedSize is how many substrings seed the vocabulary (200000;
	// sentencepiece: 1000000).
	SeedSize int
	// ShrinkingFactor is the fraction of pieces each pruning keeps (0.75).
	ShrinkingFactor float64
	// SubIterations is EM iterations per pruning round (2).
	SubIterations int
	// CharacterCoverage: the rarest characters beyond this fraction of
	// character occurrences get no piece and become <unk> (0.9995).
	CharacterCoverage float64
}

func (o *UnigramTrainOptions) defaults() {
	if o.MaxPieceLength <= 0 {
		o.MaxPieceLength = 16
	}
	if o.SeedSize <= 0 {
		o.SeedSize = 200000
	}
	if o.ShrinkingFactor <= 0 {
		o.ShrinkingFactor = 0.75
	}
	if o.SubIterations <= 0 {
		o.SubIterations = 2
	}
	if o.CharacterCoverage <= 0 {
		o.CharacterCoverage = 0.9995
	}
}

// TrainUnigram learns a SentencePiece Unigram model from texts, following
// sentencepiece's unigram_model_trainer.cc (Kudo 2018), simplified where
// noted:
//
//  1. Texts are normalised with nmt_nfkc (dummy prefix, whitespace as "▁")
//     and cut into words at "▁"; training works on word counts.
//  2. Required characters: the most frequent ones covering
//     CharacterCoverage of all occurrences; rarer ones become <unk>.
//  3. Seed vocabulary: every substring of a word of at most MaxPieceLength
//     characters that is a valid piece (one Unicode script, Hiragana and
//     Katakana counting as Han; numbers apart; "▁" only first), seen at
//     least twice, ranked by frequency x length; the top SeedSize plus the
//     required characters. (sentencepiece finds them with a suffix array
//     over the whole corpus; counting substrings of words gives the same
//     candidates because no piece crosses a word.)
//  4. EM: expected piece counts by forward-backward over each word's
//     lattice, pieces expected less than 0.5 times dropped, new log
//     probabilities digamma(count) - digamma(total) (the Bayesian update
//     sentencepiece uses), SubIterations times.
//  5. Pruning: each piece's loss is the drop in likelihood if its Viterbi
//     uses were re-segmented by its best segmentation without it; the
//     ShrinkingFactor best survive, until the vocabulary is within 1.1 x
//     VocabSize; then the highest scores are kept, required characters
//     always.
//
// The result is deterministic (sorted iteration everywhere) and loads
// with sentencepiece itself (SPModel.Marshal).
func TrainUnigram(texts []string, o UnigramTrainOptions) (*SPModel, error) {
	o.defaults()
	const specials = 3
	if o.VocabSize <= specials+1 {
		return nil, fmt.Errorf("unigram: vocabulary size %d is too small (3 specials come first)", o.VocabSize)
	}
	spec := NormalizerSpec{Name: "nmt_nfkc", PrecompiledCharsmap: nmtNFKC, AddDummyPrefix: true, RemoveExtraWhitespaces: true, EscapeWhitespaces: true}
	norm, err := newSPNormalizer(spec, nil, false)
	if err != nil {
		return nil, err
	}
	tr := &unigramTrainer{o: o, script: map[rune]int{}}
	if err := tr.countWords(texts, norm); err != nil {
		return nil, err
	}
	tr.requiredChars()
	tr.seed()
	desired := int(float64(o.VocabSize-specials) * 1.1)
	for round := 0; ; round++ {
		for it := 0; it < o.SubIterations; it++ {
			expected := tr.expect()
			tr.maximize(expected)
		}
		if len(tr.pieces) <= desired {
			break
		}
		tr.prune(desired)
	}
	m := tr.finish(spec)
	if len(m.Pieces) < o.VocabSize {
		// sentencepiece's hard_vocab_limit: too few pieces survive.
		return nil, fmt.Errorf("unigram: vocabulary size %d is too large for this text: only %d pieces survive training (set it to %d or less)", o.VocabSize, len(m.Pieces), len(m.Pieces))
	}
	return m, nil
}

type unigramTrainer struct {
	o      UnigramTrainOptions
	words  []string // distinct words, sorted
	counts []float64
	// required characters, most frequent first, with their counts.
	required  []string
	reqCount  map[string]float64
	script    map[rune]int
	pieces    []string
	scores    []float64
	trie      *pieceTrie
	minScore  float64
	totalFreq float64
}

func (tr *unigramTrainer) countWords(texts []string, norm *spNormalizer) error {
	counts := map[string]float64{}
	for _, t := range texts {
		s := norm.Normalize(t)
		for s != "" {
			end := strings.Index(s[len(spaceSymbol):], spaceSymbol)
			if end < 0 {
				end = len(s)
			} else {
				end += len(spaceSymbol)
			}
			counts[s[:end]]++
			s = s[end:]
		}
	}
	if len(counts) == 0 {
		return fmt.Errorf("unigram: no text to train on")
	}
	tr.words = make([]string, 0, len(counts))
	for w := range counts {
		tr.words = append(tr.words, w)
	}
	sort.Strings(tr.words)
	tr.counts = make([]float64, len(tr.words))
	for i, w := range tr.words {
		tr.counts[i] = counts[w]
		tr.totalFreq += counts[w]
	}
	return nil
}

func (tr *unigramTrainer) requiredChars() {
	chars := map[string]float64{}
	total := 0.0
	for i, w := range tr.words {
		for _, r := range w {
			chars[string(r)] += tr.counts[i]
			total += tr.counts[i]
		}
	}
	all := sortedByValue(chars)
	tr.reqCount = map[string]float64{}
	acc := 0.0
	for _, c := range all {
		if acc/total >= tr.o.CharacterCoverage {
			break
		}
		acc += chars[c]
		tr.required = append(tr.required, c)
		tr.reqCount[c] = chars[c]
	}
}

// sortedByValue returns m's keys by descending value, ties by key.
func sortedByValue(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// Script classes for valid pieces.
const (
	scriptNumber = iota + 1
	scriptCommon
	scriptInherited
	scriptHan
	scriptOther // letters of scripts not listed
	scriptFirst // the listed scripts follow
)

var pieceScripts = []*unicode.RangeTable{unicode.Latin, unicode.Greek, unicode.Cyrillic, unicode.Arabic,
	unicode.Hebrew, unicode.Hangul, unicode.Thai, unicode.Devanagari, unicode.Armenian, unicode.Georgian}

func (tr *unigramTrainer) scriptOf(r rune) int {
	if s, ok := tr.script[r]; ok {
		return s
	}
	s := scriptOther
	switch {
	case unicode.IsNumber(r):
		s = scriptNumber
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		s = scriptInherited
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 0x30FC:
		s = scriptHan
	case !unicode.IsLetter(r):
		s = scriptCommon
	default:
		for i, t := range pieceScripts {
			if unicode.Is(t, r) {
				s = scriptFirst + i
				break
			}
		}
	}
	tr.script[r] = s
	return s
}

// validPiece: no "▁" but first, one script (combining marks join any).
func (tr *unigramTrainer) validPiece(rs []rune) bool {
	prev := 0
	for i, r := range rs {
		if r == '▁' {
			if i > 0 {
				return false
			}
			continue
		}
		s := tr.scriptOf(r)
		if s == scriptInherited {
			continue
		}
		if prev != 0 && s != prev {
			return false
		}
		prev = s
	}
	return true
}

func (tr *unigramTrainer) seed() {
	sub := map[string]float64{}
	for i, w := range tr.words {
		rs := []rune(w)
		for a := range rs {
			if _, ok := tr.reqCount[string(rs[a])]; !ok {
				continue
			}
			for b := a + 2; b <= len(rs) && b-a <= tr.o.MaxPieceLength; b++ {
				if _, ok := tr.reqCount[string(rs[b-1])]; !ok || !tr.validPiece(rs[a:b]) {
					break
				}
				sub[string(rs[a:b])] += tr.counts[i]
			}
		}
	}
	// Rank by frequency x length; keep those seen twice or more.
	score := map[string]float64{}
	for s, f := range sub {
		if f >= 2 {
			score[s] = f * float64(utf8.RuneCountInString(s))
		}
	}
	ranked := sortedByValue(score)
	if len(ranked) > tr.o.SeedSize {
		ranked = ranked[:tr.o.SeedSize]
	}
	seed := map[string]float64{}
	for _, c := range tr.required {
		seed[c] = tr.reqCount[c]
	}
	for _, s := range ranked {
		seed[s] = score[s]
	}
	order := sortedByValue(seed)
	sum := 0.0 // summed in a fixed order: bit-identical runs
	for _, p := range order {
		sum += seed[p]
	}
	tr.setPieces(order, func(p string) float64 { return math.Log(seed[p]) - math.Log(sum) })
}

func (tr *unigramTrainer) setPieces(pieces []string, score func(string) float64) {
	tr.pieces = pieces
	tr.scores = make([]float64, len(pieces))
	tr.trie = newPieceTrie()
	tr.minScore = math.Inf(1)
	for i, p := range pieces {
		tr.scores[i] = score(p)
		tr.minScore = math.Min(tr.minScore, tr.scores[i])
		tr.trie.insert(p, int32(i))
	}
	tr.trie.freeze()
}

type latticeNode struct {
	start, end int
	id         int // -1: unknown character
	score      float64
}

// lattice lists every piece occurrence in w, and an unknown node for each
// character no single piece covers. skip, when >= 0, is left out.
func (tr *unigramTrainer) lattice(w string, skip int, dst []latticeNode) []latticeNode {
	dst = dst[:0]
	unk := tr.minScore - 10
	for start := 0; start < len(w); {
		_, size := utf8.DecodeRuneInString(w[start:])
		single := false
		cur := int32(0)
		for k := start; k < len(w); k++ {
			if cur = tr.trie.next(cur, w[k]); cur < 0 {
				break
			}
			id := int(tr.trie.value[cur])
			if id < 0 || id == skip {
				continue
			}
			dst = append(dst, latticeNode{start, k + 1, id, tr.scores[id]})
			if k+1-start == size {
				single = true
			}
		}
		if !single {
			dst = append(dst, latticeNode{start, start + size, -1, unk})
		}
		start += size
	}
	return dst
}

func logAdd(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// expect is the E-step: expected piece counts over the corpus.
func (tr *unigramTrainer) expect() []float64 {
	expected := make([]float64, len(tr.pieces))
	var nodes []latticeNode
	var alpha, beta []float64
	for i, w := range tr.words {
		nodes = tr.lattice(w, -1, nodes)
		n := len(w)
		alpha = resize(alpha, n+1)
		beta = resize(beta, n+1)
		for j := range alpha {
			alpha[j], beta[j] = math.Inf(-1), math.Inf(-1)
		}
		alpha[0], beta[n] = 0, 0
		// Nodes are ordered by start: forward in order, backward reversed.
		for _, nd := range nodes {
			alpha[nd.end] = logAdd(alpha[nd.end], alpha[nd.start]+nd.score)
		}
		for k := len(nodes) - 1; k >= 0; k-- {
			nd := nodes[k]
			beta[nd.start] = logAdd(beta[nd.start], nd.score+beta[nd.end])
		}
		z := alpha[n]
		for _, nd := range nodes {
			if nd.id >= 0 {
				expected[nd.id] += tr.counts[i] * math.Exp(alpha[nd.start]+nd.score+beta[nd.end]-z)
			}
		}
	}
	return expected
}

func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// maximize is the M-step with sentencepiece's pruning of rare pieces.
func (tr *unigramTrainer) maximize(expected []float64) {
	var keep []string
	counts := map[string]float64{}
	sum := 0.0
	for i, p := range tr.pieces {
		if expected[i] < 0.5 {
			continue
		}
		keep = append(keep, p)
		counts[p] = expected[i]
		sum += expected[i]
	}
	logSum := digamma(sum)
	tr.setPieces(keep, func(p string) float64 { return digamma(counts[p]) - logSum })
}

// viterbi returns the best segmentation of w (piece ids; -1 unknown).
func (tr *unigramTrainer) viterbi(w string, skip int, nodes []latticeNode) ([]int, []latticeNode) {
	nodes = tr.lattice(w, skip, nodes)
	n := len(w)
	best := make([]float64, n+1)
	from := make([]int, n+1)
	for j := range best {
		best[j] = math.Inf(-1)
	}
	best[0] = 0
	for k, nd := range nodes {
		if s := best[nd.start] + nd.score; s > best[nd.end] {
			best[nd.end], from[nd.end] = s, k
		}
	}
	var path []int
	for end := n; end > 0; {
		nd := nodes[from[end]]
		path = append(path, nd.id)
		end = nd.start
	}
	return path, nodes
}

// prune drops the pieces whose removal costs the least likelihood.
func (tr *unigramTrainer) prune(desired int) {
	// Each piece's best segmentation without itself.
	var nodes []latticeNode
	alternatives := make([][]int, len(tr.pieces))
	for i, p := range tr.pieces {
		if utf8.RuneCountInString(p) == 1 {
			continue // a character has no alternative: always kept
		}
		alternatives[i], nodes = tr.viterbi(p, i, nodes)
	}
	freq := make([]float64, len(tr.pieces))
	inverted := make([]float64, len(tr.pieces))
	vsum := 0.0
	for i, w := range tr.words {
		var path []int
		path, nodes = tr.viterbi(w, -1, nodes)
		vsum += tr.counts[i]
		for _, id := range path {
			if id >= 0 {
				freq[id] += tr.counts[i]
				inverted[id] += tr.counts[i]
			}
		}
	}
	sum := 0.0
	for _, f := range freq {
		sum += f
	}
	logSum := math.Log(sum)
	type cand struct {
		id   int
		loss float64
	}
	var always []int
	var cands []cand
	for i := range tr.pieces {
		switch {
		case freq[i] == 0:
			// never used by a Viterbi path: removed
		case alternatives[i] == nil:
			always = append(always, i)
		default:
			alt := alternatives[i]
			logProb := math.Log(freq[i]) - logSum
			logSumAlt := math.Log(sum + freq[i]*float64(len(alt)-1))
			logProbAlt := 0.0
			for _, n := range alt {
				f := freq[i]
				if n >= 0 {
					f += freq[n]
				}
				logProbAlt += math.Log(f) - logSumAlt
			}
			cands = append(cands, cand{i, inverted[i] / vsum * (logProb - logProbAlt)})
		}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].loss > cands[b].loss })
	size := max(desired, int(tr.o.ShrinkingFactor*float64(len(tr.pieces))))
	keep := map[int]bool{}
	for _, i := range always {
		keep[i] = true
	}
	for _, c := range cands {
		if len(keep) >= size {
			break
		}
		keep[c.id] = true
	}
	var pieces []string
	scores := map[string]float64{}
	for i, p := range tr.pieces {
		if keep[i] {
			pieces = append(pieces, p)
			scores[p] = tr.scores[i]
		}
	}
	tr.setPieces(pieces, func(p string) float64 { return scores[p] })
}

// finish keeps the required characters and the best-scored pieces, in
// sentencepiece's order (by score), after T5's specials.
func (tr *unigramTrainer) finish(spec NormalizerSpec) *SPModel {
	final := map[string]float64{}
	scores := map[string]float64{}
	for i, p := range tr.pieces {
		scores[p] = tr.scores[i]
	}
	penalty := 0.0
	for _, c := range tr.required {
		if s, ok := scores[c]; ok {
			final[c] = s
		} else {
			final[c] = tr.minScore + penalty
			penalty += 0.0001
		}
	}
	room := tr.o.VocabSize - 3
	for _, p := range sortedByValue(scores) {
		if len(final) >= room {
			break
		}
		if _, ok := final[p]; !ok {
			final[p] = scores[p]
		}
	}
	m := &SPModel{ModelType: 1, UnkSurface: defaultUnkSurface, Normalizer: spec,
		Pieces: []string{"<pad>", "</s>", "<unk>"}, Scores: []float32{0, 0, 0},
		Types: []PieceType{PieceControl, PieceControl, PieceUnknown}}
	for _, p := range sortedByValue(final) {
		m.Pieces = append(m.Pieces, p)
		m.Scores = append(m.Scores, float32(final[p]))
		m.Types = append(m.Types, PieceNormal)
	}
	return m
}

// digamma is the derivative of log Gamma (recurrence up to 7, then the
// asymptotic series), as sentencepiece's trainer computes it.
func digamma(x float64) float64 {
	r := 0.0
	for ; x < 7; x++ {
		r -= 1 / x
	}
	x -= 0.5
	xx := 1 / x
	xx2 := xx * xx
	xx4 := xx2 * xx2
	return r + math.Log(x) + (1.0/24)*xx2 - (7.0/960)*xx4 + (31.0/8064)*xx4*xx2 - (127.0/30720)*xx4*xx4
}

// TrainT5SentencePiece trains a Unigram model of vocabSize pieces (T5's
// pad, eos and unk included) on texts and frames it as T5's tokenizer with
// sentinels <extra_id_N> after the pieces.
func TrainT5SentencePiece(texts []string, vocabSize, sentinels int) (*SentencePiece, error) {
	m, err := TrainUnigram(texts, UnigramTrainOptions{VocabSize: vocabSize})
	if err != nil {
		return nil, err
	}
	return NewSentencePiece(m, sentinels)
}
