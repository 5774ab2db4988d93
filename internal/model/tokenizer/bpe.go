package tokenizer

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// BPEOptions configures a byte-level BPE tokenizer.
type BPEOptions struct {
	// AddPrefixSpace prepends a space so the first word is tokenized like
	// the others (HF add_prefix_space; off by default as in RoBERTa).
	AddPrefixSpace bool
}

// BPE is GPT-2's byte-level BPE, as used by GPT-2 and RoBERTa: text is
// split by GPT-2's pre-tokenization pattern (contractions, letter runs,
// number runs, other-symbol runs, each optionally with one leading space,
// and whitespace runs), each piece's UTF-8 bytes are mapped to printable
// runes (bytes_to_unicode), and merges are applied lowest rank first.
// Vocabularies with "<s>" are RoBERTa's: Encode frames with <s> ... </s>
// and pads with <pad>. Otherwise (GPT-2) Encode adds no frame and pads
// with <|endoftext|>.
type BPE struct {
	opts    BPEOptions
	vocab   map[string]int
	tokens  []string
	ranks   map[[2]string]int
	merges  [][2]string
	special Specials
	roberta bool
	// literal special tokens kept whole in text.
	literals []string

	mu    sync.Mutex
	cache map[string][]int
}

var byteToRune, runeToByte = bytesToUnicode()

// bytesToUnicode is GPT-2's reversible byte -> rune table: printable
// Latin-1 bytes map to themselves, the rest to U+0100 upwards.
func bytesToUnicode() ([256]rune, map[rune]byte) {
	var b2r [256]rune
	r2b := map[rune]byte{}
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			b2r[b] = rune(b)
		} else {
			b2r[b] = rune(256 + n)
			n++
		}
		r2b[b2r[b]] = byte(b)
	}
	return b2r, r2b
}

// LoadBPE reads vocab.json and merges.txt.
func LoadBPE(vocabPath, mergesPath string, o BPEOptions) (*BPE, error) {
	vb, err := os.ReadFile(vocabPath)
	if err != nil {
		return nil, fmt.Errorf("read BPE vocabulary: %w", err)
	}
	var vocab map[string]int
	if err := json.Unmarshal(vb, &vocab); err != nil {
		return nil, fmt.Errorf("%s: %v", vocabPath, err)
	}
	f, err := os.Open(mergesPath)
	if err != nil {
		return nil, fmt.Errorf("read BPE merges: %w", err)
	}
	defer f.Close()
	var merges [][2]string
	var lines []int // merges[i] is on line lines[i]
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(s, "#version") || s == "" {
			continue
		}
		a, b, ok := strings.Cut(s, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return nil, fmt.Errorf("%s:%d: want two space-separated symbols, got %q", mergesPath, line, s)
		}
		merges = append(merges, [2]string{a, b})
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", mergesPath, err)
	}
	t, err := NewBPE(vocab, merges, o)
	var me *mergeError
	if errors.As(err, &me) {
		return nil, fmt.Errorf("%s:%d: %w", mergesPath, lines[me.index], err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", vocabPath, err)
	}
	return t, nil
}

// mergeError is a merge the vocabulary cannot represent.
type mergeError struct {
	index int
	msg   string
}

func (e *mergeError) Error() string { return e.msg }
func (e *mergeError) Unwrap() error { return ErrVocab }

