package trainer

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/emudev"
)

//go:noinline
func devMulAdd(a, b, c float32) float32 { return a*b + c }

// needUnfused skips where Go fuses multiply-adds: the emulated device's
// kernels never do, so its bits are the CPU's only where Go does not.
func needUnfused(t *testing.T) {
	t.Helper()
	a := float32(1 + 1.0/4096)
	if devMulAdd(a, a, -(1+1.0/2048)) != 0 {
		t.Skipf("skipped: this Go build (GOARCH=%s) fuses multiply-adds", runtime.GOARCH)
	}
}

// deviceRun trains the tiny bi-encoder through Drive on backend b:
// accumulation over two micro-batches, clipping, decay, evaluations with
// keep-best, snapshots in work. crashAt > 0 fails that step call.
func deviceRun(t *testing.T, b backend.Backend, work string, crashAt int) (*pairTask, *Result, string, error) {
	t.Helper()
	return deviceRunIn(t, b, work, crashAt, backend.FP32)
}

// deviceRunIn is deviceRun with the GEMMs in precision p.
func deviceRunIn(t *testing.T, b backend.Backend, work string, crashAt int, p backend.Precision) (*pairTask, *Result, string, error) {
	t.Helper()
	defer backend.Use(backend.Current())
	backend.Use(b)
	task := newPairTask(t)
	cfg := Config{Epochs: 3, BatchSize: 6, Accumulate: 2, LR: 3e-3, WarmupRatio: 0.1, MaxGradNorm: 0.5, WeightDecay: 0.01,
		EvalEvery: 3, CheckpointEvery: 2, Work: work, Seed: 4, Precision: p}
	calls := 0
	rec := Recipe{Params: FromNamed(task.enc.NamedParams()), N: len(task.a),
		Step: func(_ context.Context, idx []int, rng *rand.Rand) (mat.Tensor, error) {
			if calls++; calls == crashAt {
				return nil, errors.New("simulated crash")
			}
			return task.loss(idx, rng)
		},
		Eval: func(context.Context) (float64, error) { return -float64(task.fullLoss(t)), nil },
	}
	var logBuf bytes.Buffer
	res, err := Drive(context.Background(), rec, cfg, Output{Log: slog.New(slog.NewTextHandler(&logBuf, nil))})
	return task, res, logBuf.String(), err
}

// TestDeviceTraining: a run on the emulated device (--backend emu) places
// the parameters and moments for the whole run and ends with the CPU
// run's weights, losses, evaluations and saved state bit for bit; each
// update copies its batch up and the logged loss and gradient norm down,
// nothing falls back, everything is given back, and the log reports it.
// A run crashed on the device and resumed there ends as the
// uninterrupted one.
func TestDeviceTraining(t *testing.T) {
	needUnfused(t)
	if testing.Short() {
		t.Skip("trains a transformer four times")
	}
	cpuWork, emuWork := t.TempDir(), t.TempDir()
	want, wantRes, _, err := deviceRun(t, backend.CPU(), cpuWork, -1)
	if err != nil {
		t.Fatal(err)
	}
	if wantRes.Device != nil {
		t.Fatalf("a CPU run reports device copies: %+v", wantRes.Device)
	}
	got, res, log, err := deviceRun(t, emudev.New(), emuWork, -1)
	if err != nil {
		t.Fatal(err)
	}
	sameWeights(t, got.weights(), want.weights())
	if res.LastLoss != wantRes.LastLoss || res.BestStep != wantRes.BestStep || len(res.History) != len(wantRes.History) || len(res.History) < 3 {
		t.Fatalf("device run: last loss %v, best step %d, %d evaluations; CPU: %v, %d, %d", res.LastLoss, res.BestStep, len(res.History), wantRes.LastLoss, wantRes.BestStep, len(wantRes.History))
	}
	for i, e := range wantRes.History {
		if math.Float64bits(res.History[i].Metric) != math.Float64bits(e.Metric) {
			t.Fatalf("evaluation %d: %v on the device, %v on the CPU", i, res.History[i].Metric, e.Metric)
		}
	}
	// The saved state (weights, moments, best weights, counters) is the
	// same file.
	a, err := os.ReadFile(filepath.Join(cpuWork, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(emuWork, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("the device run's saved state differs from the CPU run's")
	}

	d := res.Device
	t.Logf("log:\n%s", log)
	if d == nil || d.Device != "emu" || d.Updates != res.Steps {
		t.Fatalf("device report %+v for %d updates", d, res.Steps)
	}
	// Per update: two micro-batches of 6 pairs (token, type and position
	// ids of both sides, lengths, labels: at most 16 tokens) up; two
	// losses and the gradient norm down.
	maxUp := int64(2 * 4 * (2*(3*6*16+6) + 6))
	if d.MaxStepUp > maxUp || d.StepDown != int64(d.Updates)*(2*4+8) || d.MaxStepDown != 2*4+8 {
		t.Errorf("per update: at most %d B up (budget %d), %d B down in all over %d updates (want %d each)", d.MaxStepUp, maxUp, d.StepDown, d.Updates, 2*4+8)
	}
	for l := range d.LastStep.ByLabel {
		if strings.HasPrefix(l, "fallback") || l == "place" || l == "fetch" {
			t.Errorf("the last update copied %q: %v", l, d.LastStep)
		}
	}
	var weightBytes int64
	for _, w := range want.weights() {
		weightBytes += int64(4 * len(w))
	}
	if place := d.Other.ByLabel["place"]; place.UpBytes != int64(1+len(res.History))*weightBytes {
		t.Errorf("placing copied %d B, want the weights once and again after each of %d evaluations (%d B each)", place.UpBytes, len(res.History), weightBytes)
	}
	if d.Leaked != 0 {
		t.Errorf("%d device buffers still allocated after the run", d.Leaked)
	}
	for _, want := range []string{"copied_up_bytes=", "device copies", "per_update_up_bytes=", "device=emu"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not report %q:\n%s", want, log)
		}
	}

	// Crash after 11 step calls (mid-update, after a snapshot), resume on
	// the device.
	work := t.TempDir()
	if _, _, _, err := deviceRun(t, emudev.New(), work, 11); err == nil {
		t.Fatal("the crash did not happen")
	}
	resumed, rres, _, err := deviceRun(t, emudev.New(), work, -1)
	if err != nil {
		t.Fatal(err)
	}
	if !rres.Resumed {
		t.Fatal("the second run did not resume")
	}
	sameWeights(t, resumed.weights(), want.weights())
}

func sameWeights(t *testing.T, got, want [][]float32) {
	t.Helper()
	for i := range want {
		for j := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("weight %d[%d]: %v on the device, %v on the CPU", i, j, got[i][j], want[i][j])
			}
		}
	}
}

// TestDeviceTrainingMixedPrecision: the same run with its GEMMs in BF16
// (operands rounded to bfloat16, FP32 sums, FP32 master weights and AdamW)
// and in TF32 on the emulated device stays close to the FP32 run (the
// stated tolerances: every weight within 2e-3 of FP32's, 1e-2 relative
// over all weights' change from the start; losses within 1e-2 relative;
// TF32 within a tenth of that) and is not FP32's: the option changes the
// arithmetic. On the CPU backend, which has no device, a mixed-precision
// run is refused before its first update.
func TestDeviceTrainingMixedPrecision(t *testing.T) {
	needUnfused(t)
	if testing.Short() {
		t.Skip("trains a transformer three times")
	}
	want, wantRes, _, err := deviceRunIn(t, backend.CPU(), t.TempDir(), -1, backend.FP32)
	if err != nil {
		t.Fatal(err)
	}
	start := newPairTask(t).weights()
	for _, c := range []struct {
		p                 backend.Precision
		weightTol, relTol float64
		lossTol           float64
	}{{backend.BF16, 2e-3, 1e-2, 1e-2}, {backend.TF32, 2e-4, 1e-3, 1e-3}} {
		got, res, log, err := deviceRunIn(t, emudev.New(), t.TempDir(), -1, c.p)
		if err != nil {
			t.Fatal(err)
		}
		var maxAbs, diff2, change2 float64
		differ := 0
		gw, ww := got.weights(), want.weights()
		for i := range ww {
			for j := range ww[i] {
				d := float64(gw[i][j] - ww[i][j])
				maxAbs = max(maxAbs, math.Abs(d))
				diff2 += d * d
				ch := float64(ww[i][j] - start[i][j])
				change2 += ch * ch
				if gw[i][j] != ww[i][j] {
					differ++
				}
			}
		}
		rel := math.Sqrt(diff2 / change2)
		lossRel := math.Abs(res.LastLoss-wantRes.LastLoss) / math.Abs(wantRes.LastLoss)
		t.Logf("%v: max |w - w_fp32| %.3g, ||w - w_fp32|| / ||w_fp32 - w_0|| %.3g, %d weights differ; last loss %v (fp32 %v, %.3g relative)",
			c.p, maxAbs, rel, differ, res.LastLoss, wantRes.LastLoss, lossRel)
		if differ == 0 || res.LastLoss == wantRes.LastLoss {
			t.Errorf("%v: the run is FP32's: the precision changed nothing", c.p)
		}
		if maxAbs > c.weightTol || rel > c.relTol || lossRel > c.lossTol {
			t.Errorf("%v: outside the tolerance (%g absolute, %g relative; losses %g)", c.p, c.weightTol, c.relTol, c.lossTol)
		}
		for i, e := range wantRes.History {
			if d := math.Abs(res.History[i].Metric - e.Metric); d > c.lossTol*math.Abs(e.Metric) {
				t.Errorf("%v: evaluation %d: %v, fp32 %v", c.p, i, res.History[i].Metric, e.Metric)
			}
		}
		if !strings.Contains(log, "precision="+c.p.String()) || res.Device == nil || res.Device.Precision != c.p {
			t.Errorf("%v: the report does not name the precision:\n%s", c.p, log)
		}
	}
	_, _, _, err = deviceRunIn(t, backend.CPU(), t.TempDir(), -1, backend.BF16)
	if err == nil || !strings.Contains(err.Error(), "precision bf16 needs the device path") {
		t.Errorf("bf16 on the CPU backend: %v", err)
	}
}
