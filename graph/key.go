package graph

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"

	"github.com/zclconf/go-cty/cty"
	"github.com/zeebo/blake3"
)

// CanonicalParams serialises a parameter value to canonical JSON: object and
// map keys sorted, no whitespace, and numbers written in a form that depends
// only on the value a stage can observe. Integers are written exactly;
// other numbers are rounded to float64 (what the stage's Params struct
// decodes them into) and written in their shortest round-trip form, so
// 0.1 parsed by HCL at 512-bit precision and cty.NumberFloatVal(0.1) give
// the same key. A null or absent parameter object is "{}".
//
// ctyjson.Marshal also sorts object attributes, but it writes numbers with
// their full big.Float precision, which would make the key depend on how a
// number was produced rather than on its value.
func CanonicalParams(v cty.Value) ([]byte, error) {
	if v == cty.NilVal || v.IsNull() {
		return []byte("{}"), nil
	}
	var b bytes.Buffer
	if err := writeCanonical(&b, v, nil); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, v cty.Value, path cty.Path) error {
	if v.IsMarked() {
		v, _ = v.Unmark()
	}
	if !v.IsKnown() {
		return fmt.Errorf("parameter %s is not known before the run", formatPath(path))
	}
	if v.IsNull() {
		b.WriteString("null")
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		s, _ := json.Marshal(v.AsString())
		b.Write(s)
	case t == cty.Bool:
		b.WriteString(strconv.FormatBool(v.True()))
	case t == cty.Number:
		s, err := canonicalNumber(v.AsBigFloat())
		if err != nil {
			return fmt.Errorf("parameter %s: %v", formatPath(path), err)
		}
		b.WriteString(s)
	case t.IsListType() || t.IsSetType() || t.IsTupleType():
		b.WriteByte('[')
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			_, ev := it.Element()
			if err := writeCanonical(b, ev, append(path, cty.IndexStep{Key: cty.NumberIntVal(int64(i))})); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case t.IsObjectType() || t.IsMapType():
		m := v.AsValueMap()
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			ks, _ := json.Marshal(k)
			b.Write(ks)
			b.WriteByte(':')
			if err := writeCanonical(b, m[k], append(path, cty.GetAttrStep{Name: k})); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("parameter %s has type %s, which cannot be part of a cache key", formatPath(path), t.FriendlyName())
	}
	return nil
}

func canonicalNumber(f *big.Float) (string, error) {
	if f.IsInf() {
		return "", fmt.Errorf("infinite number")
	}
	if f.IsInt() {
		return f.Text('f', 0), nil
	}
	x, _ := f.Float64()
	return strconv.FormatFloat(x, 'g', -1, 64), nil
}

func formatPath(p cty.Path) string {
	if len(p) == 0 {
		return "object"
	}
	var b bytes.Buffer
	for _, s := range p {
		switch s := s.(type) {
		case cty.GetAttrStep:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Name)
		case cty.IndexStep:
			if s.Key.Type() == cty.Number {
				bf := s.Key.AsBigFloat()
				fmt.Fprintf(&b, "[%s]", bf.Text('f', 0))
			} else {
				fmt.Fprintf(&b, "[%q]", s.Key.AsString())
			}
		}
	}
	return b.String()
}

// keyDoc is what a stage key hashes. Field order is fixed by the struct and
// encoding/json sorts map keys, so the encoding is canonical.
type keyDoc struct {
	Scheme  string            `json:"scheme"`
	Type    string            `json:"type"`
	Version int               `json:"version"`
	Params  json.RawMessage   `json:"params"`
	Inputs  map[string]string `json:"inputs"`
	Seed    *int64            `json:"seed,omitempty"`
	// Backend is the tensor backend family whose arithmetic a tensor
	// stage's output comes from (cpu, openblas, cuda): their bits differ,
	// so their results are different cache entries.
	Backend string `json:"backend,omitempty"`
}

// Backends are the tensor backend families a key can name. "emu" (the
// emulated device, internal/tensor/backend/emudev) computes the CPU's bits
// where Go does not fuse multiply-adds (amd64 below GOAMD64=v3) but is a
// family of its own: elsewhere its never-fused kernels and the CPU's fused
// operators differ, and a run on it is made to watch the device path (its
// copies), which a cpu entry would skip; --any-backend serves either from
// the other.
var Backends = []string{"cpu", "openblas", "cuda", "emu"}

// keyScheme changes whenever the key derivation changes, so old cache entries
// are never mistaken for new ones.
const keyScheme = "repro-key-v1"

// Key is the cache key of n: the one place that says what a key holds
// (ARCHITECTURE.md, runner's doc and docs/using.md link here).
//
//	key = BLAKE3(scheme, type name, type version, canonical parameters,
//	             input port -> input artifact DIGEST,
//	             backend family if Type.Tensor, seed if Type.Seeded)
//
// Why each part is what it is:
//
//   - Canonical parameters are the complete parameter object (defaults
//     filled by the dsl) as JSON with sorted keys and numbers normalised to
//     what the stage decodes (CanonicalParams), so formatting, comments,
//     attribute order and how a number was written never change a key. A
//     parameter added to a type later (tag key:"added" in its Params struct,
//     its default reproducing the old behaviour) is left out while it has
//     its default (registry), so adding it re-runs nothing.
//   - Input digests, not upstream keys: an upstream that re-runs and writes
//     the same bytes leaves n cached (early cut-off). Files outside the store
//     that a stage reads (registry.StageType.Externals: a vectors file, a
//     checkpoint directory, the system's WordNet) enter as inputs named
//     "@NAME" by their content (runner, store.HashPath), so a changed file
//     re-runs the stage.
//   - The backend family (cpu, openblas, cuda) of a Tensor type is the one
//     the run declares, never what the host has, so a coordinator and a
//     cluster job compute the same key; their bits differ, so their results
//     are different entries.
//   - The node ID is deliberately absent: renaming a stage does not
//     invalidate it.
func Key(n *Node, inputDigests map[string]string, backend string) (string, error) {
	if n.Type == nil {
		return "", fmt.Errorf("node %q has no stage type", n.ID)
	}
	p, err := CanonicalParams(n.Params)
	if err != nil {
		return "", fmt.Errorf("node %q: %v", n.ID, err)
	}
	return KeyOf(n, p, inputDigests, backend), nil
}

// KeyOf is Key for parameters already in canonical form (CanonicalParams),
// for callers that keep them (provenance records them too).
func KeyOf(n *Node, canonParams []byte, inputDigests map[string]string, backend string) string {
	d := keyDoc{Scheme: keyScheme, Type: n.Type.Name, Version: n.Type.Version, Params: canonParams, Inputs: inputDigests}
	if d.Inputs == nil {
		d.Inputs = map[string]string{}
	}
	if n.Type.Seeded {
		s := n.Seed
		d.Seed = &s
	}
	if n.Type.Tensor {
		if backend == "" {
			backend = "cpu"
		}
		d.Backend = backend
	}
	buf, _ := json.Marshal(d) // cannot fail: plain strings, ints and valid raw JSON
	sum := blake3.Sum256(buf)
	return hex.EncodeToString(sum[:])
}