// NewBPE builds a tokenizer from a token -> id map and ranked merges.
// The ids must number the tokens 0..len(vocab)-1 (an id sizes the id ->
// token table, so one beyond the vocabulary is refused rather than
// allocated), and every merge's parts and result must be tokens, as
// Hugging Face's tokenizers require: a merge into a token the vocabulary
// lacks would drop text silently. The errors wrap ErrVocab.
func NewBPE(vocab map[string]int, merges [][2]string, o BPEOptions) (*BPE, error) {
	if len(vocab) == 0 {
		return nil, fmt.Errorf("BPE vocabulary is empty: %w", ErrVocab)
	}
	t := &BPE{opts: o, vocab: vocab, tokens: make([]string, len(vocab)), ranks: map[[2]string]int{}, merges: merges, cache: map[string][]int{}}
	seen := make([]bool, len(vocab))
	for tok, id := range vocab {
		if id < 0 || id >= len(vocab) {
			return nil, fmt.Errorf("BPE vocabulary: token %q has id %d, outside 0..%d (the vocabulary's size): %w", tok, id, len(vocab)-1, ErrVocab)
		}
		if seen[id] {
			return nil, fmt.Errorf("BPE vocabulary: id %d used by %q and %q: %w", id, t.tokens[id], tok, ErrVocab)
		}
		seen[id], t.tokens[id] = true, tok
	}
	for i, m := range merges {
		for _, s := range []string{m[0], m[1], m[0] + m[1]} {
			if _, ok := vocab[s]; !ok {
				return nil, &mergeError{i, fmt.Sprintf("BPE merge %d (%q %q): %q is not in the vocabulary", i+1, m[0], m[1], s)}
			}
		}
		if _, dup := t.ranks[m]; !dup {
			t.ranks[m] = i
		}
	}
	id := func(s string) int {
		if v, ok := vocab[s]; ok {
			return v
		}
		return -1
	}
	if _, ok := vocab["<s>"]; ok {
		t.roberta = true
		t.special = Specials{CLS: id("<s>"), SEP: id("</s>"), PAD: id("<pad>"), UNK: id("<unk>"), MASK: id("<mask>")}
		if t.special.SEP < 0 || t.special.PAD < 0 {
			return nil, fmt.Errorf("BPE vocabulary has <s> but lacks </s> or <pad>")
		}
	} else {
		eot := id("<|endoftext|>")
		t.special = Specials{CLS: -1, SEP: -1, PAD: eot, UNK: -1, MASK: -1}
	}
	for _, s := range []string{"<s>", "</s>", "<pad>", "<unk>", "<mask>", "<|endoftext|>"} {
		if _, ok := vocab[s]; ok {
			t.literals = append(t.literals, s)
		}
	}
	return t, nil
}

// Save writes vocab.json and merges.txt into dir.
func (t *BPE) Save(dir string) error {
	vb, err := json.Marshal(t.vocab)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "vocab.json"), vb, 0o644); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("#version: 0.2\n")
	for _, m := range t.merges {
		b.WriteString(m[0] + " " + m[1] + "\n")
	}
	return os.WriteFile(filepath.Join(dir, "merges.txt"), []byte(b.String()), 0o644)
}

// Size is the vocabulary size.
func (t *BPE) Size() int { return len(t.tokens) }

// Special returns the special token ids (-1 where absent).
func (t *BPE) Special() Specials { return t.special }

// ID returns a token's id.
func (t *BPE) ID(token string) (int, bool) {
	id, ok := t.vocab[token]
	return id, ok
}

