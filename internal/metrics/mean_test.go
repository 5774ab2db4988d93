package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
)

// TestMeanSettingGolden checks the per-subset mean against scipy
// (testdata/mean_golden.py).
func TestMeanSettingGolden(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/mean_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Pairs []struct {
			Task, Subset string
			Gold, Sys    float64
		}
		Mean map[string]float64
		Avg  float64
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	var ps []ScoredPair
	for _, p := range g.Pairs {
		ps = append(ps, ScoredPair{Task: p.Task, Subset: p.Subset, Sys: p.Sys, Gold: p.Gold})
	}
	res, err := STS(ps)
	if err != nil {
		t.Fatal(err)
	}
	tasks, avg, ok := res.MeanSetting()
	if !ok || len(tasks) != 5 {
		t.Fatalf("mean setting: %d tasks, avg present %v", len(tasks), ok)
	}
	for task, want := range g.Mean {
		if math.Abs(tasks[task]-want) > 1e-9 {
			t.Errorf("%s: mean %v, want %v", task, tasks[task], want)
		}
		// The "all" setting differs from the mean on these data.
		if math.Abs(res.Tasks[task].Spearman-want) < 1e-6 {
			t.Errorf("%s: all and mean agree (%v): the data do not tell them apart", task, want)
		}
	}
	if math.Abs(avg-g.Avg) > 1e-9 {
		t.Errorf("avg %v, want %v", avg, g.Avg)
	}
}

// SubsetMean is the same bits every call: the subsets are summed in name
// order, not in Go's randomised map order (values chosen so that orders
// round differently).
func TestSubsetMeanDeterministic(t *testing.T) {
	t.Parallel()
	tr := TaskResult{Subsets: map[string]Correlation{}}
	for i := 0; i < 12; i++ {
		tr.Subsets[fmt.Sprintf("s%02d", i)] = Correlation{Spearman: 1/float64(i+3) + float64(i%4)*17.3}
	}
	var want float64
	for i := 0; i < 12; i++ {
		want += tr.Subsets[fmt.Sprintf("s%02d", i)].Spearman
	}
	want /= 12
	for i := 0; i < 200; i++ {
		if got := tr.SubsetMean(); got != want {
			t.Fatalf("call %d: %v, want %v (name order)", i, got, want)
		}
	}
}
