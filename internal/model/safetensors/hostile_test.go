package safetensors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// withHeader builds a file from a header string and a data section.
func withHeader(h string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(b, h...), data...)
}

// TestShapeOverflow: an element count that wraps around int64 (here to 0,
// so that empty data_offsets would match it) is refused.
func TestShapeOverflow(t *testing.T) {
	for _, shape := range []string{"[4,4611686018427387904]", "[4294967296,4294967296]", "[2,2,4611686018427387904]", "[4,9223372036854775807,9223372036854775807,0]"} {
		// "a" gives the data section 4 bytes, so the old per-dimension
		// bound (count <= data bytes) let the first dimension through.
		b := withHeader(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":`+shape+`,"data_offsets":[4,4]}}`, make([]byte, 4))
		if _, err := Parse(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("shape %s: err = %v, want ErrMalformed", shape, err)
		}
	}
}

// TestHeaderTrailingGarbage: the header is one JSON object, padded with
// spaces; anything else after the object is refused.
func TestHeaderTrailingGarbage(t *testing.T) {
	for _, h := range []string{
		`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}xyz`,
		`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}{"b":1}`,
		`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}` + "\x00\x00\x00",
	} {
		if _, err := Parse(withHeader(h, make([]byte, 4))); !errors.Is(err, ErrMalformed) {
			t.Errorf("header %q: err = %v, want ErrMalformed", h, err)
		}
	}
	if _, err := Parse(withHeader(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}   `, make([]byte, 4))); err != nil {
		t.Errorf("space padding refused: %v", err)
	}
}

// TestTrailingData: bytes after the last tensor's data are refused.
func TestTrailingData(t *testing.T) {
	for _, extra := range []int{1, 4, 100} {
		b := withHeader(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4+extra))
		if _, err := Parse(b); !errors.Is(err, ErrTrailing) {
			t.Errorf("%d trailing bytes: err = %v, want ErrTrailing", extra, err)
		}
	}
	// No tensors and a data section.
	if _, err := Parse(withHeader(`{}`, make([]byte, 8))); !errors.Is(err, ErrTrailing) {
		t.Errorf("no tensors, 8 data bytes: %v", err)
	}
}

// manyTensors writes a file of n tensors and returns its path and bytes.
func manyTensors(t *testing.T, n int) (string, []byte) {
	t.Helper()
	ts := map[string]Tensor{}
	for i := 0; i < n; i++ {
		ts[fmt.Sprintf("t%02d", i)] = Tensor{Shape: []int{3}, Data: []float32{1, 2, 3}}
	}
	p := filepath.Join(t.TempDir(), "m.safetensors")
	if err := WriteFile(p, ts, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, b
}

// TestTruncated: a file cut anywhere (in the length, the header or the
// data) says it is truncated, and says the same thing on every run.
func TestTruncated(t *testing.T) {
	p, b := manyTensors(t, 40)
	hdr := int(binary.LittleEndian.Uint64(b))
	for _, cut := range []int{3, 8 + hdr/2, 8 + hdr, 8 + hdr + 1, len(b) - 50, len(b) - 1} {
		if err := os.WriteFile(p, b[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		first := ""
		for run := 0; run < 20; run++ {
			_, err := ReadFile(p)
			if !errors.Is(err, ErrTruncated) {
				t.Fatalf("cut at %d of %d: err = %v, want ErrTruncated", cut, len(b), err)
			}
			if run == 0 {
				first = err.Error()
			} else if err.Error() != first {
				t.Fatalf("cut at %d: run %d says %q, run 0 said %q", cut, run, err, first)
			}
		}
	}
}

// TestOpenReadsOnlyTheHeader: Open describes every tensor without reading
// the data; ReadInto decodes one tensor.
func TestOpenReadsOnlyTheHeader(t *testing.T) {
	p, _ := manyTensors(t, 5)
	r, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := len(r.Names()); got != 5 {
		t.Fatalf("%d names", got)
	}
	info, ok := r.Info("t03")
	if !ok || info.DType != "F32" || len(info.Shape) != 1 || info.Shape[0] != 3 || info.Count() != 3 {
		t.Fatalf("info %+v %v", info, ok)
	}
	dst := make([]float32, 3)
	if err := r.ReadInto("t03", dst); err != nil || dst[2] != 3 {
		t.Fatalf("ReadInto: %v %v", dst, err)
	}
	if err := r.ReadInto("t03", make([]float32, 2)); err == nil {
		t.Fatal("ReadInto accepted a destination of the wrong size")
	}
	if err := r.ReadInto("nope", dst); err == nil {
		t.Fatal("ReadInto accepted an unknown tensor")
	}
}
