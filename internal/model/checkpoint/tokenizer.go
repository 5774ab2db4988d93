package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"repro/internal/model/tokenizer"
)

// tokenizerConfig is the part of HF's tokenizer_config.json repro reads
// and writes.
type tokenizerConfig struct {
	TokenizerClass string `json:"tokenizer_class,omitempty"`
	DoLowerCase    *bool  `json:"do_lower_case,omitempty"`
	// StripAccents is null in HF (follow do_lower_case) unless set.
	StripAccents       *bool `json:"strip_accents"`
	TokenizeChineseChr *bool `json:"tokenize_chinese_chars,omitempty"`
	ModelMaxLength     int   `json:"model_max_length,omitempty"`
	// ExtraIDs is T5Tokenizer's number of sentinels (<extra_id_N>).
	ExtraIDs *int `json:"extra_ids,omitempty"`
}

// tokenizerOptions is what LoadTokenizer reads of tokenizer_config.json:
// only the keys that decide the tokenizer. The rest is not decoded, so that
// a value repro has no use for cannot refuse a valid file (HF writes
// model_max_length as int(1e30), past int64, for a model without a limit).
type tokenizerOptions struct {
	DoLowerCase        *bool `json:"do_lower_case"`
	StripAccents       *bool `json:"strip_accents"`
	TokenizeChineseChr *bool `json:"tokenize_chinese_chars"`
	ExtraIDs           *int  `json:"extra_ids"`
}

// SaveTokenizer writes tok's files into dir.
func SaveTokenizer(dir string, tok tokenizer.Tokenizer, maxLen int) error {
	switch t := tok.(type) {
	case *tokenizer.WordPiece:
		if err := t.Save(filepath.Join(dir, FileVocab)); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		o := t.Options()
		lower, cjk := o.Lowercase, !o.NoCJKSplit
		tc := tokenizerConfig{TokenizerClass: "BertTokenizer", DoLowerCase: &lower, TokenizeChineseChr: &cjk, ModelMaxLength: maxLen}
		switch {
		case o.Lowercase && o.KeepAccents:
			f := false
			tc.StripAccents = &f
		case !o.Lowercase && o.StripAccents:
			t := true
			tc.StripAccents = &t
		}
		b, _ := json.MarshalIndent(tc, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, FileTokenizerConfig), append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		return nil
	case *tokenizer.BPE:
		if err := t.Save(dir); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		return nil
	case *tokenizer.SentencePiece:
		if err := t.Save(filepath.Join(dir, FileSPModel)); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		n := t.NumSentinels()
		tc := tokenizerConfig{TokenizerClass: "T5Tokenizer", ExtraIDs: &n, ModelMaxLength: maxLen}
		b, _ := json.MarshalIndent(tc, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, FileTokenizerConfig), append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		return nil
	}
	return fmt.Errorf("checkpoint: cannot save tokenizer of type %T", tok)
}

// LoadTokenizer opens the tokenizer in dir: vocab.txt (WordPiece, options
// from tokenizer_config.json; lowercasing by default, as HF's BertTokenizer)
// or vocab.json + merges.txt (byte-level BPE), or spiece.model or a
// tokenizer.json with a Unigram model (SentencePiece, T5: extra_ids from
// tokenizer_config.json, 100 by default, as T5Tokenizer).
func LoadTokenizer(dir string) (tokenizer.Tokenizer, error) {
	var tc tokenizerOptions
	if b, err := os.ReadFile(filepath.Join(dir, FileTokenizerConfig)); err == nil {
		if err := json.Unmarshal(b, &tc); err != nil {
			return nil, fmt.Errorf("checkpoint: %s: %v", filepath.Join(dir, FileTokenizerConfig), err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileVocab)); err == nil {
		o := tokenizer.WordPieceOptions{BasicOptions: tokenizer.BasicOptions{Lowercase: true}}
		if tc.DoLowerCase != nil {
			o.Lowercase = *tc.DoLowerCase
		}
		if tc.StripAccents != nil {
			// HF: null follows do_lower_case; False keeps accents even
			// when lowercasing; True strips them even when not.
			o.KeepAccents = !*tc.StripAccents
			o.StripAccents = *tc.StripAccents
		}
		if tc.TokenizeChineseChr != nil {
			o.NoCJKSplit = !*tc.TokenizeChineseChr
		}
		return tokenizer.LoadWordPiece(filepath.Join(dir, FileVocab), o)
	}
	if _, err := os.Stat(filepath.Join(dir, FileBPEVocab)); err == nil {
		return tokenizer.LoadBPE(filepath.Join(dir, FileBPEVocab), filepath.Join(dir, FileMerges), tokenizer.BPEOptions{})
	}
	sentinels := tokenizer.NumT5Sentinels
	if tc.ExtraIDs != nil {
		sentinels = *tc.ExtraIDs
		// Sentinel ids follow the pieces; a count near 2^63 would wrap
		// the vocabulary's size (and every model's check against it).
		if sentinels < 0 || sentinels > math.MaxInt32 {
			return nil, &ConfigError{Config: filepath.Join(dir, FileTokenizerConfig), Field: "extra_ids", Against: dir,
				Msg: fmt.Sprintf("is %d, outside 0..%d", sentinels, math.MaxInt32)}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, FileSPModel)); err == nil {
		return tokenizer.LoadSentencePiece(filepath.Join(dir, FileSPModel), sentinels)
	}
	if _, err := os.Stat(filepath.Join(dir, FileTokenizerJSON)); err == nil {
		return tokenizer.LoadUnigramJSON(filepath.Join(dir, FileTokenizerJSON), sentinels)
	}
	return nil, fmt.Errorf("checkpoint: %s has no tokenizer (%s, %s + %s, %s or a Unigram %s)", dir, FileVocab, FileBPEVocab, FileMerges, FileSPModel, FileTokenizerJSON)
}
