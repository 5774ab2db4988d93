package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/emudev"
)

// TestDeviceOneQueryAttention: Attention with one query and no dropout
// (decoding) runs on the device with the CPU's one-query arithmetic: dot4's
// running sums for the keys below vis&^3 (sixteen or eight at a time with
// AVX2 on the host), dot's lanes for the rest, the bias, the softmax and
// axpy4/axpy; outputs and gradients agree bit for bit, nothing falls back.
func TestDeviceOneQueryAttention(t *testing.T) {
	needUnfusedDev(t)
	type shape struct {
		B, H, dh, klen int
		lens           []int
		causal         bool
		bias           int // 0 none, 1 shared, 2 per sequence
		scale          float32
	}
	shapes := []shape{
		{B: 2, H: 2, dh: 4, klen: 5, lens: []int{5, 3}},
		{B: 3, H: 1, dh: 3, klen: 7, lens: []int{0, 1, 7}, scale: 1},
		{B: 2, H: 2, dh: 16, klen: 37, lens: []int{37, 22}},             // AVX2 blocks of 16 and 8 keys
		{B: 2, H: 3, dh: 8, klen: 13, lens: []int{13, 9}, causal: true}, // one visible key
		{B: 2, H: 2, dh: 8, klen: 19, lens: []int{19, 11}, bias: 1, scale: 1},
		{B: 3, H: 2, dh: 5, klen: 10, lens: []int{10, 4, 7}, bias: 2},
		{B: 2, H: 2, dh: 8, klen: 6, lens: nil},
	}
	var cases []devCase
	for _, s := range shapes {
		D := s.H * s.dh
		sh := [][2]int{{s.B, D}, {s.B * s.klen, D}, {s.B * s.klen, D}}
		switch s.bias {
		case 1:
			sh = append(sh, [2]int{s.H, s.klen})
		case 2:
			sh = append(sh, [2]int{s.B * s.H, s.klen})
		}
		name := fmt.Sprintf("B%d H%d dh%d klen%d lens%v causal=%v bias=%d", s.B, s.H, s.dh, s.klen, s.lens, s.causal, s.bias)
		cases = append(cases, devCase{name, leaves(sh...), func(xs []mat.Tensor, _ *rand.Rand) mat.Tensor {
			spec := AttentionSpec{Batch: s.B, Heads: s.H, QLen: 1, KLen: s.klen, KeyLens: s.lens, Causal: s.causal, Scale: s.scale}
			if s.bias > 0 {
				spec.Bias = xs[3]
			}
			return Attention(xs[0], xs[1], xs[2], spec)
		}})
	}
	checkDeviceCases(t, cases)
}

