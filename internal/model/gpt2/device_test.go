package gpt2

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"repro/internal/generate"
	"repro/internal/tensor"
	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/emudev"
)

//go:noinline
func mulAdd(a, b, c float32) float32 { return a*b + c }

// needUnfused skips where Go fuses multiply-adds: the device kernels never
// do, so the host's loops differ from them there.
func needUnfused(t *testing.T) {
	t.Helper()
	a := float32(1 + 1.0/4096)
	if mulAdd(a, a, -(1+1.0/2048)) != 0 {
		t.Skipf("skipped: this Go build (GOARCH=%s) fuses multiply-adds", runtime.GOARCH)
	}
}

// deviceTestModel is a small GPT-2 with weights large enough to give
// peaked distributions, heads of 16 (the host's vectorised key scoring)
// and room for 40 tokens.
func deviceTestModel(t *testing.T, edit func(*Config)) *Model {
	t.Helper()
	c := DefaultConfig()
	c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead = 50, 40, 32, 2, 2
	c.BOSTokenID, c.EOSTokenID = 49, 49
	c.InitializerRange = 0.3
	if edit != nil {
		edit(&c)
	}
	m, err := New(c, rand.New(rand.NewPCG(21, 22)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func bitsEqual(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values on the device, %d on the host", what, len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d]: %v on the device, %v on the host", what, i, got[i], want[i])
		}
	}
}

// TestDeviceSessionLogits: a session on the emulated device gives the host
// session's logits bit for bit after Start, every Append and a Select that
// reorders and repeats sequences; an Append copies only its token ids up;
// nothing is left on the device after Close and the release.
func TestDeviceSessionLogits(t *testing.T) {
	needUnfused(t)
	for _, variant := range []struct {
		name string
		edit func(*Config)
	}{
		{"tied, tanh GELU", nil},
		{"untied, exact GELU, inverse layer scaling", func(c *Config) {
			c.TieWordEmbeddings, c.Activation, c.ScaleAttnByInverseLayerIdx = false, "gelu", true
		}},
	} {
		t.Run(variant.name, func(t *testing.T) {
			host := deviceTestModel(t, variant.edit)
			prompts := [][]int{{49, 3, 17}, {49, 8, 8, 30, 2, 11, 5, 40, 7, 1, 22}, {49}}
			hs, err := host.Start(prompts, 30)
			if err != nil {
				t.Fatal(err)
			}
			m := deviceTestModel(t, variant.edit)
			dev := emudev.New().NewDevice()
			dm, release := m.OnDevice(dev)
			ds, err := dm.Start(prompts, 30)
			if err != nil {
				t.Fatal(err)
			}
			bitsEqual(t, "start logits", ds.Logits(), hs.Logits())
			for step := 0; step < 14; step++ {
				if step == 3 {
					for _, s := range []generate.Session{hs, ds} {
						if err := s.Select([]int{2, 0, 0, 1}); err != nil {
							t.Fatal(err)
						}
					}
					bitsEqual(t, "selected logits", ds.Logits(), hs.Logits())
				}
				toks := make([]int, hs.Len())
				for i := range toks {
					toks[i] = (7*i + 3*step + 1) % 49
				}
				if err := hs.Append(toks); err != nil {
					t.Fatal(err)
				}
				before := dev.Copies()
				if err := ds.Append(toks); err != nil {
					t.Fatal(err)
				}
				c := dev.Copies().Since(before)
				if c.Down != 0 || c.UpBytes != int64(4*len(toks)) || c.ByLabel["token ids"].UpBytes != c.UpBytes {
					t.Fatalf("step %d: an Append copied %v, want %d B of token ids up", step, c, 4*len(toks))
				}
				bitsEqual(t, fmt.Sprintf("step %d logits", step), ds.Logits(), hs.Logits())
			}
			if err := ds.Append(make([]int, 3)); err == nil {
				t.Error("an Append of 3 tokens to 4 sequences was accepted")
			}
			ds.(generate.DeviceSession).Close()
			release()
			tensor.DropIntCache(dev)
			if n, bytes := dev.(*emudev.Device).Live(); n != 0 {
				t.Errorf("%d device buffers (%d bytes) still allocated", n, bytes)
			}
		})
	}
}

