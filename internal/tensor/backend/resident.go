package backend

// Resident is implemented by backends whose memory is not the host's (CUDA).
// Operators can keep long-lived operands -- weights above all -- on the
// device between steps instead of copying them on every call:
//
//	if r, ok := backend.Current().(backend.Resident); ok {
//		r.Keep(w)       // upload once; Sgemm calls naming w reuse the device copy
//		...             // optimizer updates w on the host
//		r.Changed(w)    // refresh the device copy before its next use
//		r.Release(w)    // free it when the model is discarded
//	}
//
// A slice is identified by the address of its first element and its length:
// a sub-slice of a kept slice is a different operand and is copied per call.
// A kept slice is referenced by the backend until Release, so its memory is
// never reused for another slice under the same identity.
type Resident interface {
	Keep(x []float32)
	Changed(x []float32)
	Release(x []float32)
}
