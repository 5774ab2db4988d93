//go:build cuda

package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/generate"
	"repro/internal/model/conformance"
	"repro/internal/model/gpt2"
	"repro/internal/model/t5"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/cuda"
	"repro/internal/tensor/optim"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gpubench: "+format+"\n", args...)
	os.Exit(1)
}

// median of xs[skip:] (the first steps are warm-up).
func median(xs []float64, skip int) float64 {
	if len(xs) <= skip {
		skip = 0
	}
	s := append([]float64(nil), xs[skip:]...)
	if len(s) == 0 {
		return 0
	}
	sort.Float64s(s)
	return s[len(s)/2]
}

func main() {
	steps := flag.Int("steps", 5, "training steps per model (the first is warm-up)")
	quick := flag.Bool("quick", false, "tiny shapes (checks the program, measures nothing meaningful)")
	flag.Parse()

	name := ""
	if out, err := exec.Command("nvidia-smi", "--query-gpu=name", "--format=csv,noheader").Output(); err == nil {
		name = strings.TrimSpace(strings.Split(string(out), "\n")[0])
	}
	b, err := cuda.Open(0)
	if err != nil {
		fail("no usable GPU: %v", err)
	}
	if name == "" {
		name = b.Name()
	}
	peak, entry, ok := peakFP32(name)
	if ok {
		fmt.Printf("GPU: %s; FP32 peak %.1f TFLOP/s (table entry %q, scripts/gpubench/peak.go)\n", name, peak, entry)
	} else {
		fmt.Printf("GPU: %s; FP32 peak unknown (not in scripts/gpubench/peak.go): fractions not computed\n", name)
	}

	benchBERT(b, *steps, *quick, peak)
	benchT5(b, *steps, *quick, peak)
	benchGPT2(b, *quick, peak)
}

// benchBERT times a BERT-base-shaped training step, whole step on the
// device.
func benchBERT(b *cuda.Backend, steps int, quick bool, peak float64) {
	bert := conformance.EncoderRun{
		Config: transformer.Config{VocabSize: 30522, Hidden: 768, Layers: 12, Heads: 12, Intermediate: 3072, MaxPosition: 512,
			TypeVocab: 2, HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12},
		Batch: 32, Len: 128, Steps: steps, Seed: 1,
	}
	if quick {
		bert.Config = conformance.SmallEncoder(0).Config
		bert.Batch, bert.Len = 4, 12
	}
	res, err := bert.Run(b.Device())
	if err != nil {
		fail("BERT-base step: %v", err)
	}
	c := bert.Config
	sec := median(res.StepSeconds, 1)
	fl := encoderStepFLOPs(c.Layers, c.Hidden, c.Intermediate, bert.Batch, bert.Len)
	last := res.PerStep[len(res.PerStep)-1]
	fmt.Printf("BERT-base-shaped training step (device-resident; %d layers, width %d, batch %d x %d tokens, MSE head, AdamW): %.3f s/step, %.0f sequences/s, %s; copies per step %d B (batch %d B)\n",
		c.Layers, c.Hidden, bert.Batch, bert.Len, sec, float64(bert.Batch)/sec, fraction(fl, sec, peak), last.Bytes(), res.InputBytes[len(res.InputBytes)-1])

}

