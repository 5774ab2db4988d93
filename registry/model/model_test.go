package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/encoder"
	"repro/internal/encoder/pooled"
	"repro/internal/encoder/t5enc"
	"repro/internal/model/lm"
	"repro/internal/model/t5"
	"repro/internal/model/transformer"
	"repro/registry"
	"repro/registry/model/modeltest"
	"repro/registry/train"
)

var sentences = []string{"A man is playing a guitar.", "Two dogs run in a field of grass.", "The train was 7000 hours late!"}

// run runs stage type name with the given parameters and returns its
// output directory.
func run(t *testing.T, name string, set map[string]cty.Value) (string, error) {
	t.Helper()
	r := registry.New()
	Register(r)
	st, ok := r.Lookup(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	obj, err := st.ParamObject(set)
	if err != nil {
		t.Fatal(err)
	}
	params, err := st.DecodeParams(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "model")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	env := &registry.Env{Params: params, Outputs: map[string]string{"model": out}}
	return out, st.Call(context.Background(), env)
}

func encodeAll(t *testing.T, e encoder.Encoder) [][]float32 {
	t.Helper()
	v, err := e.Encode(context.Background(), sentences)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readHistory(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, train.FileHistory))
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHFEncoder: a BERT written in Hugging Face's layout becomes an
// encoder artifact that encoder.Open (what every evaluate.* stage calls)
// and pooled.Load (train.*'s init) open, encoding exactly as the
// checkpoint read directly does, for each pooling; max_length truncates.
func TestHFEncoder(t *testing.T) {
	ck := t.TempDir()
	if err := modeltest.BERT(ck, 7); err != nil {
		t.Fatal(err)
	}
	for _, pool := range []transformer.Pooling{transformer.PoolCLS, transformer.PoolCLSBeforePooler, transformer.PoolMean} {
		out, err := run(t, "model.hf_encoder", map[string]cty.Value{"checkpoint": cty.StringVal(ck), "pooling": cty.StringVal(string(pool))})
		if err != nil {
			t.Fatal(pool, err)
		}
		direct, err := pooled.FromHF(ck, pool)
		if err != nil {
			t.Fatal(err)
		}
		opened, err := encoder.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		want := encodeAll(t, direct)
		if got := encodeAll(t, opened); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the artifact encodes differently from the checkpoint", pool)
		}
		init, err := pooled.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if init.Pooling != pool || init.MaxLength != 0 {
			t.Errorf("%s: artifact pooling %q max_length %d", pool, init.Pooling, init.MaxLength)
		}
		if h := readHistory(t, out); h["stage"] != "model.hf_encoder" || h["steps"] != 0.0 || h["best_step"] != -1.0 {
			t.Errorf("training.json %v", h)
		}
	}
	out, err := run(t, "model.hf_encoder", map[string]cty.Value{"checkpoint": cty.StringVal(ck), "pooling": cty.StringVal("mean"), "max_length": cty.NumberIntVal(4)})
	if err != nil {
		t.Fatal(err)
	}
	m, err := pooled.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := pooled.FromHF(ck, transformer.PoolMean)
	if err != nil {
		t.Fatal(err)
	}
	full := encodeAll(t, direct)
	direct.MaxLength = 4
	if m.MaxLength != 4 || !reflect.DeepEqual(encodeAll(t, m), encodeAll(t, direct)) || reflect.DeepEqual(encodeAll(t, m), full) {
		t.Errorf("max_length 4: the artifact (max_length %d) does not encode as the checkpoint cut to 4 ids", m.MaxLength)
	}
	// The artifact carries no host path.
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(ck)) {
				t.Errorf("%s names the checkpoint's path", p)
			}
		}
		return nil
	})
}

// TestHFEncoderErrors: a missing directory and a pooling the checkpoint
// cannot give are errors naming the cause; a bad pooling is a parameter
// error before anything loads.
func TestHFEncoderErrors(t *testing.T) {
	_, err := run(t, "model.hf_encoder", map[string]cty.Value{"checkpoint": cty.StringVal(filepath.Join(t.TempDir(), "nope"))})
	var pe *registry.ParamError
	if !errors.As(err, &pe) || pe.Param != "checkpoint" {
		t.Errorf("missing directory: %v, want a checkpoint ParamError", err)
	}
	_, err = run(t, "model.hf_encoder", map[string]cty.Value{"checkpoint": cty.StringVal(t.TempDir()), "pooling": cty.StringVal("max")})
	if !errors.As(err, &pe) || pe.Param != "pooling" {
		t.Errorf("bad pooling: %v, want a pooling ParamError", err)
	}
	ck := t.TempDir()
	if err := modeltest.GPT2(ck, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "model.hf_encoder", map[string]cty.Value{"checkpoint": cty.StringVal(ck)}); err == nil {
		t.Error("a GPT-2 directory loaded as a BERT encoder")
	}
}

