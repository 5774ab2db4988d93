package tokenizer

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"

	"google.golang.org/protobuf/encoding/protowire"
)

// hfNode is a normalizer or pre-tokenizer entry of a tokenizer.json.
type hfNode struct {
	Type                string   `json:"type"`
	PrecompiledCharsmap *string  `json:"precompiled_charsmap"`
	Normalizers         []hfNode `json:"normalizers"`
	Pretokenizers       []hfNode `json:"pretokenizers"`
	Pattern             struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Content        string `json:"content"`
	Replacement    string `json:"replacement"`
	AddPrefixSpace *bool  `json:"add_prefix_space"`
	PrependScheme  string `json:"prepend_scheme"`
}

type hfTokenizerFile struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer   *hfNode `json:"normalizer"`
	PreTokenizer *hfNode `json:"pre_tokenizer"`
	Model        struct {
		Type         string          `json:"type"`
		UnkID        *int            `json:"unk_id"`
		Vocab        json.RawMessage `json:"vocab"`
		ByteFallback bool            `json:"byte_fallback"`
	} `json:"model"`
}

// ReadUnigramJSON reads the Unigram model of a Hugging Face tokenizer.json
// into sentencepiece's terms: the vocabulary with scores; unk_id the
// unknown piece; special added tokens control pieces, other added tokens
// user-defined; <0xXX> byte pieces when byte_fallback; the Precompiled
// normaliser's charsmap; Metaspace's prefix space as add_dummy_prefix; the
// " {2,}" -> " " (or "▁") Replace and Strip (what transformers'
// converters write for remove_extra_whitespaces) as
// remove_extra_whitespaces. Whitespace then
// follows sentencepiece (leading and trailing spaces dropped), as T5's
// slow tokenizer does. Trailing "<extra_id_N>" pieces (T5's tokenizer.json
// lists its sentinels in the vocabulary) are returned as a count, not as
// pieces. Normalisers or pre-tokenizers sentencepiece has no equivalent
// for are refused rather than ignored.
func ReadUnigramJSON(path string) (m *SPModel, sentinels int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, fmt.Errorf("sentencepiece: %w", err)
	}
	var f hfTokenizerFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, 0, fmt.Errorf("%s: not a tokenizer.json: %v", path, err)
	}
	if f.Model.Type != "Unigram" {
		return nil, 0, fmt.Errorf("%s: model type %q is not a SentencePiece Unigram model", path, f.Model.Type)
	}
	if f.Model.UnkID == nil {
		return nil, 0, fmt.Errorf("%s: Unigram model without unk_id", path)
	}
	var vocab [][2]any
	if err := json.Unmarshal(f.Model.Vocab, &vocab); err != nil {
		return nil, 0, fmt.Errorf("%s: Unigram vocab is not a list of [piece, score]: %v", path, err)
	}
	m = &SPModel{ModelType: 1, UnkSurface: defaultUnkSurface, ByteFallback: f.Model.ByteFallback,
		Normalizer: NormalizerSpec{Name: "tokenizer.json", EscapeWhitespaces: true}}
	for i, v := range vocab {
		p, ok1 := v[0].(string)
		s, ok2 := v[1].(float64)
		if !ok1 || !ok2 {
			return nil, 0, fmt.Errorf("%s: vocab entry %d is not [piece, score]", path, i)
		}
		m.Pieces = append(m.Pieces, p)
		m.Scores = append(m.Scores, float32(s))
		typ := PieceNormal
		if _, isByte := pieceByte(p); isByte && m.ByteFallback {
			typ = PieceByte
		}
		m.Types = append(m.Types, typ)
	}
	for sentinels < len(m.Pieces) && m.Pieces[len(m.Pieces)-1-sentinels] == SentinelText(sentinels) {
		sentinels++
	}
	n := len(m.Pieces) - sentinels
	m.Pieces, m.Scores, m.Types = m.Pieces[:n], m.Scores[:n], m.Types[:n]
	if *f.Model.UnkID < 0 || *f.Model.UnkID >= n {
		return nil, 0, fmt.Errorf("%s: unk_id %d outside the vocabulary (%d pieces)", path, *f.Model.UnkID, n)
	}
	m.Types[*f.Model.UnkID] = PieceUnknown
	for _, a := range f.AddedTokens {
		if a.ID < 0 || a.ID >= n || a.ID == *f.Model.UnkID {
			continue // sentinels, or tokens added beyond the model
		}
		if m.Pieces[a.ID] != a.Content {
			return nil, 0, fmt.Errorf("%s: added token %q has id %d, which the vocabulary gives to %q", path, a.Content, a.ID, m.Pieces[a.ID])
		}
		if a.Special {
			m.Types[a.ID] = PieceControl
		} else {
			m.Types[a.ID] = PieceUserDefined
		}
	}
	if f.Normalizer != nil {
		if err := m.Normalizer.fromHF(*f.Normalizer); err != nil {
			return nil, 0, fmt.Errorf("%s: normalizer: %w", path, err)
		}
	}
	if f.PreTokenizer != nil {
		if err := m.Normalizer.preTokenizerFromHF(*f.PreTokenizer); err != nil {
			return nil, 0, fmt.Errorf("%s: pre_tokenizer: %w", path, err)
		}
	}
	return m, sentinels, nil
}