// Token returns the token string of id ("" when out of range).
func (t *BPE) Token(id int) string {
	if id < 0 || id >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// IDs returns the ids of text without framing tokens.
func (t *BPE) IDs(text string) []int {
	var out []int
	if t.opts.AddPrefixSpace && !strings.HasPrefix(text, " ") {
		text = " " + text
	}
	segs := splitLiterals(text, t.literals)
	for i, s := range segs {
		if s.literal {
			out = append(out, t.vocab[s.text])
			continue
		}
		txt := s.text
		// <mask> strips the whitespace before it (HF lstrip=True).
		if i+1 < len(segs) && segs[i+1].literal && segs[i+1].text == "<mask>" {
			txt = strings.TrimRightFunc(txt, unicode.IsSpace)
		}
		for _, w := range gpt2Split(txt) {
			out = append(out, t.word(w)...)
		}
	}
	return out
}

// word returns the ids of one pre-token (cached).
func (t *BPE) word(w string) []int {
	t.mu.Lock()
	ids, ok := t.cache[w]
	t.mu.Unlock()
	if ok {
		return ids
	}
	syms := make([]string, 0, len(w))
	for i := 0; i < len(w); i++ {
		syms = append(syms, string(byteToRune[w[i]]))
	}
	for len(syms) > 1 {
		best, at := -1, -1
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := t.ranks[[2]string{syms[i], syms[i+1]}]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		a, b := syms[at], syms[at+1]
		out := syms[:0:0]
		for i := 0; i < len(syms); i++ {
			if i+1 < len(syms) && syms[i] == a && syms[i+1] == b {
				out = append(out, a+b)
				i++
				continue
			}
			out = append(out, syms[i])
		}
		syms = out
	}
	ids = make([]int, 0, len(syms))
	for _, s := range syms {
		id, ok := t.vocab[s]
		if !ok {
			id = t.special.UNK
			if id < 0 {
				continue // a vocabulary without a symbol or <unk>: drop it
			}
		}
		ids = append(ids, id)
	}
	t.mu.Lock()
	if len(t.cache) < 1<<17 {
		t.cache[w] = ids
	}
	t.mu.Unlock()
	return ids
}

// Encode frames RoBERTa ids with <s> ... </s>; GPT-2 ids are unframed.
// maxLen <= 0: no limit.
func (t *BPE) Encode(text string, maxLen int) []int {
	ids := t.IDs(text)
	if !t.roberta {
		if maxLen > 0 && len(ids) > maxLen {
			ids = ids[:maxLen]
		}
		return ids
	}
	if maxLen > 0 {
		ids = ids[:min(len(ids), max(maxLen-2, 0))]
	}
	out := make([]int, 0, len(ids)+2)
	out = append(out, t.special.CLS)
	out = append(out, ids...)
	return append(out, t.special.SEP)
}

// EncodeBatch encodes each text and pads.
func (t *BPE) EncodeBatch(texts []string, maxLen int) Batch {
	seqs := make([][]int, len(texts))
	for i, s := range texts {
		seqs[i] = t.Encode(s, maxLen)
	}
	return pad(seqs, t.special.PAD)
}

// Decode maps tokens back to bytes, skipping special tokens; invalid UTF-8
// becomes U+FFFD (Python's errors="replace").
func (t *BPE) Decode(ids []int) string {
	var b []byte
	for _, id := range ids {
		if id < 0 || id >= len(t.tokens) {
			continue
		}
		tok := t.tokens[id]
		if isLiteral(tok, t.literals) {
			continue
		}
		for _, r := range tok {
			if c, ok := runeToByte[r]; ok {
				b = append(b, c)
			}
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func isLiteral(s string, lits []string) bool {
	for _, l := range lits {
		if s == l {
			return true
		}
	}
	return false
}

type segment struct {
	text    string
	literal bool
}

// splitLiterals splits text around occurrences of the literal tokens.
func splitLiterals(text string, lits []string) []segment {
	var out []segment
	for text != "" {
		at, which := -1, ""
		for _, s := range lits {
			if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at || (i == at && len(s) > len(which))) {
				at, which = i, s
			}
		}
		if at < 0 {
			out = append(out, segment{text, false})
			break
		}
		if at > 0 {
			out = append(out, segment{text[:at], false})
		}
		out = append(out, segment{which, true})
		text = text[at+len(which):]
	}
	return out
}

// gpt2Split implements GPT-2's pre-tokenization regular expression
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// by hand, because Go's regexp has no look-ahead.
func gpt2Split(s string) []string {
	var out []string
	i := 0
	for i < len(s) {
		n := gpt2Match(s, i)
		out = append(out, s[i:i+n])
		i += n
	}
	return out
}

// gpt2Match returns the length of the pattern's match at s[i:] (always > 0).
func gpt2Match(s string, i int) int {
	rest := s[i:]
	if rest[0] == '\'' {
		for _, c := range []string{"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"} {
			if strings.HasPrefix(rest, c) {
				return len(c)
			}
		}
	}
	// run returns the byte length of the longest prefix of x whose runes
	// satisfy f.
	run := func(x string, f func(rune) bool) int {
		n := 0
		for n < len(x) {
			r, sz := utf8.DecodeRuneInString(x[n:])
			if !f(r) {
				break
			}
			n += sz
		}
		return n
	}
	other := func(r rune) bool { return !isSpaceRE(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r) }
	for _, f := range []func(rune) bool{unicode.IsLetter, unicode.IsNumber, other} {
		if rest[0] == ' ' {
			if n := run(rest[1:], f); n > 0 {
				return 1 + n
			}
		}
		if n := run(rest, f); n > 0 {
			return n
		}
	}
	// Whitespace: \s+(?!\S) leaves the last space of a run that is
	// followed by a non-space for the next token; \s+ takes the rest.
	n := run(rest, isSpaceRE)
	if n == 0 {
		// Unreachable for valid input: every rune is a letter, a
		// number, whitespace or "other". Invalid UTF-8 decodes to
		// U+FFFD, which is "other"; consume one byte to progress.
		return 1
	}
	if n == len(rest) {
		return n
	}
	_, last := utf8.DecodeLastRuneInString(rest[:n])
	if n-last > 0 {
		return n - last
	}
	return n
}

// isSpaceRE is the \s of Python's regex module on str patterns.
func isSpaceRE(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }
