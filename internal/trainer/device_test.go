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
	defer backend.Use(backend.Current())
	backend.Use(b)
	task := newPairTask(t)
	cfg := Config{Epochs: 3, BatchSize: 6, Accumulate: 2, LR: 3e-3, WarmupRatio: 0.1, MaxGradNorm: 0.5, WeightDecay: 0.01,
		EvalEvery: 3, CheckpointEvery: 2, Work: work, Seed: 4}
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