// TestHFT5Encoder: a T5 written in Hugging Face's layout (spiece.model)
// becomes a "t5" encoder artifact that encodes as t5enc over the
// checkpoint does, in both modes.
func TestHFT5Encoder(t *testing.T) {
	ck := t.TempDir()
	if err := modeltest.T5(ck, 7); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{t5enc.ModeEncDec, t5enc.ModeMean} {
		out, err := run(t, "model.hf_t5_encoder", map[string]cty.Value{"checkpoint": cty.StringVal(ck), "mode": cty.StringVal(mode)})
		if err != nil {
			t.Fatal(mode, err)
		}
		m, tok, err := t5.Load(ck)
		if err != nil {
			t.Fatal(err)
		}
		direct, err := t5enc.New(m, tok, mode, "[X] Question: what can we draw from the above sentence?", 64)
		if err != nil {
			t.Fatal(err)
		}
		opened, err := encoder.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := encodeAll(t, opened), encodeAll(t, direct); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the artifact encodes differently from the checkpoint", mode)
		}
		if h := readHistory(t, out); h["stage"] != "model.hf_t5_encoder" || h["best_step"] != -1.0 {
			t.Errorf("training.json %v", h)
		}
	}
}

// TestHFLM: GPT-2 and T5 checkpoints become language-model artifacts whose
// weights are the checkpoint's byte for byte and that lm.Open opens with
// the checkpoint's framing; a repro-trained GPT-2's "bos" framing is kept.
func TestHFLM(t *testing.T) {
	for family, write := range map[string]func(string, uint64) error{"gpt2": modeltest.GPT2, "t5": modeltest.T5} {
		ck := t.TempDir()
		if err := write(ck, 5); err != nil {
			t.Fatal(err)
		}
		out, err := run(t, "model.hf_lm", map[string]cty.Value{"checkpoint": cty.StringVal(ck)})
		if err != nil {
			t.Fatal(family, err)
		}
		a, _ := os.ReadFile(filepath.Join(ck, "model.safetensors"))
		b, _ := os.ReadFile(filepath.Join(out, "model.safetensors"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: model.safetensors differs from the checkpoint's", family)
		}
		l, err := lm.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		src, err := lm.Open(ck)
		if err != nil {
			t.Fatal(err)
		}
		if l.Family != family || l.BOS != src.BOS || l.EOS != src.EOS {
			t.Errorf("%s: opened as %s bos %v eos %d, the checkpoint as %s %v %d", family, l.Family, l.BOS, l.EOS, src.Family, src.BOS, src.EOS)
		}
		if got, want := l.Prompt(sentences[2], l.BOS), src.Prompt(sentences[2], src.BOS); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: prompt ids %v, the checkpoint's %v", family, got, want)
		}
		if h := readHistory(t, out); h["family"] != family || h["source"] != Source {
			t.Errorf("%s: training.json %v", family, h)
		}
	}
	// A GPT-2 that repro trained (prompts begin with <|endoftext|>) keeps
	// that framing through the stage.
	ck := t.TempDir()
	if err := modeltest.GPT2(ck, 5); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(ck, "config.json")
	raw, _ := os.ReadFile(cfg)
	var c map[string]any
	json.Unmarshal(raw, &c)
	c["repro"] = map[string]any{"bos": true, "trained_by": "train.causal_lm"}
	raw, _ = json.Marshal(c)
	os.WriteFile(cfg, raw, 0o644)
	out, err := run(t, "model.hf_lm", map[string]cty.Value{"checkpoint": cty.StringVal(ck)})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := lm.Open(out); err != nil || !l.BOS {
		t.Errorf("bos framing lost: %v", err)
	}
}

// TestCheckStart: an unset checkpoint (a -var left at "") is refused
// before the run starts, naming the parameter.
func TestCheckStart(t *testing.T) {
	for _, sc := range []registry.StartChecker{HFEncoderParams{}, HFT5EncoderParams{}, HFLMParams{}} {
		var pe *registry.ParamError
		if err := sc.CheckStart(func(string) bool { return false }); !errors.As(err, &pe) || pe.Param != "checkpoint" {
			t.Errorf("%T: %v", sc, err)
		}
	}
	if err := (HFLMParams{Checkpoint: "x"}).CheckStart(nil); err != nil {
		t.Error(err)
	}
}
