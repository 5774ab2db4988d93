package pooled

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"repro/internal/encoder"
	"repro/internal/model/checkpoint"
	"repro/internal/model/transformer"
)

// Type is the encoder type written in encoder.json.
const Type = "transformer"

// Meta is encoder.json of a transformer encoder artifact.
type Meta struct {
	Type    string              `json:"type"`
	Pooling transformer.Pooling `json:"pooling"`
	// MaxLength is the id limit per sentence when encoding (0: the
	// model's position limit).
	MaxLength int `json:"max_length"`
}

// Register makes encoder.Open understand encoder.json files with "type":
// "transformer". Call it explicitly (registry/builtin does); it has no
// init side effects.
func Register() {
	encoder.RegisterType(Type, func(dir string, raw json.RawMessage) (encoder.Encoder, error) {
		return open(dir, raw)
	})
}

// Save writes the model as a checkpoint directory (model.safetensors,
// config.json, tokenizer files) plus encoder.json. extra goes into
// config.json's "repro" section beside the pooling and max length
// (training provenance, say); it may be nil.
func (m *Model) Save(dir string, extra map[string]any) error {
	if m.Tokenizer == nil {
		return fmt.Errorf("encoder: save: the model has no tokenizer")
	}
	repro := map[string]any{}
	for k, v := range extra {
		repro[k] = v
	}
	repro["pooling"] = string(m.Pooling)
	repro["max_length"] = m.MaxLength
	if err := checkpoint.SaveEncoder(dir, m.Encoder, m.Tokenizer, repro); err != nil {
		return fmt.Errorf("encoder: save: %w", err)
	}
	if err := encoder.WriteMeta(dir, Meta{Type: Type, Pooling: m.Pooling, MaxLength: m.MaxLength}); err != nil {
		return fmt.Errorf("encoder: save: %w", err)
	}
	return nil
}

// Load opens a directory written by Save.
func Load(dir string) (*Model, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "encoder.json"))
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	return open(dir, raw)
}

func open(dir string, raw []byte) (*Model, error) {
	path := filepath.Join(dir, "encoder.json")
	var meta Meta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("encoder: %s: %v", path, err)
	}
	if meta.Type != Type {
		return nil, fmt.Errorf("encoder: %s: type %q, want %q", path, meta.Type, Type)
	}
	if err := checkPooling(meta.Pooling); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if meta.MaxLength < 0 {
		return nil, fmt.Errorf("encoder: %s: max_length %d is negative", path, meta.MaxLength)
	}
	ck, err := checkpoint.LoadEncoder(dir)
	if err != nil {
		return nil, err
	}
	if ck.Tokenizer == nil {
		return nil, fmt.Errorf("encoder: %s has no tokenizer files", dir)
	}
	if meta.Pooling == transformer.PoolCLS && ck.Encoder.Pooler == nil {
		return nil, fmt.Errorf("encoder: %s: pooling %q needs the pooler weights, which model.safetensors lacks", path, meta.Pooling)
	}
	return &Model{Tokenizer: ck.Tokenizer, Encoder: ck.Encoder, Pooling: meta.Pooling, MaxLength: meta.MaxLength}, nil
}
