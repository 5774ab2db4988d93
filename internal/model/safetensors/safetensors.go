// Package safetensors reads and writes the safetensors format
// (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
// length N, N bytes of JSON mapping tensor names to {dtype, shape,
// data_offsets} plus an optional "__metadata__" map of strings, then the
// raw little-endian tensor bytes. Offsets are relative to the end of the
// header.
//
// Write pads the header with spaces to a multiple of 8 bytes, as the
// reference implementation does, and lays tensors out in name order (the
// reference sorts by dtype alignment, then name; with one dtype that is the
// same). Tensors are float32 in memory; Read converts F16, BF16 and F64 to
// float32 and rejects other dtypes with an error naming the tensor. Read
// validates everything a corrupt or hostile file could get wrong (header
// size, overlapping or out-of-range offsets, shape/size mismatch) and never
// panics on bad input.
package safetensors

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
)

// Tensor is a named float32 tensor in row-major order.
type Tensor struct {
	Shape []int
	Data  []float32
}

// File is the content of a safetensors file.
type File struct {
	Tensors  map[string]Tensor
	Metadata map[string]string
	// DTypes records each tensor's dtype on disk (set by Read).
	DTypes map[string]string
}

// Names returns the tensor names, sorted.
func (f *File) Names() []string {
	ns := make([]string, 0, len(f.Tensors))
	for n := range f.Tensors {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// maxHeader bounds the JSON header (the reference uses 100 MB).
const maxHeader = 100 << 20

type entry struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// ReadFile reads a safetensors file.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read safetensors: %w", err)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("read safetensors %s: %w", path, err)
	}
	return f, nil
}

// Parse decodes a safetensors file held in memory.
func Parse(b []byte) (*File, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("file is %d bytes, shorter than the 8-byte header length", len(b))
	}
	n := binary.LittleEndian.Uint64(b[:8])
	if n > maxHeader || n > uint64(len(b)-8) {
		return nil, fmt.Errorf("header length %d exceeds the file (%d bytes) or the 100 MB limit", n, len(b))
	}
	hdr := b[8 : 8+n]
	data := b[8+n:]
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(hdr))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("header JSON: %v", err)
	}
	f := &File{Tensors: map[string]Tensor{}, DTypes: map[string]string{}}
	type span struct {
		name       string
		start, end int64
	}
	var spans []span
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Metadata); err != nil {
				return nil, fmt.Errorf("__metadata__ must map strings to strings: %v", err)
			}
			continue
		}
		var e entry
		d := json.NewDecoder(bytes.NewReader(msg))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil {
			return nil, fmt.Errorf("tensor %q: header entry: %v", name, err)
		}
		size, ok := dtypeSize[e.DType]
		if !ok {
			return nil, fmt.Errorf("tensor %q: unsupported dtype %q (want F32, F16, BF16 or F64)", name, e.DType)
		}
		count := int64(1)
		for _, s := range e.Shape {
			if s < 0 {
				return nil, fmt.Errorf("tensor %q: negative dimension in shape %v", name, e.Shape)
			}
			count *= int64(s)
			if count > int64(len(data)) {
				return nil, fmt.Errorf("tensor %q: shape %v larger than the data section", name, e.Shape)
			}
		}
		start, end := e.Offsets[0], e.Offsets[1]
		if start < 0 || end < start || end > int64(len(data)) {
			return nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] outside the data section (%d bytes)", name, start, end, len(data))
		}
		if end-start != count*int64(size) {
			return nil, fmt.Errorf("tensor %q: shape %v of %s needs %d bytes, data_offsets give %d", name, e.Shape, e.DType, count*int64(size), end-start)
		}
		f.Tensors[name] = Tensor{Shape: e.Shape, Data: decode(e.DType, data[start:end], int(count))}
		f.DTypes[name] = e.DType
		spans = append(spans, span{name, start, end})
	}
	// The reference requires the tensors to tile the data section exactly.
	sort.Slice(spans, func(i, j int) bool {
		return spans[i].start < spans[j].start || (spans[i].start == spans[j].start && spans[i].end < spans[j].end)
	})
	pos := int64(0)
	for _, s := range spans {
		if s.start != pos {
			return nil, fmt.Errorf("tensor %q: data starts at %d, expected %d (overlap or gap)", s.name, s.start, pos)
		}
		pos = s.end
	}
	if pos != int64(len(data)) {
		return nil, fmt.Errorf("data section is %d bytes but tensors cover %d", len(data), pos)
	}
	return f, nil
}