// TestGenerateOnDevice: generate.Generate with the emulated backend gives
// the CPU's outputs for every sampler (greedy, temperature, top-k, top-p,
// both), several samples per prompt, sequences ending at EOS, lockstep
// groups, and, drawing on the host from downloaded logits, a processor and
// penalties. When the device draws, a step copies only token ids: the
// drawn ones down (4 B a sequence), the appended ones up (4 B a sequence
// that goes on), and the kept rows' indices up where sequences ended.
func TestGenerateOnDevice(t *testing.T) {
	needUnfused(t)
	m := deviceTestModel(t, nil)
	prompts := [][]int{{49, 3, 17}, {49, 8, 8, 30, 2, 11, 5}, {49}, {49, 44, 12, 9}}
	// An EOS that greedy decoding reaches, so that sequences end and the
	// session selects the others.
	greedy, err := generate.Generate(context.Background(), m, prompts, generate.Options{Sampling: generate.Sampling{TopP: 1}, MaxNewTokens: 6, EOS: -1})
	if err != nil {
		t.Fatal(err)
	}
	eos := greedy[1].Tokens[2]
	bump := generate.ProcessorFunc(func(s *generate.Step) error {
		for _, row := range s.Logits {
			row[(s.Index*5)%len(row)] += 2
		}
		return nil
	})
	cases := []struct {
		name   string
		o      generate.Options
		device bool // drawn on the device
	}{
		{"greedy", generate.Options{Sampling: generate.Sampling{TopP: 1}, MaxNewTokens: 10, EOS: eos}, true},
		{"temperature", generate.Options{Sampling: generate.Sampling{Temperature: 0.8, TopP: 1}, MaxNewTokens: 12, Samples: 3, EOS: eos, Seed: 5}, true},
		{"top-k", generate.Options{Sampling: generate.Sampling{Temperature: 1.3, TopK: 5, TopP: 1}, MaxNewTokens: 12, Samples: 2, EOS: eos, Seed: 6}, true},
		{"top-p", generate.Options{Sampling: generate.Sampling{Temperature: 1, TopP: 0.7}, MaxNewTokens: 12, Samples: 2, EOS: eos, Seed: 7}, true},
		{"top-k and top-p", generate.Options{Sampling: generate.Sampling{Temperature: 1, TopK: 8, TopP: 0.9}, MaxNewTokens: 12, Samples: 2, EOS: eos, Seed: 8, BatchSize: 3}, true},
		{"lockstep groups", generate.Options{Sampling: generate.Sampling{Temperature: 1, TopP: 0.95}, MaxNewTokens: 10, Samples: 2, EOS: eos, Seed: 9,
			Groups: [][]int{{1, 3}, {0, 2}}, Lockstep: true}, true},
		{"per-prompt seeds, context window", generate.Options{Sampling: generate.Sampling{Temperature: 1, TopP: 1}, MaxNewTokens: 39, EOS: -1,
			Seeds: []uint64{1, 2, 3, 4}}, true},
		{"a processor", generate.Options{Sampling: generate.Sampling{Temperature: 1, TopK: 6, TopP: 1}, MaxNewTokens: 8, Samples: 2, EOS: eos, Seed: 10,
			Processors: []generate.Processor{bump}}, false},
		{"penalties", generate.Options{Sampling: generate.Sampling{Temperature: 1, TopP: 1, PresencePenalty: 0.5, FrequencyPenalty: 1}, MaxNewTokens: 8, EOS: eos, Seed: 11}, false},
	}
	selects := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := generate.Generate(context.Background(), m, prompts, c.o)
			if err != nil {
				t.Fatal(err)
			}
			prev := backend.Current()
			backend.Use(emudev.New())
			defer backend.Use(prev)
			var rep generate.DeviceReport
			o := c.o
			o.Report = &rep
			got, err := generate.Generate(context.Background(), m, prompts, o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("the device generated\n%v\nthe CPU\n%v", got, want)
			}
			if len(rep.Steps) == 0 {
				t.Fatal("no step was reported: the generation did not run on the device")
			}
			for i, s := range rep.Steps {
				if s.OnDevice != c.device {
					t.Fatalf("step %d drawn on the device: %v, want %v", i, s.OnDevice, c.device)
				}
				if s.Kept > 0 {
					selects++
				}
				if !c.device {
					continue
				}
				cp := s.Copies
				want := map[string]int64{"drawn token ids": int64(4 * s.Drawn), "token ids": int64(4 * s.Appended), "selected rows": int64(4 * s.Kept)}
				if cp.DownBytes != want["drawn token ids"] || cp.UpBytes != want["token ids"]+want["selected rows"] {
					t.Fatalf("step %d (%d drawn, %d kept, %d appended) copied %v", i, s.Drawn, s.Kept, s.Appended, cp)
				}
				for l, x := range cp.ByLabel {
					if x.UpBytes+x.DownBytes != want[l] {
						t.Fatalf("step %d: %d B labelled %q, want %d", i, x.UpBytes+x.DownBytes, l, want[l])
					}
				}
			}
			up, down := rep.StepBytes()
			t.Logf("%s; per token: %.2f B up, %.2f B down", rep.String(), float64(up)/float64(rep.Tokens()), float64(down)/float64(rep.Tokens()))
		})
	}
	if selects == 0 {
		t.Error("no sequence ended early: the Select path was not exercised")
	}
}
