package tensor

import "repro/internal/tensor/kernel"

// The one-query (decoding) attention's loops, vectorised across
// independent elements where the CPU has AVX2: axpy4 across the head's
// columns, the dot4 products across keys (eight or sixteen keys at a time,
// their head vectors transposed into columns first). Each lane performs
// the scalar loop's operations in the scalar loop's order, so the results
// are the scalar loops' bit for bit (TestDecodeBits).

var (
	// axpy4Vec is axpy4 on the first n (a positive multiple of 8) columns.
	axpy4Vec func(a *[4]float32, x0, x1, x2, x3, y *float32, n int)
	// dotKeysVec computes out[key] = scale * dot4's chain over q for
	// 8*blocks keys (blocks 1 or 2), key 8*g+l's element i at
	// kt[i*8*blocks + 8*g + l].
	dotKeysVec func(q *float32, dh int, kt *float32, blocks int, scale float32, out *float32)
)

// scoreKeys sets P[j] = scale * (q . key(j)) for the first vis4 keys (a
// multiple of 4) with dot4's arithmetic, sixteen or eight keys at a time
// where it can, and returns how many it did; the caller does the rest as
// before. key(j) is K[base+j*stride:][:len(q)]; kt is scratch of at least
// 16*len(q).
func scoreKeys(q, K []float32, base, stride, vis4 int, scale float32, P, kt []float32) int {
	dh := len(q)
	if dotKeysVec == nil || dh%8 != 0 || vis4 < 8 {
		return 0
	}
	j := 0
	for ; j+16 <= vis4; j += 16 {
		kernel.Transpose(kt, 16, K[base+j*stride:], stride, 8, dh)
		kernel.Transpose(kt[8:], 16, K[base+(j+8)*stride:], stride, 8, dh)
		dotKeysVec(&q[0], dh, &kt[0], 2, scale, &P[j])
	}
	if j+8 <= vis4 {
		kernel.Transpose(kt, 8, K[base+j*stride:], stride, 8, dh)
		dotKeysVec(&q[0], dh, &kt[0], 1, scale, &P[j])
		j += 8
	}
	return j
}
