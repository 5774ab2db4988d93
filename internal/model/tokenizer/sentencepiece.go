package tokenizer

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// SentencePiece is a SentencePiece Unigram tokenizer (T5's spiece.model, or
// the Unigram model of a Hugging Face tokenizer.json), framed as T5 frames
// text: no BOS, EOS "</s>" appended, pad id 0 in T5's layout, and
// NumSentinels() sentinels "<extra_id_N>" appended after the model's
// pieces in T5's order (<extra_id_0> is the last id).
//
// Segmentation is a port of sentencepiece's (0.1.97) unigram_model.cc
// EncodeOptimized and sentencepiece_processor.cc: the model's own
// normaliser (precompiled charsmap; see spNormalizer), Viterbi over the
// pieces with float32 scores (a piece's score added to the path's in
// double precision, as there, which decides exact float32 ties), an
// unknown character scored min_score-10,
// runs of unknown characters merged into one <unk> (or spelled as <0xXX>
// byte pieces when the model has byte_fallback), user-defined symbols
// always taken whole. The golden test (testdata/gen_spm_golden.py) checks
// ids and decodings against python sentencepiece on thousands of
// sentences.
//
// Sentinels are special: "<extra_id_N>" written in the text becomes that
// id (the text between sentinels is encoded as separate pieces of text,
// as Hugging Face's T5 tokenizer does), and Decode drops them while
// DecodeWithSentinels writes them back.
type SentencePiece struct {
	m         *SPModel
	ids       map[string]int // every piece -> id
	trie      *pieceTrie     // NORMAL, USER_DEFINED, UNUSED pieces
	norm      *spNormalizer
	unk       int
	eos, pad  int
	byteIDs   [256]int
	minScore  float32
	maxScore  float32
	sentinels int
}

// NumT5Sentinels is how many <extra_id_N> T5 appends to its vocabulary.
const NumT5Sentinels = 100

// NewSentencePiece builds the tokenizer from a parsed model, appending
// sentinels sentinel ids. The model must be a Unigram model with exactly
// one unknown piece, no duplicate or empty pieces, and all 256 byte pieces
// if it uses byte fallback (as sentencepiece checks when loading).
func NewSentencePiece(m *SPModel, sentinels int) (*SentencePiece, error) {
	if m.ModelType != 1 {
		return nil, fmt.Errorf("sentencepiece: model type %d is not unigram (1); only Unigram models are supported", m.ModelType)
	}
	// Ids are int32 in the piece trie, and Size (pieces + sentinels) must
	// not wrap, or sentinel ids go negative.
	if sentinels < 0 || len(m.Pieces) > math.MaxInt32 || sentinels > math.MaxInt32-len(m.Pieces) {
		return nil, fmt.Errorf("sentencepiece: %d sentinels after %d pieces: %w", sentinels, len(m.Pieces), ErrVocab)
	}
	if len(m.Scores) != len(m.Pieces) || len(m.Types) != len(m.Pieces) {
		return nil, fmt.Errorf("sentencepiece: %d pieces, %d scores, %d types: %w", len(m.Pieces), len(m.Scores), len(m.Types), ErrVocab)
	}
	t := &SentencePiece{m: m, ids: make(map[string]int, len(m.Pieces)), trie: newPieceTrie(),
		unk: -1, eos: -1, pad: -1, sentinels: sentinels}
	for i := range t.byteIDs {
		t.byteIDs[i] = -1
	}
	first := true
	var user []string
	for i, p := range m.Pieces {
		if p == "" {
			return nil, fmt.Errorf("sentencepiece: piece %d is empty", i)
		}
		if j, dup := t.ids[p]; dup {
			return nil, fmt.Errorf("sentencepiece: piece %q is defined twice (ids %d and %d)", p, j, i)
		}
		t.ids[p] = i
		switch m.Types[i] {
		case PieceNormal:
			if first || m.Scores[i] < t.minScore {
				t.minScore = m.Scores[i]
			}
			if first || m.Scores[i] > t.maxScore {
				t.maxScore = m.Scores[i]
			}
			first = false
			t.trie.insert(p, int32(i))
		case PieceUserDefined:
			user = append(user, p)
			t.trie.insert(p, int32(i))
		case PieceUnused:
			t.trie.insert(p, int32(i))
		case PieceUnknown:
			if t.unk >= 0 {
				return nil, fmt.Errorf("sentencepiece: two unknown pieces (ids %d and %d)", t.unk, i)
			}
			t.unk = i
		case PieceByte:
			if !m.ByteFallback {
				return nil, fmt.Errorf("sentencepiece: byte piece %q in a model without byte_fallback", p)
			}
			b, ok := pieceByte(p)
			if !ok {
				return nil, fmt.Errorf("sentencepiece: byte piece %q is not of the form <0xXX>", p)
			}
			t.byteIDs[b] = i
		}
	}
	if t.unk < 0 {
		return nil, fmt.Errorf("sentencepiece: the model has no unknown piece")
	}
	if m.ByteFallback {
		for b, id := range t.byteIDs {
			if id < 0 {
				return nil, fmt.Errorf("sentencepiece: byte_fallback but no piece for byte 0x%02X", b)
			}
		}
	}
	t.trie.freeze()
	if id, ok := t.ids["</s>"]; ok && m.Types[id] == PieceControl {
		t.eos = id
	}
	if id, ok := t.ids["<pad>"]; ok && m.Types[id] == PieceControl {
		t.pad = id
	}
	var err error
	if t.norm, err = newSPNormalizer(m.Normalizer, user, m.TreatWhitespaceAsSuffix); err != nil {
		return nil, fmt.Errorf("sentencepiece: %w", err)
	}
	return t, nil
}

