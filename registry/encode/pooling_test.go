package encode

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/encoder/pooled"
	"repro/internal/model/transformer"
	"repro/registry"
)

// TestPooling re-pools a small transformer encoder: the artifact encodes
// exactly as the original model does under the new pooling, and without
// an encoder or a checkpoint the stage says what to give it.
func TestPooling(t *testing.T) {
	pooled.Register()
	texts := []string{"a man plays a flute", "a woman walks down the street", "two dogs run"}
	tok, err := pooled.TrainVocab(texts, 60)
	if err != nil {
		t.Fatal(err)
	}
	cfg := transformer.Config{VocabSize: tok.Size(), Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPosition: 32, TypeVocab: 2, LayerNormEps: 1e-12}
	m, err := pooled.New(cfg, tok, transformer.PoolFirstLastAvg, 3)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	in := map[string]registry.Artifact{"encoder": {Kind: registry.KindEncoder, Dir: dir, Digest: "d"}}
	out, err := run(t, "encode.pooling", map[string]cty.Value{"pooling": cty.StringVal("cls_before_pooler")}, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pooled.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if got.Pooling != transformer.PoolCLSBeforePooler {
		t.Errorf("pooling %q", got.Pooling)
	}
	a, _ := got.Encode(context.Background(), texts)
	b, _ := m.EncodeWith(context.Background(), texts, transformer.PoolCLSBeforePooler)
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Errorf("sentence %d encodes differently after re-pooling", i)
		}
	}
	if _, err := run(t, "encode.pooling", nil, nil); err == nil || !strings.Contains(err.Error(), "no encoder: connect one or set hf_checkpoint") {
		t.Errorf("no encoder: %v", err)
	}
}
