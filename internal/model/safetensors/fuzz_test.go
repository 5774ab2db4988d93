package safetensors

import (
	"bytes"
	"errors"
	"math"
	"os"
	"reflect"
	"testing"
)

// FuzzParse: no input panics or allocates beyond its own size; every
// refusal wraps one of the package's errors; what parses re-encodes (as
// F32) and parses to the same tensors.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/f32.safetensors", "testdata/mixed.safetensors"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrTrailing) {
				t.Fatalf("error of no known kind: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := Encode(&buf, file.Tensors, file.Metadata); err != nil {
			if _, reserved := file.Tensors["__metadata__"]; !reserved {
				t.Fatalf("re-encode: %v", err)
			}
			return
		}
		back, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		for name, want := range file.Tensors {
			got := back.Tensors[name]
			if len(got.Shape) != len(want.Shape) || (len(want.Shape) > 0 && !reflect.DeepEqual(got.Shape, want.Shape)) {
				t.Fatalf("tensor %q: shape %v, want %v", name, got.Shape, want.Shape)
			}
			for i := range want.Data {
				if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
					t.Fatalf("tensor %q[%d]: %v, want %v", name, i, got.Data[i], want.Data[i])
				}
			}
		}
	})
}
