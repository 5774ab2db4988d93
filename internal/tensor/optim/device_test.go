package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor"
	"repro/internal/tensor/backend/emudev"
)

// TestClipDeviceGradNorm: clipping the device gradients of placed
// parameters gives ClipGradNorm's norm and scaled gradients bit for bit
// (with accumulation's scaling first, and a parameter without a
// gradient), copying down only the 8-byte sum.
func TestClipDeviceGradNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for _, tc := range []struct {
		name    string
		maxNorm float64
		scale   float32
	}{{"clipped", 1, 1}, {"below the bound", 1e6, 1}, {"measure only", 0, 1}, {"accumulated, clipped", 0.5, 1 / float32(3)}} {
		t.Run(tc.name, func(t *testing.T) {
			sizes := []int{7, 1, 300, 33}
			var host [][]float32
			var leaves []mat.Tensor
			dev := emudev.New().Device()
			for i, n := range sizes {
				w := mat.NewDense[float32](mat.WithShape(n, 1), mat.WithBacking(make([]float32, n)), mat.WithGrad(true))
				leaves = append(leaves, w)
				if i == 1 {
					host = append(host, nil) // no gradient this step
					continue
				}
				g := make([]float32, n)
				for j := range g {
					g[j] = float32(r.NormFloat64()) * float32(1+j%3)
				}
				host = append(host, g)
			}
			tensor.Place(dev, leaves...)
			defer tensor.Unplace(leaves...)
			for i, g := range host {
				if g == nil {
					continue
				}
				// A device gradient: x*g through the graph's Backward.
				x := tensor.New(len(g), 1, g)
				l := tensor.Sum(tensor.Mul(leaves[i], x))
				if err := tensor.Backward(l); err != nil {
					t.Fatal(err)
				}
				tensor.Release(l)
			}
			if tc.scale != 1 {
				for _, g := range host {
					for j := range g {
						g[j] *= tc.scale
					}
				}
				ScaleDeviceGrads(leaves, tc.scale)
			}
			want := ClipGradNorm(host, tc.maxNorm)
			before := dev.Copies()
			got := ClipDeviceGradNorm(dev, leaves, tc.maxNorm)
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("norm %v on the device, %v on the host", got, want)
			}
			if c := dev.Copies().Since(before); c.Up != 0 || c.Down != 1 || c.DownBytes != 8 {
				t.Errorf("clipping copied %v, want the 8-byte sum down", c)
			}
			for i, g := range host {
				d, ok := tensor.DeviceGrad(leaves[i])
				if g == nil {
					if ok {
						t.Fatalf("parameter %d has a device gradient", i)
					}
					continue
				}
				h := make([]float32, len(g))
				dev.Download(h, d, 0, "test")
				for j := range g {
					if math.Float32bits(h[j]) != math.Float32bits(g[j]) {
						t.Fatalf("gradient %d[%d]: %v on the device, %v on the host", i, j, h[j], g[j])
					}
				}
			}
		})
	}
}
