package trainer

import (
	"bufio"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
)

// lossRecord is a recipe's journal record in these tests.
type lossRecord struct {
	Step int     `json:"step"`
	Loss float64 `json:"loss"`
}

// regressionRecipe trains g, evaluating every update's full loss and
// journalling each update's loss.
func regressionRecipe(g *regression) Recipe {
	return Recipe{Params: g.params(), N: len(g.y), Step: g.step(0.05),
		Eval:   func(context.Context) (float64, error) { return -g.fullLoss(), nil },
		Record: func(p Progress) any { return lossRecord{Step: p.Step, Loss: p.Loss} }}
}

func driveConfig(work string) Config {
	return Config{Epochs: 3, BatchSize: 8, LR: 0.03, WarmupRatio: 0.2, MaxGradNorm: 2, EvalEvery: 5, CheckpointEvery: 3, Seed: 11, Work: work}
}

// drive runs Drive with ag.Backward (the fixture's operator is not one
// of internal/tensor's).
func drive(ctx context.Context, rec Recipe, c Config, out Output) (*Result, error) {
	return driveWith(ctx, rec, c, out, func(l mat.Tensor) error { return ag.Backward(l) })
}

func journalLines(t *testing.T, work string) int {
	t.Helper()
	f, err := os.Open(filepath.Join(work, JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		n++
	}
	return n
}

// TestDriveJournalAfterCrash: a run that dies after its journal got ahead
// of the last snapshot (update 14 recorded, the state saved at the end of
// the first epoch, update 13) resumes with the journal cut back to the state, so weights, history and
// records all equal an uninterrupted run's.
func TestDriveJournalAfterCrash(t *testing.T) {
	ref := newRegression(100, 3)
	want, err := drive(context.Background(), regressionRecipe(ref), driveConfig(t.TempDir()), Output{})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Records) != want.Steps {
		t.Fatalf("%d records for %d updates", len(want.Records), want.Steps)
	}

	work := t.TempDir()
	crashed := newRegression(100, 3)
	rec := regressionRecipe(crashed)
	calls, inner, boom := 0, rec.Step, errors.New("simulated crash")
	rec.Step = func(ctx context.Context, b []int, r *rand.Rand) (mat.Tensor, error) {
		if calls++; calls == 15 { // inside update 15: the last snapshot is 13's
			return nil, boom
		}
		return inner(ctx, b, r)
	}
	if _, err := drive(context.Background(), rec, driveConfig(work), Output{}); !errors.Is(err, boom) {
		t.Fatalf("crash run: %v", err)
	}
	if n := journalLines(t, work); n != 14 {
		t.Fatalf("the crashed run journalled %d updates, want 14", n)
	}
	resumed := newRegression(100, 3)
	got, err := drive(context.Background(), regressionRecipe(resumed), driveConfig(work), Output{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Resumed {
		t.Fatal("did not resume")
	}
	if !reflect.DeepEqual(resumed.weights(), ref.weights()) || !reflect.DeepEqual(got.History, want.History) {
		t.Fatal("resumed run differs from the uninterrupted one")
	}
	a, err := Records[lossRecord](want)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Records[lossRecord](got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("records after resume\n%v\nwant\n%v", b, a)
	}
}

// TestDriveCancel: cancelling after update k (as Ctrl-C does) saves the
// state; the next run starts at update k+1 and ends as an uninterrupted
// run does.
func TestDriveCancel(t *testing.T) {
	ref := newRegression(100, 3)
	c := driveConfig("")
	c.CheckpointEvery = 0
	want, err := drive(context.Background(), regressionRecipe(ref), c, Output{})
	if err != nil {
		t.Fatal(err)
	}
	c.Work = t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = drive(ctx, regressionRecipe(newRegression(100, 3)), c, Output{Report: func(done, _ int, _ string) {
		if done == 7 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	resumed := newRegression(100, 3)
	first := 0
	got, err := drive(context.Background(), regressionRecipe(resumed), c, Output{Report: func(done, _ int, _ string) {
		if first == 0 {
			first = done
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if first != 8 {
		t.Errorf("resumed at update %d, want 8", first)
	}
	if !reflect.DeepEqual(resumed.weights(), ref.weights()) || !reflect.DeepEqual(got.Records, want.Records) {
		t.Fatal("resumed run differs from the uninterrupted one")
	}
}

// TestDriveBatchLargerThanData names the examples in the error.
func TestDriveBatchLargerThanData(t *testing.T) {
	rec := regressionRecipe(newRegression(5, 2))
	rec.Unit = "sequences"
	if _, err := drive(context.Background(), rec, driveConfig(""), Output{}); err == nil || err.Error() != "batch_size: 8 is larger than the 5 training sequences" {
		t.Fatalf("got %v", err)
	}
}

// TestCheckpointInterval: with a clock that moves one minute per update,
// snapshots come every CheckpointInterval, or every twenty times the last
// snapshot's duration when that is longer; a crash resumes from the last.
func TestCheckpointInterval(t *testing.T) {
	for _, c := range []struct {
		name      string
		interval  time.Duration
		saveCost  time.Duration // how far the clock moves while saving
		wantStart int           // the update the resumed run starts with
	}{
		{"none", 0, 0, 1},
		{"two minutes", 2 * time.Minute, 0, 9},         // saved after 2, 4, 6, 8
		{"slow snapshot", time.Minute, time.Minute, 2}, // after 1, then 1+20
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Epochs: 1, BatchSize: 2, LR: 0.01, Seed: 3, Work: t.TempDir(), CheckpointInterval: c.interval}
			clock := time.Unix(0, 0)
			newTrainer := func(crashAt int) (*Trainer, *int) {
				g := newRegression(100, 2) // 50 updates, no evaluation
				tr := trainer(g, cfg)
				tr.now = func() time.Time { return clock }
				calls, inner := 0, tr.Step
				tr.Step = func(ctx context.Context, b []int, r *rand.Rand) (mat.Tensor, error) {
					calls++
					if calls == crashAt {
						return nil, errors.New("crash")
					}
					clock = clock.Add(time.Minute)
					return inner(ctx, b, r)
				}
				tr.OnSave = func() error { clock = clock.Add(c.saveCost); return nil }
				return tr, &calls
			}
			tr, _ := newTrainer(10)
			if _, err := tr.Run(context.Background()); err == nil {
				t.Fatal("no crash")
			}
			tr, calls := newTrainer(0)
			res, err := tr.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if start := res.Steps - *calls + 1; start != c.wantStart || res.Resumed != (c.wantStart > 1) {
				t.Errorf("resumed at update %d (resumed %v), want %d", start, res.Resumed, c.wantStart)
			}
		})
	}
}
