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
// float32 and rejects other dtypes with an error naming the tensor. Open
// reads only the header and validates everything a corrupt or hostile file
// could get wrong (header size and JSON, element counts with checked
// arithmetic, overlapping or out-of-range offsets, shape/size mismatch, a
// truncated file, bytes after the data) before any tensor is read; the
// errors wrap ErrTruncated, ErrTrailing or ErrMalformed. ReadInto then
// reads one tensor at a time. Nothing panics on bad input (FuzzParse).
package safetensors

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
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

// Errors a hostile or damaged file gets, matched with errors.Is. Every
// error also names the file (ReadFile, Open) and, where there is one, the
// tensor.
var (
	// ErrTruncated: the file ends before the data its header describes.
	ErrTruncated = errors.New("file truncated")
	// ErrTrailing: bytes follow the last tensor's data.
	ErrTrailing = errors.New("trailing bytes after the tensor data")
	// ErrMalformed: anything else the format forbids (header JSON, dtype,
	// shape, offsets).
	ErrMalformed = errors.New("not a valid safetensors file")
)

type entry struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// Info describes one tensor as the header gives it.
type Info struct {
	DType string
	Shape []int
	// Offset is the tensor's first byte in the file, Size its byte length.
	Offset, Size int64
}

// Count is the number of elements (checked against overflow by Open).
func (i Info) Count() int { return int(i.Size) / dtypeSize[i.DType] }

// Reader is an opened safetensors file whose header has been read and
// validated; tensor data is read on demand (ReadInto), so a model loads
// without ever holding the file's bytes, and ignored tensors are never
// read.
type Reader struct {
	path     string
	r        io.ReaderAt
	closer   io.Closer
	infos    map[string]Info
	Metadata map[string]string
	buf      []byte // ReadInto's chunk, reused across tensors
}

// Open reads and validates path's header. The file stays open until Close.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read safetensors: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read safetensors: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("read safetensors %s: not a regular file: %w", path, ErrMalformed)
	}
	r, err := NewReader(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read safetensors %s: %w", path, err)
	}
	r.path, r.closer = path, f
	return r, nil
}

// NewReader reads and validates the header of the size bytes of r.
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	var lenb [8]byte
	if size < 8 {
		return nil, fmt.Errorf("file is %d bytes, shorter than the 8-byte header length: %w", size, ErrTruncated)
	}
	if _, err := r.ReadAt(lenb[:], 0); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(lenb[:])
	if n > maxHeader {
		return nil, fmt.Errorf("header length %d exceeds the 100 MB limit: %w", n, ErrMalformed)
	}
	if n > uint64(size-8) {
		return nil, fmt.Errorf("header length %d exceeds the file (%d bytes): %w", n, size, ErrTruncated)
	}
	hdr := make([]byte, n)
	// A reader may answer a read of 0 bytes at its end with io.EOF.
	if _, err := r.ReadAt(hdr, 8); err != nil && n > 0 {
		return nil, err
	}
	infos, meta, err := parseHeader(hdr, 8+int64(n), size-8-int64(n))
	if err != nil {
		return nil, err
	}
	return &Reader{r: r, infos: infos, Metadata: meta}, nil
}