// benchT5 times a T5-base-shaped training step, whole step on the device
// (relative position bias, RMS norms, cross-entropy included).
func benchT5(b *cuda.Backend, steps int, quick bool, peak float64) {
	tc := t5.DefaultConfig()
	tc.DModel, tc.DFF, tc.NumLayers, tc.NumHeads = 768, 3072, 12, 12
	B, S, T := 32, 128, 32
	if quick {
		tc.DModel, tc.DFF, tc.NumLayers, tc.NumHeads, tc.VocabSize = 64, 128, 2, 2, 512
		B, S, T = 4, 16, 8
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := t5.New(tc, rng)
	if err != nil {
		fail("T5-base: %v", err)
	}
	ex := make([]t5.Example, B)
	for i := range ex {
		ex[i].Source, ex[i].Target = make([]int, S), make([]int, T)
		for j := range ex[i].Source {
			ex[i].Source[j] = 2 + rng.IntN(tc.VocabSize-2)
		}
		for j := range ex[i].Target {
			ex[i].Target[j] = 2 + rng.IntN(tc.VocabSize-2)
		}
	}
	opt, err := optim.ForParams(m.Params(), optim.Config{LR: 1e-4, WeightDecay: 0.01})
	if err != nil {
		fail("T5-base: %v", err)
	}
	dev := b.NewDevice() // its own copy counter
	var leaves []mat.Tensor
	for _, p := range m.Params() {
		leaves = append(leaves, p)
	}
	tensor.Place(dev, leaves...) // weights resident, as the trainer does
	var t5Secs []float64
	var t5Copies backend.Copies
	for s := 0; s < steps; s++ {
		before := dev.Copies()
		start := time.Now()
		l, _, err := m.Loss(ex, rng)
		if err != nil {
			fail("T5-base step: %v", err)
		}
		if err := tensor.Backward(l); err != nil {
			fail("T5-base step: %v", err)
		}
		_ = tensor.Data(l)[0] // the logged loss: synchronises
		opt.Step()
		tensor.Release(l)
		t5Secs = append(t5Secs, time.Since(start).Seconds())
		t5Copies = dev.Copies().Since(before)
	}
	opt.Release()
	tensor.Unplace(leaves...)
	tensor.DropIntCache(dev)
	sec := median(t5Secs, 1)
	fmt.Printf("T5-base-shaped training step (device-resident; %d+%d layers, width %d, batch %d, %d -> %d tokens): %.3f s/step, %s; copies in the last step %d B\n",
		tc.NumLayers, tc.DecoderLayers(), tc.DModel, B, S, T, sec, fraction(t5StepFLOPs(tc.NumLayers, tc.DModel, tc.DFF, tc.VocabSize, B, S, T), sec, peak), t5Copies.Bytes())

}

// benchGPT2 times GPT-2-small-shaped generation on the device:
// generate.Generate places the weights once, keeps the caches and logits
// there and draws there; a step copies the token ids (Report).
func benchGPT2(b *cuda.Backend, quick bool, peak float64) {
	rng := rand.New(rand.NewPCG(3, 4))
	backend.Use(b)
	gc := gpt2.DefaultConfig()
	P, N, GB := 24, 40, 32
	if quick {
		gc.NLayer, gc.NEmbd, gc.NHead, gc.VocabSize = 2, 64, 2, 512
		gc.BOSTokenID, gc.EOSTokenID = 511, 511
		P, N, GB = 4, 4, 2
	}
	g, err := gpt2.New(gc, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		fail("GPT-2 small: %v", err)
	}
	prompts := make([][]int, GB)
	for i := range prompts {
		prompts[i] = make([]int, P)
		for j := range prompts[i] {
			prompts[i][j] = rng.IntN(gc.VocabSize)
		}
	}
	o := generate.Options{Sampling: generate.Sampling{Temperature: 1, TopK: 5, TopP: 0.9}, MaxNewTokens: N, EOS: -1, BatchSize: GB, Seed: 1}
	if _, err := generate.Generate(context.Background(), g, prompts, o); err != nil { // warm-up
		fail("GPT-2 small generation: %v", err)
	}
	var rep generate.DeviceReport
	o.Report = &rep
	start := time.Now()
	outs, err := generate.Generate(context.Background(), g, prompts, o)
	if err != nil {
		fail("GPT-2 small generation: %v", err)
	}
	sec := time.Since(start).Seconds()
	if rep.Device == "" {
		fail("GPT-2 small generation did not run on the device")
	}
	tokens := 0
	for _, out := range outs {
		tokens += len(out.Tokens)
	}
	fl := 0.0
	for i := 0; i < N; i++ {
		fl += float64(GB) * gpt2TokenFLOPs(gc.NLayer, gc.NEmbd, gc.VocabSize, P+i)
	}
	up, down := rep.StepBytes()
	fmt.Printf("GPT-2-small-shaped generation (device-resident; %d layers, width %d, batch %d, prompts %d, %d new tokens): %.0f tokens/s, %s; steps copied %.1f B per token\n",
		gc.NLayer, gc.NEmbd, GB, P, N, float64(tokens)/sec, fraction(fl, sec, peak), float64(up+down)/float64(max(rep.Tokens(), 1)))
	backend.Use(backend.CPU())
}