// TestDecodeAttention: decoding steps against caches in device memory
// (DecodeAttention writing each step's keys and values at the sequences'
// own positions, GatherAt with positions on the device) give, step after
// step, what Attention's one-query path gives over host caches, bit for
// bit; a Select (Gather) keeps the chosen sequences' caches and lengths;
// a step copies nothing; no buffer is left.
func TestDecodeAttention(t *testing.T) {
	needUnfusedDev(t)
	const B, H, dh, capacity = 3, 2, 8, 9
	D := H * dh
	r := rand.New(rand.NewPCG(7, 8))
	table := randLeaf(r, 20, D) // stands for a position table
	hostTable := New(20, D, Data(table))
	start := []int{2, 0, 5} // tokens each sequence holds already
	hk, hv := make([]float32, B*capacity*D), make([]float32, B*capacity*D)
	for i := range hk {
		hk[i], hv[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	be := emudev.New()
	dev := be.Device()
	Place(dev, table)
	kc, vc := NewCache(dev, B, capacity, D), NewCache(dev, B, capacity, D)
	dev.Upload(kc.buf, 0, hk, "test")
	dev.Upload(vc.buf, 0, hv, "test")
	pos := NewInts(dev, start, "test")
	lens := append([]int(nil), start...)
	seqs := []int{0, 1, 2} // host rows of the device's sequences
	for step := 0; step < 4; step++ {
		n := len(seqs)
		q, k, v := randLeaf(r, n, D), randLeaf(r, n, D), randLeaf(r, n, D)
		// The host: write the rows, attend over the caches.
		keyLens := make([]int, n)
		for i, s := range seqs {
			at := (s*capacity + lens[s]) * D
			copy(hk[at:at+D], Data(k)[i*D:(i+1)*D])
			copy(hv[at:at+D], Data(v)[i*D:(i+1)*D])
			keyLens[i] = lens[s] + 1
		}
		ck, cv := make([]float32, n*capacity*D), make([]float32, n*capacity*D)
		for i, s := range seqs {
			copy(ck[i*capacity*D:], hk[s*capacity*D:(s+1)*capacity*D])
			copy(cv[i*capacity*D:], hv[s*capacity*D:(s+1)*capacity*D])
		}
		hpos := make([]int, n)
		for i, s := range seqs {
			hpos[i] = lens[s]
		}
		wantX := Data(Gather(hostTable, hpos))
		want := Data(Attention(q, New(n*capacity, D, ck), New(n*capacity, D, cv),
			AttentionSpec{Batch: n, Heads: H, QLen: 1, KLen: capacity, KeyLens: keyLens}))
		// The device.
		dq, dk, dvv := Upload(dev, n, D, Data(q)), Upload(dev, n, D, Data(k)), Upload(dev, n, D, Data(v))
		before := dev.Copies()
		x := GatherAt(table, pos)
		y := DecodeAttention(dq, dk, dvv, kc, vc, pos, DecodeSpec{Heads: H, Lens: pos, LenAdd: 1})
		pos.Add(1)
		if c := dev.Copies().Since(before); c.Up+c.Down != 0 {
			t.Fatalf("step %d copied: %v", step, c)
		}
		bitsEqual(t, fmt.Sprintf("step %d position rows", step), Data(x), wantX)
		bitsEqual(t, fmt.Sprintf("step %d attention", step), Data(y), want)
		Release(x)
		Release(y)
		for _, u := range []mat.Tensor{dq, dk, dvv} {
			freeUpload(u)
		}
		for _, s := range seqs {
			lens[s]++
		}
		if step == 1 { // sequence 1 ends; 2 and 0 go on, in that order
			seqs = []int{2, 0}
			rows := NewInts(dev, []int{2, 0}, "test")
			kc.Gather(rows)
			vc.Gather(rows)
			pos.Gather(rows)
			rows.Free()
			if got := pos.Download("test"); got[0] != lens[2] || got[1] != lens[0] {
				t.Fatalf("positions after the select: %v, want %d %d", got, lens[2], lens[0])
			}
		}
	}
	kc.Free()
	vc.Free()
	pos.Free()
	Discard(table)
	DropIntCache(dev)
	if n, bytes := be.Dev().Live(); n != 0 {
		t.Errorf("%d device buffers (%d bytes) still allocated", n, bytes)
	}
}

// freeUpload frees a value made by Upload (a test's input).
func freeUpload(x mat.Tensor) {
	n := x.(*node)
	n.dv.dev.Free(n.dv.buf)
	n.dv = nil
	devices.Add(-1)
}

// TestDecodeMisuse: shapes that disagree are programming errors with a
// message.
func TestDecodeMisuse(t *testing.T) {
	dev := emudev.New().Device()
	kc, vc := NewCache(dev, 2, 4, 6), NewCache(dev, 2, 4, 6)
	defer kc.Free()
	defer vc.Free()
	lens := NewInts(dev, []int{1, 2}, "test")
	defer lens.Free()
	q := Upload(dev, 2, 6, make([]float32, 12))
	defer freeUpload(q)
	mustPanic(t, "heads", func() { DecodeAttention(q, nil, nil, kc, vc, nil, DecodeSpec{Heads: 4, Lens: lens}) })
	mustPanic(t, "lengths", func() { DecodeAttention(q, nil, nil, kc, vc, nil, DecodeSpec{Heads: 2}) })
	mustPanic(t, "written together", func() { DecodeAttention(q, q, nil, kc, vc, lens, DecodeSpec{Heads: 2, Lens: lens}) })
	mustPanic(t, "bias", func() {
		DecodeAttention(q, nil, nil, kc, vc, nil, DecodeSpec{Heads: 2, Lens: lens, Bias: Upload(dev, 2, 3, make([]float32, 6))})
	})
	mustPanic(t, "host memory", func() { CacheOf(New(8, 6, nil), 2, 4) })
	mustPanic(t, "logits in host memory", func() { DrawTokens(New(2, 3, nil), backend.Sampling{Greedy: true}, NewStreams(dev, nil)) })
}
