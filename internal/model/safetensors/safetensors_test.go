package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type expTensor struct {
	DType  string    `json:"dtype"`
	Shape  []int     `json:"shape"`
	Values []float64 `json:"values"`
}

func loadExpected(t *testing.T) map[string]expTensor {
	b, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]expTensor
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReadPythonFixtures reads files written by testdata/gen_fixture.py
// (F32, F16 incl. subnormal and max, BF16, F64) and checks every value.
func TestReadPythonFixtures(t *testing.T) {
	exp := loadExpected(t)
	seen := 0
	for _, name := range []string{"f32.safetensors", "mixed.safetensors"} {
		f, err := ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		for n, tensor := range f.Tensors {
			e, ok := exp[n]
			if !ok {
				t.Fatalf("%s: unexpected tensor %q", name, n)
			}
			seen++
			if f.DTypes[n] != e.DType || !(len(e.Shape) == 0 && len(tensor.Shape) == 0 || reflect.DeepEqual(tensor.Shape, e.Shape)) {
				t.Errorf("%s %s: dtype %s shape %v, want %s %v", name, n, f.DTypes[n], tensor.Shape, e.DType, e.Shape)
			}
			if len(tensor.Data) != len(e.Values) {
				t.Fatalf("%s %s: %d values, want %d", name, n, len(tensor.Data), len(e.Values))
			}
			for i, v := range e.Values {
				if tensor.Data[i] != float32(v) {
					t.Errorf("%s %s[%d] = %g, want %g", name, n, i, tensor.Data[i], float32(v))
				}
			}
		}
		if name == "f32.safetensors" && !reflect.DeepEqual(f.Metadata, map[string]string{"format": "pt", "note": "fixture"}) {
			t.Errorf("metadata %v", f.Metadata)
		}
	}
	if seen != len(exp) {
		t.Errorf("read %d tensors, expected %d", seen, len(exp))
	}
}

// TestWriteMatchesReference: re-encoding the F32 fixture gives the same bytes
// the Python writer produced (header layout, padding, data order).
func TestWriteMatchesReference(t *testing.T) {
	want, err := os.ReadFile("testdata/f32.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(want)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, f.Tensors, f.Metadata); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("encoding differs from the reference layout:\n got  %q\n want %q", buf.Bytes(), want)
	}
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ts := map[string]Tensor{}
	for i, shape := range [][]int{{7}, {3, 5}, {2, 3, 4}, {1}} {
		n := 1
		for _, s := range shape {
			n *= s
		}
		d := make([]float32, n)
		for j := range d {
			d[j] = float32(r.NormFloat64())
		}
		ts[string(rune('a'+i))+".weight"] = Tensor{Shape: shape, Data: d}
	}
	ts["special"] = Tensor{Shape: []int{3}, Data: []float32{float32(math.Inf(1)), float32(math.Inf(-1)), -0}}
	p := filepath.Join(t.TempDir(), "m.safetensors")
	if err := WriteFile(p, ts, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Tensors, ts) || f.Metadata["k"] != "v" {
		t.Fatal("round trip changed the tensors")
	}
	b, _ := os.ReadFile(p)
	if n := binary.LittleEndian.Uint64(b); n%8 != 0 {
		t.Errorf("header length %d not 8-aligned", n)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestHalf(t *testing.T) {
	for h, want := range map[uint16]float32{0x3c00: 1, 0xc000: -2, 0x7bff: 65504, 0x0001: 5.9604645e-08, 0x0400: 6.1035156e-05, 0x8000: float32(math.Copysign(0, -1))} {
		if got := halfToFloat(h); got != want || math.Signbit(float64(got)) != math.Signbit(float64(want)) {
			t.Errorf("half %#x = %g, want %g", h, got, want)
		}
	}
	if !math.IsInf(float64(halfToFloat(0x7c00)), 1) || !math.IsNaN(float64(halfToFloat(0x7e00))) {
		t.Error("inf/nan")
	}
}

func TestBadFiles(t *testing.T) {
	good, _ := os.ReadFile("testdata/f32.safetensors")
	hdrLen := binary.LittleEndian.Uint64(good)
	withHeader := func(h string, data []byte) []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
		return append(append(b, h...), data...)
	}
	cases := map[string]struct {
		b    []byte
		want string
	}{
		"short":       {good[:5], "shorter than"},
		"huge header": {binary.LittleEndian.AppendUint64(nil, 1<<40), "exceeds"},
		"truncated":   {good[:8+hdrLen+10], "file truncated"},
		"bad json":    {withHeader(`{"a":`, nil), "header JSON"},
		"dtype":       {withHeader(`{"a":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}`, []byte{1}), `unsupported dtype "I8"`},
		"size":        {withHeader(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)), "needs 8 bytes"},
		"overlap": {withHeader(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 8)),
			"overlap or gap"},
		"trailing": {withHeader(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 8)), "cover 4"},
		"negative": {withHeader(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, make([]byte, 4)), "negative"},
		"unknown":  {withHeader(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}}`, make([]byte, 4)), "unknown field"},
	}
	for name, c := range cases {
		_, err := Parse(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, c.want)
		}
	}
	if _, err := ReadFile("testdata/nope.safetensors"); err == nil || !strings.Contains(err.Error(), "nope.safetensors") {
		t.Errorf("missing file: %v", err)
	}
	if err := Encode(&bytes.Buffer{}, map[string]Tensor{"x": {Shape: []int{2}, Data: []float32{1}}}, nil); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("shape mismatch on write: %v", err)
	}
}
