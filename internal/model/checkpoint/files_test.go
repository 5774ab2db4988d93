package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"repro/internal/model/tokenizer"
)

// A tokenizer_config.json as Hugging Face writes it for a model without a
// length limit (model_max_length = int(1e30), past int64) loads, with its
// options applied: repro reads only the keys that decide the tokenizer.
func TestTokenizerConfigUnboundedLength(t *testing.T) {
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, FileVocab), []byte("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nHello\n"), 0o644)
	os.WriteFile(filepath.Join(d, FileTokenizerConfig), []byte(`{"do_lower_case": false, "model_max_length": 1000000000000000019884624838656, "tokenizer_class": "BertTokenizer"}`), 0o644)
	tok, err := LoadTokenizer(d)
	if err != nil {
		t.Fatal(err)
	}
	wp := tok.(*tokenizer.WordPiece)
	if wp.Options().Lowercase {
		t.Error("do_lower_case false was not applied")
	}
}

// A shard named "." or ".." is not a file in the checkpoint's directory.
func TestWeightsIndexDotShards(t *testing.T) {
	for _, shard := range []string{".", ".."} {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, FileWeightsIndex), []byte(`{"weight_map": {"a": "`+shard+`"}}`), 0o644)
		var se *ShardNameError
		if _, err := OpenWeights(d); !errors.As(err, &se) || se.Shard != shard {
			t.Errorf("shard %q: %v", shard, err)
		}
	}
}
