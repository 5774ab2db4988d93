package infocse

import (
	"math/rand/v2"
	"testing"
)

func randomVectors(n, dim int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dim)
		for j := range out[i] {
			out[i][j] = float32(rng.NormFloat64())
		}
	}
	return out
}

// BenchmarkPartition clusters one document of MIND's average length (19.5
// sentences) with BERT-base vectors: the per-document cost of an IDC round
// beside encoding.
func BenchmarkPartition(b *testing.B) {
	vs := randomVectors(20, 768, 1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Partition(vs, 1, Dot); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKMeans is IDC (K-means)'s global clustering at the mini
// profile's scale: 45k sentence vectors of 128 dimensions into 10 clusters,
// 10 Lloyd iterations.
func BenchmarkKMeans(b *testing.B) {
	vs := randomVectors(45000, 128, 2)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := KMeans(vs, 10, Cosine, 1, 10); err != nil {
			b.Fatal(err)
		}
	}
}
