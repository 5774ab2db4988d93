package tensor

import (
	"math"
	"testing"
)

func TestExpf(t *testing.T) {
	for x := float32(-87); x < 88.7; x += 0.01953125 {
		want := math.Exp(float64(x))
		if got := float64(expf(x)); math.Abs(got-want) > 3e-7*want {
			t.Fatalf("expf(%v) = %v, want %v", x, got, want)
		}
	}
	if expf(-200) != 0 || !math.IsInf(float64(expf(100)), 1) || expf(0) != 1 {
		t.Fatal("expf edge cases")
	}
}

func TestErff(t *testing.T) {
	for x := float32(-6); x < 6; x += 0.001 {
		want := math.Erf(float64(x))
		if got := float64(erff(x)); math.Abs(got-want) > 5e-7 {
			t.Fatalf("erff(%v) = %v, want %v", x, got, want)
		}
	}
}

func TestTanhf(t *testing.T) {
	for x := float32(-12); x < 12; x += 0.0009765625 {
		want := math.Tanh(float64(x))
		if got := float64(tanhf(x)); math.Abs(got-want) > 2e-7*max(1, math.Abs(want)) {
			t.Fatalf("tanhf(%v) = %v, want %v", x, got, want)
		}
	}
	if tanhf(0) != 0 || tanhf(100) != 1 || tanhf(-100) != -1 || !math.IsNaN(float64(tanhf(float32(math.NaN())))) {
		t.Fatal("tanhf edge cases")
	}
}
