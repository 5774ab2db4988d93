//go:build cuda

package cuda

import (
	"fmt"
	"math"

	"gorgonia.org/cu"

	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/cuda/ptx"
)

// The third slice of Device's kernels (kernels.h's third part): decoding
// on the device. Each reads and writes device memory only.

func (d *Device) DecodeAttention(q, k, v backend.Buffer, heads, klen int, lens backend.Buffer, lenAdd int, causal bool, scale float32, bias backend.Buffer, biasRows int, probs, out backend.Buffer) {
	B := d.buf(lens).n
	D := d.buf(q).n / max(B, 1)
	if B == 0 || heads < 1 || D*B != d.buf(q).n || D%heads != 0 {
		panic(fmt.Sprintf("cuda: DecodeAttention: %d query values for %d sequences of %d heads", d.buf(q).n, B, heads))
	}
	d.same("DecodeAttention keys", B*klen*D, k, v)
	d.same("DecodeAttention probs", B*heads*klen, probs)
	d.same("DecodeAttention out", B*D, out)
	bp, br := ptrArg(0), 1
	if bias != nil {
		if biasRows < 1 || d.buf(bias).n != biasRows*klen {
			panic(fmt.Sprintf("cuda: DecodeAttention: a bias of %d values, %d rows of %d", d.buf(bias).n, biasRows, klen))
		}
		bp, br = d.ptr(bias), biasRows
	}
	d.launch(func() cu.Function { return d.b.fns.decodeAttention }, ptx.DecodeAttention, B*heads,
		d.ptr(q), d.ptr(k), d.ptr(v), intArg(heads), intArg(D), intArg(klen), d.ptr(lens), intArg(lenAdd), flag(causal),
		floatArg(scale), bp, intArg(br), d.ptr(probs), d.ptr(out), intArg(B*heads))
}

func (d *Device) WriteRowsAt(src backend.Buffer, cols int, pos backend.Buffer, cap int, dst backend.Buffer) {
	n := d.buf(pos).n
	d.same("WriteRowsAt src", n*cols, src)
	d.same("WriteRowsAt dst", n*cap*cols, dst)
	d.launch(func() cu.Function { return d.b.fns.writeRowsAt }, ptx.WriteRowsAt, n*cols,
		d.ptr(src), intArg(cols), d.ptr(pos), intArg(cap), d.ptr(dst), intArg(n*cols))
}

func (d *Device) AddInts(x backend.Buffer, c int) {
	n := d.buf(x).n
	d.launch(func() cu.Function { return d.b.fns.addInts }, ptx.AddInts, n, d.ptr(x), intArg(c), intArg(n))
}

func (d *Device) DecodeBucketBias(w backend.Buffer, heads int, rb, pos backend.Buffer, cap int, y backend.Buffer) {
	n := d.buf(pos).n
	d.same("DecodeBucketBias", n*heads*cap, y)
	d.atLeast("DecodeBucketBias buckets", cap, rb)
	d.launch(func() cu.Function { return d.b.fns.decodeBucketBias }, ptx.DecodeBucketBias, n*heads*cap,
		d.ptr(w), intArg(heads), d.ptr(rb), d.ptr(pos), intArg(cap), d.ptr(y), intArg(n*heads*cap))
}

func (d *Device) SampleRows(logits backend.Buffer, rows, vocab int, s backend.Sampling, states, cands, out backend.Buffer) {
	cc := s.CandCap(vocab)
	d.atLeast("SampleRows logits", rows*vocab, logits)
	d.atLeast("SampleRows states", 4*rows, states)
	d.atLeast("SampleRows candidates", 4*rows*cc, cands)
	d.atLeast("SampleRows out", rows, out)
	checkSize("SampleRows", rows*vocab, 4*rows*cc)
	bits := math.Float64bits(s.TopP)
	d.launch(func() cu.Function { return d.b.fns.sampleRows }, ptx.SampleRows, rows,
		d.ptr(logits), intArg(rows), intArg(vocab), floatArg(s.InvT), flag(s.Greedy), intArg(s.TopK),
		u32(bits>>32), u32(bits), flag(backend.GoExpFMA), d.ptr(states), d.ptr(cands), intArg(cc), d.ptr(out))
}
