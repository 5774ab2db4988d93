package infocse

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"testing"
)

// golden is testdata/golden.json, written by testdata/golden.py (numpy,
// scipy's connected_components, scikit-learn's KMeans).
type golden struct {
	Partition []struct {
		Name       string      `json:"name"`
		Vectors    [][]float64 `json:"vectors"`
		K          int         `json:"k"`
		Similarity string      `json:"similarity"`
		Clusters   [][]int     `json:"clusters"`
		Pairs      int         `json:"pairs"`
	} `json:"partition"`
	KMeans []struct {
		Name       string      `json:"name"`
		Points     [][]float64 `json:"points"`
		Init       [][]float64 `json:"init"`
		Labels     []int       `json:"labels"`
		Centers    [][]float64 `json:"centers"`
		Inertia    float64     `json:"inertia"`
		Iterations int         `json:"iterations"`
	} `json:"kmeans"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Partition) == 0 || len(g.KMeans) == 0 {
		t.Fatal("golden file holds no cases")
	}
	return g
}

func f32(rows [][]float64) [][]float32 {
	out := make([][]float32, len(rows))
	for i, r := range rows {
		out[i] = make([]float32, len(r))
		for j, x := range r {
			out[i][j] = float32(x) // exact: the values were float32 in Python
		}
	}
	return out
}

func TestPartitionGolden(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	for _, c := range g.Partition {
		clusters, err := Partition(f32(c.Vectors), c.K, Similarity(c.Similarity))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !reflect.DeepEqual(clusters, c.Clusters) {
			t.Errorf("%s: clusters\n got %v\nwant %v", c.Name, clusters, c.Clusters)
		}
		if got := len(ClusterPairs(clusters)); got != c.Pairs {
			t.Errorf("%s: %d pairs, want %d", c.Name, got, c.Pairs)
		}
	}
}

func TestKMeansGolden(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	for _, c := range g.KMeans {
		pts := make([][]float64, len(c.Points))
		for i, p := range f32(c.Points) {
			pts[i] = make([]float64, len(p))
			for j, x := range p {
				pts[i][j] = float64(x)
			}
		}
		res, err := kmeansFrom(pts, c.Init, 300)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !res.Converged {
			t.Errorf("%s: did not converge in 300 iterations", c.Name)
		}
		if !reflect.DeepEqual(res.Labels, c.Labels) {
			t.Errorf("%s: labels differ from scikit-learn's", c.Name)
		}
		for k := range c.Centers {
			for j := range c.Centers[k] {
				if d := math.Abs(res.Centers[k][j] - c.Centers[k][j]); d > 1e-9 {
					t.Fatalf("%s: center %d[%d] = %v, scikit-learn %v", c.Name, k, j, res.Centers[k][j], c.Centers[k][j])
				}
			}
		}
		if math.Abs(res.Inertia-c.Inertia) > 1e-6*c.Inertia {
			t.Errorf("%s: inertia %v, scikit-learn %v", c.Name, res.Inertia, c.Inertia)
		}
		if res.Iterations != c.Iterations {
			t.Errorf("%s: %d iterations, scikit-learn %d", c.Name, res.Iterations, c.Iterations)
		}
	}
}

// kmeansFrom runs the Lloyd iterations of KMeans from the given centers
// (the golden test compares them with scikit-learn's from the same start):
// a test oracle, so it lives with the test.
func kmeansFrom(x [][]float64, centers [][]float64, maxIter int) (KMeansResult, error) {
	if len(centers) < 1 || len(x) < len(centers) {
		return KMeansResult{}, fmt.Errorf("k-means: %d points for %d clusters", len(x), len(centers))
	}
	c := make([][]float64, len(centers))
	for i := range centers {
		c[i] = append([]float64(nil), centers[i]...)
	}
	return lloyd(x, c, maxIter)
}
