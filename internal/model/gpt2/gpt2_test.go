package gpt2

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repro/internal/datadir/datadirtest"
	"repro/internal/model/checkpoint"
	"repro/internal/model/safetensors"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

type goldenModel struct {
	Dir    string        `json:"dir"`
	IDs    [][]int       `json:"ids"`
	Logits [][][]float64 `json:"logits"`
}

func loadGolden(t *testing.T) []goldenModel {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Models []goldenModel `json:"models"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Models) < 4 {
		t.Fatalf("golden.json has %d models", len(g.Models))
	}
	return g.Models
}

// near is the golden tolerance: 1e-4, relative above magnitude 1.
func near(got float32, want float64) bool {
	return math.Abs(float64(got)-want) <= 1e-4*math.Max(1, math.Abs(want))
}

// TestGoldenHF loads checkpoints that testdata/gen_golden.py wrote in
// Hugging Face's layouts (hub names with buffers, GPT2LMHeadModel names
// sharded, an untied head with exact GELU and inverse-layer scaling, ReLU
// without score scaling) and compares the logits of a padded batch with
// the PyTorch forward pass written from transformers' modeling_gpt2.py.
func TestGoldenHF(t *testing.T) {
	for _, g := range loadGolden(t) {
		m, tok, err := Load(filepath.Join("testdata", g.Dir))
		if err != nil {
			t.Fatalf("%s: %v", g.Dir, err)
		}
		if tok != nil {
			t.Errorf("%s: a tokenizer where the directory has none", g.Dir)
		}
		b, err := transformer.NewBatch(g.IDs, m.Config.EOSTokenID)
		if err != nil {
			t.Fatal(err)
		}
		logits, err := m.Forward(b, nil)
		if err != nil {
			t.Fatalf("%s: %v", g.Dir, err)
		}
		L, V := tensor.Data(logits), m.Config.VocabSize
		bad := 0
		for s, rows := range g.Logits {
			for p, want := range rows {
				got := L[(s*b.T+p)*V : (s*b.T+p+1)*V]
				for j := range want {
					if !near(got[j], want[j]) {
						if bad++; bad <= 3 {
							t.Errorf("%s: sequence %d position %d logit %d = %v, torch %v", g.Dir, s, p, j, got[j], want[j])
						}
					}
				}
			}
		}
	}
}

// TestSessionMatchesForward decodes the golden sequences incrementally --
// prompts of different lengths read in one pass, then one token per step,
// with a fork and a drop in between -- and compares every step's logits
// with the whole-sequence forward pass.
func TestSessionMatchesForward(t *testing.T) {
	for _, g := range loadGolden(t)[:3] {
		m, _, err := Load(filepath.Join("testdata", g.Dir))
		if err != nil {
			t.Fatal(err)
		}
		V := m.Config.VocabSize
		full := make([][]float32, len(g.IDs)) // per sequence, [len, V]
		for s, ids := range g.IDs {
			b, _ := transformer.NewBatch([][]int{ids}, 0)
			l, err := m.Forward(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			full[s] = tensor.Data(l)
		}
		prompt := []int{2, 5, 1}
		prompts := make([][]int, len(g.IDs))
		for s := range prompts {
			prompts[s] = g.IDs[s][:prompt[s]]
		}
		sess, err := m.Start(prompts, m.Config.NPositions)
		if err != nil {
			t.Fatal(err)
		}
		seq := []int{0, 1, 2} // which golden sequence each session row follows
		pos := slices.Clone(prompt)
		check := func(step string) {
			L := sess.Logits()
			for r, s := range seq {
				want := full[s][(pos[r]-1)*V : pos[r]*V]
				for j := range want {
					if math.Abs(float64(L[r*V+j]-want[j])) > 1e-4*math.Max(1, math.Abs(float64(want[j]))) {
						t.Fatalf("%s %s: row %d (sequence %d, position %d) logit %d = %v, forward %v", g.Dir, step, r, s, pos[r]-1, j, L[r*V+j], want[j])
					}
				}
			}
		}
		check("start")
		for step := 0; ; step++ {
			switch step {
			case 1: // fork sequence 2 and drop sequence 0
				if err := sess.Select([]int{1, 2, 2}); err != nil {
					t.Fatal(err)
				}
				seq, pos = []int{1, 2, 2}, []int{pos[1], pos[2], pos[2]}
				check("select")
			case 3: // drop the first fork (an in-place compaction)
				if err := sess.Select([]int{0, 2}); err != nil {
					t.Fatal(err)
				}
				seq, pos = []int{seq[0], seq[2]}, []int{pos[0], pos[2]}
				check("compact")
			}
			var toks []int
			done := false
			for r, s := range seq {
				if pos[r] >= len(g.IDs[s]) {
					done = true
				}
				if !done {
					toks = append(toks, g.IDs[s][pos[r]])
				}
			}
			if done {
				break
			}
			if err := sess.Append(toks); err != nil {
				t.Fatal(err)
			}
			for r := range pos {
				pos[r]++
			}
			check("append")
		}
	}
}

func TestScoreTokens(t *testing.T) {
	g := loadGolden(t)[0]
	m, _, err := Load(filepath.Join("testdata", g.Dir))
	if err != nil {
		t.Fatal(err)
	}
	prompts := [][]int{g.IDs[0][:3], g.IDs[1][:1]}
	conts := [][]int{g.IDs[0][3:], g.IDs[1][1:6]}
	lp, err := m.ScoreTokens(prompts, conts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range prompts {
		for j, tok := range conts[i] {
			want := g.Logits[i][len(prompts[i])+j-1]
			mx := want[0]
			for _, v := range want {
				mx = math.Max(mx, v)
			}
			var sum float64
			for _, v := range want {
				sum += math.Exp(v - mx)
			}
			w := want[tok] - mx - math.Log(sum)
			if math.Abs(lp[i][j]-w) > 1e-4 {
				t.Errorf("pair %d token %d: log p %v, torch %v", i, j, lp[i][j], w)
			}
		}
	}
}

func tinyConfig() Config {
	c := DefaultConfig()
	c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead = 40, 16, 8, 2, 2
	c.BOSTokenID, c.EOSTokenID = 39, 39
	return c
}

// TestSaveLoad writes a model the way transformers' save_pretrained does
// and reads it back.
func TestSaveLoad(t *testing.T) {
	for _, tied := range []bool{true, false} {
		c := tinyConfig()
		c.TieWordEmbeddings = tied
		m, err := New(c, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := Save(dir, m, nil, map[string]any{"trained_by": "test"}); err != nil {
			t.Fatal(err)
		}
		f, err := safetensors.ReadFile(filepath.Join(dir, checkpoint.FileWeights))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := f.Tensors["transformer.h.1.attn.c_attn.weight"]; !ok {
			t.Errorf("saved names %v lack the transformer. prefix", f.Names())
		}
		if _, ok := f.Tensors["lm_head.weight"]; ok == tied {
			t.Errorf("tied=%v: lm_head.weight present=%v", tied, ok)
		}
		if sh := f.Tensors["transformer.h.0.attn.c_attn.weight"].Shape; !slices.Equal(sh, []int{8, 24}) {
			t.Errorf("c_attn saved with shape %v, want Conv1D's [in, out] = [8 24]", sh)
		}
		back, _, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if back.Config.Repro["trained_by"] != "test" || back.Config.TieWordEmbeddings != tied {
			t.Errorf("config round trip: %+v", back.Config)
		}
		a, b := m.NamedParams(), back.NamedParams()
		for i := range a {
			if a[i].Name != b[i].Name || !slices.Equal(tensor.Data(a[i].Param), tensor.Data(b[i].Param)) {
				t.Fatalf("parameter %s differs after a round trip", a[i].Name)
			}
		}
	}
}

// TestLoadErrors: a checkpoint that disagrees with its config fails naming
// the tensor and both shapes; nothing loads half.
func TestLoadErrors(t *testing.T) {
	c := tinyConfig()
	m, _ := New(c, rand.New(rand.NewPCG(1, 2)))
	dir := t.TempDir()
	if err := Save(dir, m, nil, nil); err != nil {
		t.Fatal(err)
	}
	weights := filepath.Join(dir, checkpoint.FileWeights)
	orig, err := safetensors.ReadFile(weights)
	if err != nil {
		t.Fatal(err)
	}
	rewrite := func(edit func(ts map[string]safetensors.Tensor)) {
		ts := map[string]safetensors.Tensor{}
		for k, v := range orig.Tensors {
			ts[k] = v
		}
		edit(ts)
		if err := safetensors.WriteFile(weights, ts, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		edit func(ts map[string]safetensors.Tensor)
		want string
	}{
		{"missing", func(ts map[string]safetensors.Tensor) { delete(ts, "transformer.h.1.mlp.c_fc.bias") },
			"missing tensors: h.1.mlp.c_fc.bias [32]"},
		{"extra", func(ts map[string]safetensors.Tensor) {
			ts["transformer.h.2.ln_1.weight"] = safetensors.Tensor{Shape: []int{8}, Data: make([]float32, 8)}
		}, "unexpected tensors (not parameters of this model): transformer.h.2.ln_1.weight [8]"},
		{"transposed", func(ts map[string]safetensors.Tensor) {
			w := ts["transformer.h.0.attn.c_attn.weight"]
			ts["transformer.h.0.attn.c_attn.weight"] = safetensors.Tensor{Shape: []int{24, 8}, Data: w.Data}
		}, `tensor "transformer.h.0.attn.c_attn.weight" has shape [24 8], model parameter "h.0.attn.c_attn.weight" has shape [8 24]`},
	} {
		rewrite(tc.edit)
		if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	rewrite(func(map[string]safetensors.Tensor) {})

	// Bad configurations name the key.
	for _, tc := range []struct{ key, value, want string }{
		{"model_type", `"bert"`, `model_type "bert" is not gpt2`},
		{"activation_function", `"swish"`, `activation_function "swish" is not supported`},
		{"n_head", `3`, "n_embd 8 must be a positive multiple of n_head 3"},
	} {
		d := t.TempDir()
		raw, _ := os.ReadFile(filepath.Join(dir, FileConfig))
		var cfg map[string]any
		json.Unmarshal(raw, &cfg)
		var v any
		json.Unmarshal([]byte(tc.value), &v)
		cfg[tc.key] = v
		b, _ := json.Marshal(cfg)
		os.WriteFile(filepath.Join(d, FileConfig), b, 0o644)
		if _, _, err := Load(d); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %s=%s: got %v, want %q", tc.key, tc.value, err, tc.want)
		}
	}
}

// TestTokenizer loads a GPT-2-sized model with the published GPT-2
// vocabulary and merges, and rejects a tokenizer that does not fit the
// embedding.
func TestTokenizer(t *testing.T) {
	src := filepath.Join(datadirtest.Dir(t), "tokenizers", "gpt2")
	c := tinyConfig()
	c.VocabSize, c.BOSTokenID, c.EOSTokenID = 50257, 50256, 50256
	m, err := New(c, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Save(dir, m, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"vocab.json", "merges.txt"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	_, tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ids := tok.IDs("Hello world" + EndOfText); !slices.Equal(ids, []int{15496, 995, 50256}) {
		t.Errorf("GPT-2 ids %v, want [15496 995 50256]", ids)
	}
	// The same tokenizer beside a model of 40 rows.
	small := t.TempDir()
	m2, _ := New(tinyConfig(), rand.New(rand.NewPCG(3, 4)))
	Save(small, m2, nil, nil)
	for _, f := range []string{"vocab.json", "merges.txt"} {
		b, _ := os.ReadFile(filepath.Join(src, f))
		os.WriteFile(filepath.Join(small, f), b, 0o644)
	}
	if _, _, err := Load(small); err == nil || !strings.Contains(err.Error(), "the tokenizer has 50257 tokens (vocab.json) but the model's token embedding has 40 rows") {
		t.Errorf("mismatched tokenizer: %v", err)
	}
}
