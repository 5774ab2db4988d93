package generate

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/emudev"
	"repro/registry"
)

//go:noinline
func mulAdd(a, b, c float32) float32 { return a*b + c }

// runOn runs stage type name on backend b (nil: the CPU) and returns its
// outputs and its log.
func runOn(t *testing.T, b backend.Backend, name string, set map[string]cty.Value, inputs map[string]registry.Artifact, seed int64) (map[string]string, string) {
	t.Helper()
	if b != nil {
		prev := backend.Current()
		backend.Use(b)
		defer backend.Use(prev)
	}
	r := registry.New()
	Register(r)
	RegisterDINO(r)
	st, _ := r.Lookup(name)
	ps, _ := st.ParamSchema()
	attrs := map[string]cty.Value{}
	for _, p := range ps {
		attrs[p.Name] = p.Default
	}
	for k, v := range set {
		attrs[k] = v
	}
	params, err := st.DecodeParams(cty.ObjectVal(attrs))
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{}
	for _, o := range st.Outputs {
		outs[o.Name] = t.TempDir()
	}
	var log bytes.Buffer
	env := &registry.Env{Params: params, Inputs: inputs, Outputs: outs, Seed: seed, Log: slog.New(slog.NewTextHandler(&log, nil))}
	if err := st.Call(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	return outs, log.String()
}

// TestStagesOnEmu: generate.complete and generate.dino_pairs (self-debiasing:
// a processor, so the logits come down and the host draws) on the emulated
// device write the CPU's files byte for byte; complete's log reports the
// device copies, a few bytes per token.
func TestStagesOnEmu(t *testing.T) {
	a := float32(1 + 1.0/4096)
	if mulAdd(a, a, -(1+1.0/2048)) != 0 {
		t.Skipf("skipped: this Go build (GOARCH=%s) fuses multiply-adds", runtime.GOARCH)
	}
	data := sentences(t, "the cat sat", "a dog ate", "words end here")
	in := map[string]registry.Artifact{"model": tinyModel(t, 128), "data": data}
	for _, c := range []struct {
		name string
		set  map[string]cty.Value
		port string
	}{
		{"generate.complete", map[string]cty.Value{"template": cty.StringVal("Sentence: \"[X]"), "samples": cty.NumberIntVal(3),
			"max_new_tokens": cty.NumberIntVal(12), "top_k": cty.NumberIntVal(20), "top_p": cty.NumberFloatVal(0.9),
			"stop": cty.ListVal([]cty.Value{cty.StringVal("\"")}), "token_ids": cty.True}, "completions"},
		{"generate.dino_pairs", map[string]cty.Value{"quote": cty.StringVal("e"), "max_new_tokens": cty.NumberIntVal(10),
			"max_tries": cty.NumberIntVal(2)}, "pairs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cpu, _ := runOn(t, nil, c.name, c.set, in, 11)
			emu, log := runOn(t, emudev.New(), c.name, c.set, in, 11)
			files, _ := os.ReadDir(cpu[c.port])
			if len(files) == 0 {
				t.Fatal("no output")
			}
			for _, f := range files {
				want, _ := os.ReadFile(filepath.Join(cpu[c.port], f.Name()))
				got, err := os.ReadFile(filepath.Join(emu[c.port], f.Name()))
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s differs on the device (%v):\n%s\nthe CPU:\n%s", f.Name(), err, got, want)
				}
			}
			if c.name == "generate.complete" {
				if !strings.Contains(log, "device copies") || !strings.Contains(log, "per_token_down_bytes=4 ") {
					t.Errorf("the log does not report the device copies of 4 B down per token:\n%s", log)
				}
				t.Log(log)
			}
		})
	}
}