// parseHeader validates the header against a data section of dataLen
// bytes starting at file offset base. Tensors are checked in name order
// so that a bad file gets the same error on every run.
func parseHeader(hdr []byte, base, dataLen int64) (map[string]Info, map[string]string, error) {
	var raw map[string]json.RawMessage
	// Unmarshal, unlike a Decoder, refuses anything but white space after
	// the object: the reference pads with spaces only.
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, nil, fmt.Errorf("header JSON: %v: %w", err, ErrMalformed)
	}
	if raw == nil {
		return nil, nil, fmt.Errorf("header JSON is null, not an object: %w", ErrMalformed)
	}
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	sort.Strings(names)
	infos := make(map[string]Info, len(raw))
	var meta map[string]string
	type span struct {
		name       string
		start, end int64
	}
	spans := make([]span, 0, len(raw))
	for _, name := range names {
		msg := raw[name]
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &meta); err != nil {
				return nil, nil, fmt.Errorf("__metadata__ must map strings to strings: %v: %w", err, ErrMalformed)
			}
			continue
		}
		var e entry
		d := json.NewDecoder(bytes.NewReader(msg))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil {
			return nil, nil, fmt.Errorf("tensor %q: header entry: %v: %w", name, err, ErrMalformed)
		}
		size, ok := dtypeSize[e.DType]
		if !ok {
			return nil, nil, fmt.Errorf("tensor %q: unsupported dtype %q (want F32, F16, BF16 or F64): %w", name, e.DType, ErrMalformed)
		}
		// Checked arithmetic: a product that wraps (to 0, say) must not
		// pass for a small tensor.
		nbytes := int64(size)
		for _, s := range e.Shape {
			if s < 0 {
				return nil, nil, fmt.Errorf("tensor %q: negative dimension in shape %v: %w", name, e.Shape, ErrMalformed)
			}
			if s != 0 && nbytes > math.MaxInt64/int64(s) {
				return nil, nil, fmt.Errorf("tensor %q: shape %v: element count overflows: %w", name, e.Shape, ErrMalformed)
			}
			nbytes *= int64(s)
		}
		start, end := e.Offsets[0], e.Offsets[1]
		if start < 0 || end < start {
			return nil, nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] are not an interval: %w", name, start, end, ErrMalformed)
		}
		if end-start != nbytes {
			return nil, nil, fmt.Errorf("tensor %q: shape %v of %s needs %d bytes, data_offsets give %d: %w", name, e.Shape, e.DType, nbytes, end-start, ErrMalformed)
		}
		infos[name] = Info{DType: e.DType, Shape: e.Shape, Offset: base + start, Size: nbytes}
		spans = append(spans, span{name, start, end})
	}
	// The reference requires the tensors to tile the data section exactly.
	sort.Slice(spans, func(i, j int) bool {
		a, b := spans[i], spans[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.end != b.end {
			return a.end < b.end
		}
		return a.name < b.name
	})
	pos := int64(0)
	for _, s := range spans {
		if s.start != pos {
			return nil, nil, fmt.Errorf("tensor %q: data starts at %d, expected %d (overlap or gap): %w", s.name, s.start, pos, ErrMalformed)
		}
		pos = s.end
	}
	switch {
	case pos > dataLen:
		return nil, nil, fmt.Errorf("the header describes %d data bytes, the file holds %d: %w", pos, dataLen, ErrTruncated)
	case pos < dataLen:
		return nil, nil, fmt.Errorf("data section is %d bytes but tensors cover %d: %w", dataLen, pos, ErrTrailing)
	}
	return infos, meta, nil
}

// Names returns the tensor names, sorted.
func (r *Reader) Names() []string {
	ns := make([]string, 0, len(r.infos))
	for n := range r.infos {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// Info describes tensor name.
func (r *Reader) Info(name string) (Info, bool) {
	i, ok := r.infos[name]
	return i, ok
}

// Path is the file's path ("" for NewReader).
func (r *Reader) Path() string { return r.path }

// Close closes the file.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// chunk bounds the bytes ReadInto holds at once.
const chunk = 1 << 20

// ReadInto decodes tensor name into dst, which must hold exactly its
// elements; it reads the tensor's bytes in chunks of at most 1 MB through
// one buffer, so the only memory it takes is dst's. A Reader is not safe
// for concurrent ReadInto calls.
func (r *Reader) ReadInto(name string, dst []float32) error {
	info, ok := r.infos[name]
	if !ok {
		return fmt.Errorf("no tensor %q", name)
	}
	size := int64(dtypeSize[info.DType])
	if int64(len(dst))*size != info.Size {
		return fmt.Errorf("tensor %q has %d elements, destination holds %d", name, info.Size/size, len(dst))
	}
	if int64(cap(r.buf)) < min(info.Size, chunk) {
		r.buf = make([]byte, min(info.Size, chunk))
	}
	buf := r.buf[:min(info.Size, chunk)]
	per := int64(len(buf)) / size
	for done := int64(0); done < int64(len(dst)); done += per {
		n := min(per, int64(len(dst))-done)
		b := buf[:n*size]
		if _, err := r.r.ReadAt(b, info.Offset+done*size); err != nil {
			if errors.Is(err, io.EOF) {
				// The file shrank after Open.
				err = fmt.Errorf("tensor %q: %w", name, ErrTruncated)
			}
			return fmt.Errorf("read safetensors %s: %w", r.path, err)
		}
		decodeInto(info.DType, b, dst[done:done+n])
	}
	return nil
}

// ReadFile reads a safetensors file.
func ReadFile(path string) (*File, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.readAll()
}

// Parse decodes a safetensors file held in memory.
func Parse(b []byte) (*File, error) {
	r, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	return r.readAll()
}

func (r *Reader) readAll() (*File, error) {
	f := &File{Tensors: make(map[string]Tensor, len(r.infos)), DTypes: make(map[string]string, len(r.infos)), Metadata: r.Metadata}
	for name, info := range r.infos {
		t := Tensor{Shape: info.Shape, Data: make([]float32, info.Count())}
		if err := r.ReadInto(name, t.Data); err != nil {
			return nil, err
		}
		f.Tensors[name] = t
		f.DTypes[name] = info.DType
	}
	return f, nil
}

var dtypeSize = map[string]int{"F32": 4, "F16": 2, "BF16": 2, "F64": 8}

func decodeInto(dtype string, b []byte, out []float32) {
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
