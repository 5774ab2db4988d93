package builtin_test

import (
	"flag"
	"path/filepath"
	"testing"

	"repro/registry/model/modeltest"
)

var writeHF = flag.Bool("write-hf", false, "re-write the tiny Hugging Face checkpoints in testdata/hf (fingerprint.hcl's model.* stages read them)")

// TestWriteHFFixtures writes testdata/hf/{bert,gpt2,t5}, the checkpoints
// the model.* stages of fingerprint.hcl load, when run with -write-hf.
// They are committed: a change to how modeltest draws them must not move
// the model.* fingerprints unnoticed.
func TestWriteHFFixtures(t *testing.T) {
	if !*writeHF {
		t.Skip("run with -write-hf to re-write testdata/hf")
	}
	for name, write := range map[string]func(string, uint64) error{"bert": modeltest.BERT, "gpt2": modeltest.GPT2, "t5": modeltest.T5} {
		if err := write(filepath.Join("testdata", "hf", name), 11); err != nil {
			t.Fatal(name, err)
		}
	}
}
