package tensortest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
)

// Digest is a SHA-256 over the bits of the given float32 slices, in order:
// two runs that agree on it agree bit for bit (losses, weights).
func Digest(xs ...[]float32) string {
	h := sha256.New()
	var buf [4]byte
	for _, x := range xs {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(x)))
		h.Write(n[:])
		for _, v := range x {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
			h.Write(buf[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
