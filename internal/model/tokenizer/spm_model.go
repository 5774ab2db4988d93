package tokenizer

import (
	"errors"
	"fmt"
	"math"
	"os"

	"google.golang.org/protobuf/encoding/protowire"
)

// PieceType is a SentencePiece piece's type (ModelProto.SentencePiece.Type).
type PieceType int8

// Piece types, numbered as in sentencepiece_model.proto.
const (
	PieceNormal      PieceType = 1
	PieceUnknown     PieceType = 2
	PieceControl     PieceType = 3
	PieceUserDefined PieceType = 4
	PieceUnused      PieceType = 5
	PieceByte        PieceType = 6
)

// SPModel is the part of a SentencePiece ModelProto the Unigram tokenizer
// uses: the pieces and the normaliser settings.
type SPModel struct {
	Pieces []string
	Scores []float32
	Types  []PieceType
	// ModelType is TrainerSpec.model_type: 1 unigram, 2 BPE, 3 word, 4 char.
	ModelType    int
	ByteFallback bool
	// UnkSurface is what an <unk> decodes to (TrainerSpec.unk_surface;
	// default " ⁇ ").
	UnkSurface              string
	TreatWhitespaceAsSuffix bool
	Normalizer              NormalizerSpec
}

// NormalizerSpec is sentencepiece's NormalizerSpec.
type NormalizerSpec struct {
	Name string
	// PrecompiledCharsmap is the compiled normalisation rules: a 4-byte
	// little-endian trie size, a Darts-clone double array of that many
	// bytes, then NUL-terminated replacement strings.
	PrecompiledCharsmap    []byte
	AddDummyPrefix         bool
	RemoveExtraWhitespaces bool
	EscapeWhitespaces      bool
}

const defaultUnkSurface = " \u2047 "

// errNotSPModel marks input that is not a SentencePiece model.
var errNotSPModel = errors.New("not a SentencePiece model")

// ReadSPModel reads a serialized sentencepiece ModelProto (spiece.model).
func ReadSPModel(path string) (*SPModel, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sentencepiece: %w", err)
	}
	m, err := ParseSPModel(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ParseSPModel decodes a serialized ModelProto. Fields repro does not use
// are skipped; anything that does not parse as the protobuf wire format,
// or parses but holds no pieces, is reported as not a SentencePiece model.
func ParseSPModel(b []byte) (*SPModel, error) {
	m := &SPModel{
		ModelType:  1,
		UnkSurface: defaultUnkSurface,
		Normalizer: NormalizerSpec{AddDummyPrefix: true, RemoveExtraWhitespaces: true, EscapeWhitespaces: true},
	}
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			return m.parsePiece(v)
		case num == 2 && typ == protowire.BytesType:
			return m.parseTrainerSpec(v)
		case num == 3 && typ == protowire.BytesType:
			return m.Normalizer.parse(v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotSPModel, err)
	}
	if len(m.Pieces) == 0 {
		return nil, fmt.Errorf("%w: no pieces", errNotSPModel)
	}
	return m, nil
}

func (m *SPModel) parsePiece(b []byte) error {
	piece, score, typ := "", float32(0), PieceNormal
	err := eachField(b, func(num protowire.Number, t protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && t == protowire.BytesType:
			piece = string(v)
		case num == 2 && t == protowire.Fixed32Type:
			score = math.Float32frombits(uint32(x))
		case num == 3 && t == protowire.VarintType:
			if x < 1 || x > 6 {
				return fmt.Errorf("piece %d: unknown type %d", len(m.Pieces), x)
			}
			typ = PieceType(x)
		}
		return nil
	})
	if err != nil {
		return err
	}
	m.Pieces = append(m.Pieces, piece)
	m.Scores = append(m.Scores, score)
	m.Types = append(m.Types, typ)
	return nil
}

func (m *SPModel) parseTrainerSpec(b []byte) error {
	return eachField(b, func(num protowire.Number, t protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 3 && t == protowire.VarintType:
			m.ModelType = int(x)
		case num == 24 && t == protowire.VarintType:
			m.TreatWhitespaceAsSuffix = x != 0
		case num == 35 && t == protowire.VarintType:
			m.ByteFallback = x != 0
		case num == 44 && t == protowire.BytesType:
			m.UnkSurface = string(v)
		}
		return nil
	})
}

func (n *NormalizerSpec) parse(b []byte) error {
	return eachField(b, func(num protowire.Number, t protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && t == protowire.BytesType:
			n.Name = string(v)
		case num == 2 && t == protowire.BytesType:
			n.PrecompiledCharsmap = append([]byte(nil), v...)
		case num == 3 && t == protowire.VarintType:
			n.AddDummyPrefix = x != 0
		case num == 4 && t == protowire.VarintType:
			n.RemoveExtraWhitespaces = x != 0
		case num == 5 && t == protowire.VarintType:
			n.EscapeWhitespaces = x != 0
		}
		return nil
	})
}

// eachField calls f for every field of one message: v holds a
// length-delimited value, x a varint or fixed value.
func eachField(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if num <= 0 {
			return fmt.Errorf("invalid field number %d", num)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var u uint32
			u, n = protowire.ConsumeFixed32(b)
			x = uint64(u)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}