// LoadSentencePiece reads an spiece.model and appends the T5 sentinels.
func LoadSentencePiece(path string, sentinels int) (*SentencePiece, error) {
	m, err := ReadSPModel(path)
	if err != nil {
		return nil, err
	}
	t, err := NewSentencePiece(m, sentinels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func pieceByte(p string) (byte, bool) {
	if len(p) != 6 || !strings.HasPrefix(p, "<0x") || p[5] != '>' {
		return 0, false
	}
	v, err := strconv.ParseUint(p[3:5], 16, 8)
	return byte(v), err == nil
}

// Model returns the parsed model (shared; do not modify).
func (t *SentencePiece) Model() *SPModel { return t.m }

// Size is the number of ids: the model's pieces plus the sentinels.
func (t *SentencePiece) Size() int { return len(t.m.Pieces) + t.sentinels }

// Special maps the T5 specials onto Specials: SEP is EOS (T5 ends every
// sequence with it), PAD the pad (also T5's decoder start), UNK the
// unknown piece; T5 has no CLS or MASK (its masks are the sentinels).
func (t *SentencePiece) Special() Specials {
	return Specials{CLS: -1, SEP: t.eos, PAD: t.pad, UNK: t.unk, MASK: -1}
}

// EOS is the id of "</s>" (-1 if the model has none).
func (t *SentencePiece) EOS() int { return t.eos }

// NumSentinels is how many <extra_id_N> ids follow the model's pieces.
func (t *SentencePiece) NumSentinels() int { return t.sentinels }

// Sentinel returns the id of <extra_id_i>: T5 counts them down from the
// last id. It panics when i is out of range.
func (t *SentencePiece) Sentinel(i int) int {
	if i < 0 || i >= t.sentinels {
		panic(fmt.Sprintf("sentencepiece: sentinel %d of %d", i, t.sentinels))
	}
	return t.Size() - 1 - i
}

// SentinelIndex returns i when id is <extra_id_i>.
func (t *SentencePiece) SentinelIndex(id int) (int, bool) {
	if id < len(t.m.Pieces) || id >= t.Size() {
		return 0, false
	}
	return t.Size() - 1 - id, true
}

// SentinelText is the text form of sentinel i.
func SentinelText(i int) string { return "<extra_id_" + strconv.Itoa(i) + ">" }

// Piece returns the piece of id (sentinels as "<extra_id_N>"; "" when out
// of range).
func (t *SentencePiece) Piece(id int) string {
	if i, ok := t.SentinelIndex(id); ok {
		return SentinelText(i)
	}
	if id < 0 || id >= len(t.m.Pieces) {
		return ""
	}
	return t.m.Pieces[id]
}

// ID returns the id of a piece or sentinel text.
func (t *SentencePiece) ID(piece string) (int, bool) {
	if id, ok := t.ids[piece]; ok {
		return id, true
	}
	if i, n := sentinelAt(piece, t.sentinels); n == len(piece) && n > 0 {
		return t.Sentinel(i), true
	}
	return -1, false
}

// Normalize applies the model's normaliser (with the dummy prefix and
// whitespace escaping), as sentencepiece does before segmenting.
func (t *SentencePiece) Normalize(text string) string { return t.norm.Normalize(text) }

// utf8Len is sentencepiece's OneCharLen: the length of a UTF-8 sequence
// from its first byte.
func utf8Len(b byte) int {
	return [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[b>>4]
}

// viterbiNode is the best path ending at a position.
type viterbiNode struct {
	id     int
	score  float32
	starts int
}

// spScratch holds Viterbi's buffers between calls (from spScratchPool),
// so that encoding a sentence allocates little.
type spScratch struct {
	best []viterbiNode
	path []spPiece
}

var spScratchPool = sync.Pool{New: func() any { return new(spScratch) }}

// spPiece is one segment of a normalised string.
type spPiece struct {
	s  string
	id int
}

// viterbi segments normalised text (unigram_model.cc EncodeOptimized).
func (t *SentencePiece) viterbi(s string, sc *spScratch) []spPiece {
	type node = viterbiNode
	n := len(s)
	if cap(sc.best) < n+1 {
		sc.best = make([]viterbiNode, n+1)
	}
	best := sc.best[:n+1]
	for i := range best {
		best[i] = node{id: -1, starts: -1}
	}
	unkScore := t.minScore - 10
	for start := 0; start < n; {
		base := best[start].score
		mblen := min(utf8Len(s[start]), n-start)
		single := false
		cur := int32(0)
		for k := start; k < n; k++ {
			if cur = t.trie.next(cur, s[k]); cur < 0 {
				break
			}
			id := t.trie.value[cur]
			if id < 0 {
				continue
			}
			typ := t.m.Types[id]
			if typ == PieceUnused {
				continue
			}
			end, length := k+1, k+1-start
			target := &best[end]
			if typ == PieceUserDefined {
				// sentencepiece computes this bonus in double precision.
				cand := float64(float32(length)*t.maxScore) - 0.1 + float64(base)
				if target.starts == -1 || cand > float64(target.score) {
					*target = node{id: int(id), score: float32(cand), starts: start}
				}
			} else {
				// Also in double precision: in unigram_model.cc the
				// conditional's two arms make the score a double. The
				// sum is compared unrounded with the float32 score kept
				// for the end, so of two paths whose float32 sums tie,
				// the later can win ("7000": "▁7 00 0", not "▁7 0 00").
				cand := float64(t.m.Scores[id]) + float64(base)
				if target.starts == -1 || cand > float64(target.score) {
					*target = node{id: int(id), score: float32(cand), starts: start}
				}
			}
			if length == mblen {
				single = true
			}
		}
		if !single {
			target := &best[start+mblen]
			cand := unkScore + base
			if target.starts == -1 || cand > target.score {
				*target = node{id: t.unk, score: cand, starts: start}
			}
		}
		start += mblen
	}
	out := sc.path[:0]
	for end := n; end > 0; {
		nd := best[end]
		out = append(out, spPiece{s[nd.starts:end], nd.id})
		end = nd.starts
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// appendIDs appends the sentencepiece ids of text (no EOS, no sentinel
// handling): normalise, segment, then merge runs of unknowns or spell them
// as bytes, as SentencePieceProcessor::Encode does.
func (t *SentencePiece) appendIDs(dst []int, text string) []int {
	s := t.norm.Normalize(text)
	if s == "" {
		return dst
	}
	sc := spScratchPool.Get().(*spScratch)
	defer spScratchPool.Put(sc)
	path := t.viterbi(s, sc)
	sc.path = path
	prevUnk := false
	for _, p := range path {
		isUnk := p.id == t.unk
		switch {
		case isUnk && t.m.ByteFallback:
			for i := 0; i < len(p.s); i++ {
				dst = append(dst, t.byteIDs[p.s[i]])
			}
		case isUnk && prevUnk:
			// merged into the previous <unk>
		default:
			dst = append(dst, p.id)
		}
		prevUnk = isUnk
	}
	return dst
}

// IDs returns the ids sentencepiece gives text: no EOS, and "<extra_id_N>"
// in the text is not special.
func (t *SentencePiece) IDs(text string) []int { return t.appendIDs(nil, text) }

// Pieces returns the pieces of IDs(text).
func (t *SentencePiece) Pieces(text string) []string {
	ids := t.IDs(text)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = t.m.Pieces[id]
	}
	return out
}

// sentinelAt parses "<extra_id_N>" with N < limit at the start of s and
// returns N and its length (0 when s does not start with one).
func sentinelAt(s string, limit int) (int, int) {
	const pre = "<extra_id_"
	if !strings.HasPrefix(s, pre) {
		return 0, 0
	}
	j := len(pre)
	for j < len(s) && j < len(pre)+6 && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == len(pre) || j >= len(s) || s[j] != '>' || (s[len(pre)] == '0' && j > len(pre)+1) {
		return 0, 0
	}
	n, err := strconv.Atoi(s[len(pre):j])
	if err != nil || n >= limit {
		return 0, 0
	}
	return n, j + 1
}

// textIDs encodes text with sentinels written as "<extra_id_N>": the text
// around them is encoded piece by piece.
func (t *SentencePiece) textIDs(text string) []int {
	var out []int
	seg := 0
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], "<extra_id_")
		if j < 0 || t.sentinels == 0 {
			break
		}
		i += j
		n, l := sentinelAt(text[i:], t.sentinels)
		if l == 0 {
			i++
			continue
		}
		out = t.appendIDs(out, text[seg:i])
		out = append(out, t.Sentinel(n))
		i += l
		seg = i
	}
	return t.appendIDs(out, text[seg:])
}

// Encode returns the ids of text followed by EOS, truncated to maxLen ids
// (EOS kept last) when maxLen > 0.
func (t *SentencePiece) Encode(text string, maxLen int) []int {
	ids := t.textIDs(text)
	if t.eos >= 0 {
		if maxLen > 0 && len(ids) >= maxLen {
			ids = ids[:maxLen-1]
		}
		return append(ids, t.eos)
	}
	if maxLen > 0 && len(ids) > maxLen {
		ids = ids[:maxLen]
	}
	return ids
}

// EncodeBatch encodes every text and pads with the pad id (0 in T5).
func (t *SentencePiece) EncodeBatch(texts []string, maxLen int) Batch {
	seqs := make([][]int, len(texts))
	for i, s := range texts {
		seqs[i] = t.Encode(s, maxLen)
	}
	return pad(seqs, max(t.pad, 0))
}

// DecodeRaw is sentencepiece's DecodeIds: control pieces vanish, <unk>
// becomes the unknown surface (" ⁇ "), runs of byte pieces are decoded as
// UTF-8 (an invalid byte as U+FFFD), "▁" becomes a space, and the first
// piece loses the dummy-prefix space. Ids outside the model (sentinels)
// are skipped.
func (t *SentencePiece) DecodeRaw(ids []int) string {
	var out strings.Builder
	t.decode(&out, ids, true)
	return out.String()
}

// decode appends the decoding of ids to out; initial says whether they
// start the text (so the first piece's dummy-prefix space is stripped).
func (t *SentencePiece) decode(out *strings.Builder, ids []int, initial bool) {
	var bytes []byte
	flush := func() {
		for len(bytes) > 0 {
			r, n := utf8.DecodeRune(bytes)
			if r == utf8.RuneError && n <= 1 {
				out.WriteString("\uFFFD")
				n = 1
			} else {
				out.Write(bytes[:n])
			}
			bytes = bytes[n:]
		}
	}
	start := out.Len()
	bosWS, bosSeen := initial, false
	stripBOS := t.m.Normalizer.AddDummyPrefix || t.m.Normalizer.RemoveExtraWhitespaces
	for _, id := range ids {
		if id < 0 || id >= len(t.m.Pieces) {
			continue
		}
		typ := t.m.Types[id]
		if typ == PieceByte {
			b, _ := pieceByte(t.m.Pieces[id])
			bytes = append(bytes, b)
			continue
		}
		flush()
		// Only the dummy prefix is stripped: after one stripped "▁" (or
		// any output) later spaces are text, unless extra whitespace is
		// removed anyway.
		if bosSeen || out.Len() > start {
			bosWS = false
		}
		bosSeen = false
		switch typ {
		case PieceControl:
		case PieceUnknown:
			out.WriteString(t.m.UnkSurface)
		default:
			p := t.m.Pieces[id]
			if bosWS && stripBOS {
				var cut bool
				p, cut = strings.CutPrefix(p, spaceSymbol)
				bosSeen = cut && !t.m.Normalizer.RemoveExtraWhitespaces
			}
			out.WriteString(strings.ReplaceAll(p, spaceSymbol, " "))
		}
	}
	flush()
}

// Decode turns ids back into text, dropping pad, EOS, other control
// pieces and sentinels; an unknown piece decodes as sentencepiece's " ⁇ ".
func (t *SentencePiece) Decode(ids []int) string { return t.DecodeRaw(ids) }

// DecodeWithSentinels is Decode with each sentinel written as
// "<extra_id_N>" where it occurs, so that Encode of the result gives the
// sentinels back (span-corruption inputs and targets).
func (t *SentencePiece) DecodeWithSentinels(ids []int) string {
	var out strings.Builder
	start, initial := 0, true
	for i, id := range ids {
		if n, ok := t.SentinelIndex(id); ok {
			t.decode(&out, ids[start:i], initial)
			out.WriteString(SentinelText(n))
			start, initial = i+1, false
		}
	}
	t.decode(&out, ids[start:], initial)
	return out.String()
}
