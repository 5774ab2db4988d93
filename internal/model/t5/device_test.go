package t5

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

// deviceTestModel is a small T5 (heads of 16, the host's vectorised key
// scoring; 8 buckets up to distance 16, so the cache's distances reach the
// logarithmic buckets) with weights that give peaked distributions.
func deviceTestModel(t *testing.T, ff string, tied bool) *Model {
	t.Helper()
	c := DefaultConfig()
	c.VocabSize, c.DModel, c.DKV, c.DFF, c.NumLayers, c.NumHeads = 40, 32, 16, 48, 2, 2
	c.RelBuckets, c.RelMaxDistance, c.DropoutRate = 8, 16, 0.1
	c.FeedForwardProj, c.TieWordEmbeddings = ff, tied
	c.InitializerFactor = 3
	m, err := New(c, rand.New(rand.NewPCG(31, 32)))
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

// TestDeviceSessionLogits: a T5 session on the emulated device (encoder,
// cross-attention keys and values, self-attention caches, the decoder's
// position bias from the positions on the device) gives the host
// session's logits bit for bit after Start, every Append and a Select
// that reorders and repeats sequences; an Append copies only its token ids
// up; nothing is left on the device after Close and the release.
func TestDeviceSessionLogits(t *testing.T) {
	needUnfused(t)
	for _, v := range []struct {
		ff   string
		tied bool
	}{{"relu", true}, {"gated-gelu", false}} {
		t.Run(fmt.Sprintf("%s tied=%v", v.ff, v.tied), func(t *testing.T) {
			prompts := [][]int{{5, 3, 17, 1}, {8, 8, 30, 2, 11, 5, 38, 7, 1}, {9}}
			host := deviceTestModel(t, v.ff, v.tied)
			hs, err := host.Start(prompts, 24)
			if err != nil {
				t.Fatal(err)
			}
			m := deviceTestModel(t, v.ff, v.tied)
			dev := emudev.New().NewDevice()
			dm, release := m.OnDevice(dev)
			ds, err := dm.Start(prompts, 24)
			if err != nil {
				t.Fatal(err)
			}
			bitsEqual(t, "start logits", ds.Logits(), hs.Logits())
			for step := 0; step < 20; step++ {
				if step == 4 {
					for _, s := range []generate.Session{hs, ds} {
						if err := s.Select([]int{2, 0, 0, 1}); err != nil {
							t.Fatal(err)
						}
					}
					bitsEqual(t, "selected logits", ds.Logits(), hs.Logits())
				}
				toks := make([]int, hs.Len())
				for i := range toks {
					toks[i] = (7*i + 3*step + 1) % 40
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
			ds.(generate.DeviceSession).Close()
			release()
			tensor.DropIntCache(dev)
			if n, bytes := dev.(*emudev.Device).Live(); n != 0 {
				t.Errorf("%d device buffers (%d bytes) still allocated", n, bytes)
			}
		})
	}
}

// TestGenerateOnDevice: generate.Generate with T5 on the emulated backend
// gives the CPU's outputs (greedy, sampling with top-k and top-p, several
// samples, sequences ending at EOS) and, drawing on the device, each step
// copies only token ids (and the kept rows' indices where sequences end).
func TestGenerateOnDevice(t *testing.T) {
	needUnfused(t)
	m := deviceTestModel(t, "gated-gelu", false)
	prompts := [][]int{{5, 3, 17, 1}, {8, 8, 30, 2, 11, 5, 38, 7, 1}, {9}, {12, 13, 1}}
	greedy, err := generate.Generate(context.Background(), m, prompts, generate.Options{Sampling: generate.Sampling{TopP: 1}, MaxNewTokens: 6, EOS: -1})
	if err != nil {
		t.Fatal(err)
	}
	eos := greedy[0].Tokens[3]
	for _, o := range []generate.Options{
		{Sampling: generate.Sampling{TopP: 1}, MaxNewTokens: 12, EOS: eos},
		{Sampling: generate.Sampling{Temperature: 1, TopK: 10, TopP: 0.9}, MaxNewTokens: 15, Samples: 3, EOS: eos, Seed: 3},
		{Sampling: generate.Sampling{Temperature: 0.7, TopP: 1}, MaxNewTokens: 15, Samples: 2, EOS: eos, Seed: 4, BatchSize: 5},
	} {
		want, err := generate.Generate(context.Background(), m, prompts, o)
		if err != nil {
			t.Fatal(err)
		}
		prev := backend.Current()
		backend.Use(emudev.New())
		var rep generate.DeviceReport
		o.Report = &rep
		got, err := generate.Generate(context.Background(), m, prompts, o)
		backend.Use(prev)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v: the device generated\n%v\nthe CPU\n%v", o.Sampling, got, want)
		}
		if len(rep.Steps) == 0 {
			t.Fatal("no step was reported: the generation did not run on the device")
		}
		for i, s := range rep.Steps {
			c := s.Copies
			if !s.OnDevice || c.DownBytes != int64(4*s.Drawn) || c.UpBytes != int64(4*(s.Appended+s.Kept)) ||
				c.ByLabel["drawn token ids"].DownBytes != c.DownBytes ||
				c.ByLabel["token ids"].UpBytes+c.ByLabel["selected rows"].UpBytes != c.UpBytes {
				t.Fatalf("step %d (%d drawn, %d kept, %d appended) copied %v", i, s.Drawn, s.Kept, s.Appended, c)
			}
		}
		t.Logf("%+v: %s", o.Sampling, rep.String())
	}
}
