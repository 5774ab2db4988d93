package t5

import "math"

// Bucket is T5's relative position bucket of a key at relative position
// rel = key position - query position (transformers'
// _relative_position_bucket): bidirectional (the encoder) gives half the
// buckets to keys after the query; causal (the decoder) only looks back.
// Within a half, distances below half its buckets have a bucket each; the
// rest share logarithmically sized buckets up to maxDistance, the last
// bucket holding everything beyond. The logarithm is computed in float32,
// as transformers computes it, so the boundary distances (16, 32, 64 with
// the defaults) fall in the same bucket.
func Bucket(rel int, bidirectional bool, numBuckets, maxDistance int) int {
	b := 0
	if bidirectional {
		numBuckets /= 2
		if rel > 0 {
			b += numBuckets
		}
		if rel < 0 {
			rel = -rel
		}
	} else {
		rel = -min(rel, 0)
	}
	maxExact := numBuckets / 2
	if rel < maxExact {
		return b + rel
	}
	ratio := float32(rel) / float32(maxExact)
	lg := float32(math.Log(float64(ratio)))
	den := float32(math.Log(float64(maxDistance) / float64(maxExact)))
	large := maxExact + int(lg/den*float32(numBuckets-maxExact))
	return b + min(large, numBuckets-1)
}

// buckets returns the bucket of every (query, key) pair of a q x k grid,
// row-major, for queries at positions qOff..qOff+q-1 and keys at 0..k-1.
func (c Config) buckets(q, k, qOff int, bidirectional bool) []int {
	out := make([]int, q*k)
	for i := 0; i < q; i++ {
		for j := 0; j < k; j++ {
			out[i*k+j] = Bucket(j-(i+qOff), bidirectional, c.RelBuckets, c.RelMaxDistance)
		}
	}
	return out
}