func (n *NormalizerSpec) fromHF(h hfNode) error {
	switch h.Type {
	case "Sequence":
		for _, c := range h.Normalizers {
			if err := n.fromHF(c); err != nil {
				return err
			}
		}
	case "Precompiled":
		if h.PrecompiledCharsmap == nil {
			return fmt.Errorf("Precompiled without precompiled_charsmap")
		}
		b, err := base64.StdEncoding.DecodeString(*h.PrecompiledCharsmap)
		if err != nil {
			return fmt.Errorf("precompiled_charsmap: %v", err)
		}
		n.PrecompiledCharsmap = b
	case "Replace":
		// transformers' converters write " " (older) or "▁" (newer).
		if h.Pattern.Regex != nil && *h.Pattern.Regex == " {2,}" && (h.Content == " " || h.Content == spaceSymbol) {
			n.RemoveExtraWhitespaces = true
			return nil
		}
		return fmt.Errorf("Replace %+v -> %q has no sentencepiece equivalent", h.Pattern, h.Content)
	case "Strip":
		n.RemoveExtraWhitespaces = true
	default:
		return fmt.Errorf("%q has no sentencepiece equivalent", h.Type)
	}
	return nil
}

func (n *NormalizerSpec) preTokenizerFromHF(h hfNode) error {
	switch h.Type {
	case "Sequence":
		for _, c := range h.Pretokenizers {
			if err := n.preTokenizerFromHF(c); err != nil {
				return err
			}
		}
	case "WhitespaceSplit":
		// Metaspace's pieces never hold a space; splitting changes nothing.
	case "Metaspace":
		if h.Replacement != "" && h.Replacement != spaceSymbol {
			return fmt.Errorf("Metaspace replacement %q (only %q is supported)", h.Replacement, spaceSymbol)
		}
		switch {
		case h.PrependScheme != "":
			n.AddDummyPrefix = h.PrependScheme != "never"
		case h.AddPrefixSpace != nil:
			n.AddDummyPrefix = *h.AddPrefixSpace
		default:
			n.AddDummyPrefix = true
		}
	default:
		return fmt.Errorf("%q has no sentencepiece equivalent", h.Type)
	}
	return nil
}

// LoadUnigramJSON builds the tokenizer from a tokenizer.json; sentinels
// are those the vocabulary lists, or, when it lists none, the given number.
func LoadUnigramJSON(path string, sentinels int) (*SentencePiece, error) {
	m, listed, err := ReadUnigramJSON(path)
	if err != nil {
		return nil, err
	}
	if listed > 0 {
		sentinels = listed
	}
	t, err := NewSentencePiece(m, sentinels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Marshal serializes the model as a sentencepiece ModelProto (the fields
// SPModel holds), which sentencepiece itself can load.
func (m *SPModel) Marshal() []byte {
	var b []byte
	for i, p := range m.Pieces {
		var e []byte
		e = protowire.AppendTag(e, 1, protowire.BytesType)
		e = protowire.AppendString(e, p)
		e = protowire.AppendTag(e, 2, protowire.Fixed32Type)
		e = protowire.AppendFixed32(e, math.Float32bits(m.Scores[i]))
		e = protowire.AppendTag(e, 3, protowire.VarintType)
		e = protowire.AppendVarint(e, uint64(m.Types[i]))
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, e)
	}
	var ts []byte
	ts = protowire.AppendTag(ts, 3, protowire.VarintType)
	ts = protowire.AppendVarint(ts, uint64(m.ModelType))
	ts = protowire.AppendTag(ts, 4, protowire.VarintType)
	ts = protowire.AppendVarint(ts, uint64(len(m.Pieces)))
	ts = protowire.AppendTag(ts, 24, protowire.VarintType)
	ts = protowire.AppendVarint(ts, protowire.EncodeBool(m.TreatWhitespaceAsSuffix))
	ts = protowire.AppendTag(ts, 35, protowire.VarintType)
	ts = protowire.AppendVarint(ts, protowire.EncodeBool(m.ByteFallback))
	for i, typ := range m.Types {
		// unk_id, bos_id, eos_id, pad_id: sentencepiece's trainer
		// checks them when the model is loaded for training only, but
		// tools read them.
		var field protowire.Number
		switch {
		case typ == PieceUnknown:
			field = 40
		case typ == PieceControl && m.Pieces[i] == "<s>":
			field = 41
		case typ == PieceControl && m.Pieces[i] == "</s>":
			field = 42
		case typ == PieceControl && m.Pieces[i] == "<pad>":
			field = 43
		default:
			continue
		}
		ts = protowire.AppendTag(ts, field, protowire.VarintType)
		ts = protowire.AppendVarint(ts, uint64(int64(i)))
	}
	if m.UnkSurface != defaultUnkSurface {
		ts = protowire.AppendTag(ts, 44, protowire.BytesType)
		ts = protowire.AppendString(ts, m.UnkSurface)
	}
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, ts)
	var ns []byte
	ns = protowire.AppendTag(ns, 1, protowire.BytesType)
	ns = protowire.AppendString(ns, m.Normalizer.Name)
	ns = protowire.AppendTag(ns, 2, protowire.BytesType)
	ns = protowire.AppendBytes(ns, m.Normalizer.PrecompiledCharsmap)
	for _, f := range []struct {
		num protowire.Number
		v   bool
	}{{3, m.Normalizer.AddDummyPrefix}, {4, m.Normalizer.RemoveExtraWhitespaces}, {5, m.Normalizer.EscapeWhitespaces}} {
		ns = protowire.AppendTag(ns, f.num, protowire.VarintType)
		ns = protowire.AppendVarint(ns, protowire.EncodeBool(f.v))
	}
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendBytes(b, ns)
	return b
}

// Save writes the model as an spiece.model at path.
func (t *SentencePiece) Save(path string) error {
	return os.WriteFile(path, t.m.Marshal(), 0o644)
}