var dtypeSize = map[string]int{"F32": 4, "F16": 2, "BF16": 2, "F64": 8}

func decode(dtype string, b []byte, n int) []float32 {
	out := make([]float32, n)
	le := binary.LittleEndian
	switch dtype {
	case "F32":
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
	case "F64":
		for i := range out {
			out[i] = float32(math.Float64frombits(le.Uint64(b[8*i:])))
		}
	case "BF16":
		for i := range out {
			out[i] = math.Float32frombits(uint32(le.Uint16(b[2*i:])) << 16)
		}
	case "F16":
		for i := range out {
			out[i] = halfToFloat(le.Uint16(b[2*i:]))
		}
	}
	return out
}

// halfToFloat converts IEEE 754 binary16 to float32 exactly (every half is
// representable), including subnormals, infinities and NaN.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// Subnormal: value = mant * 2^-24.
		v := float32(mant) * float32(math.Ldexp(1, -24))
		if sign != 0 {
			v = -v
		}
		return v
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// Encode serialises tensors as F32 with optional metadata.
func Encode(w io.Writer, tensors map[string]Tensor, metadata map[string]string) error {
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		if n == "__metadata__" {
			return fmt.Errorf("write safetensors: tensor name __metadata__ is reserved")
		}
		names = append(names, n)
	}
	sort.Strings(names)
	// Build the header by hand so the key order is deterministic and
	// __metadata__ comes first, as the reference writes it.
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	first := true
	sep := func() {
		if !first {
			hdr.WriteByte(',')
		}
		first = false
	}
	if len(metadata) > 0 {
		m, err := json.Marshal(metadata) // Go sorts map keys
		if err != nil {
			return err
		}
		sep()
		hdr.WriteString(`"__metadata__":`)
		hdr.Write(m)
	}
	var off int64
	for _, n := range names {
		t := tensors[n]
		count := 1
		for _, s := range t.Shape {
			if s < 0 {
				return fmt.Errorf("write safetensors: tensor %q has negative dimension in shape %v", n, t.Shape)
			}
			count *= s
		}
		if count != len(t.Data) {
			return fmt.Errorf("write safetensors: tensor %q has shape %v (%d values) but %d values", n, t.Shape, count, len(t.Data))
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		key, _ := json.Marshal(n)
		e, _ := json.Marshal(entry{DType: "F32", Shape: shape, Offsets: [2]int64{off, off + 4*int64(count)}})
		sep()
		hdr.Write(key)
		hdr.WriteByte(':')
		hdr.Write(e)
		off += 4 * int64(count)
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	var lenb [8]byte
	binary.LittleEndian.PutUint64(lenb[:], uint64(hdr.Len()))
	if _, err := w.Write(lenb[:]); err != nil {
		return err
	}
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for _, n := range names {
		for _, v := range tensors[n].Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) >= 1<<16 {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err := w.Write(buf)
	return err
}

// WriteFile writes tensors to path atomically (see WriteAtomic).
func WriteFile(path string, tensors map[string]Tensor, metadata map[string]string) error {
	return WriteAtomic(path, func(w io.Writer) error { return Encode(w, tensors, metadata) })
}

// WriteAtomic writes a file so that a crash leaves either the old file or
// the new one, never a torn one: write to a temporary file in the same
// directory, fsync it, rename it over path, fsync the directory.
func WriteAtomic(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		// Make the rename itself durable; some filesystems refuse to
		// sync directories, which only weakens durability, not atomicity.
		d.Sync()
		d.Close()
	}
	return nil
}
