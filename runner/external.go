package runner

import (
	"context"
	"fmt"
	"path/filepath"

	"repro/graph"
	"repro/store"
)

// externalPrefix marks an external input among a node's input digests
// ("@path"): port names are identifiers, so the two never collide, and a
// stage type without externals keeps its keys.
const externalPrefix = "@"

// ExternalInputs hashes the files outside the store that n's stage reads
// (its type's Externals hook) and returns them as input records keyed
// "@NAME" (the key's input name), the file's absolute path in Output. A
// cluster job calls it on its own store (opened without the index) to key
// what it reads itself.
func ExternalInputs(ctx context.Context, st *store.Store, n *graph.Node) (map[string]store.LastInput, error) {
	return externals(ctx, st, n)
}

// externals is ExternalInputs.
func externals(ctx context.Context, st *store.Store, n *graph.Node) (map[string]store.LastInput, error) {
	if n.Type.Externals == nil {
		return nil, nil
	}
	params, err := n.Type.DecodeParams(n.Params)
	if err != nil {
		return nil, err
	}
	if err := n.Type.ValidateParams(params); err != nil {
		return nil, err
	}
	exts, err := n.Type.Externals(params)
	if err != nil {
		return nil, err
	}
	out := map[string]store.LastInput{}
	for _, e := range exts {
		abs, err := filepath.Abs(e.Path)
		if err != nil {
			abs = e.Path
		}
		d, err := st.HashPath(ctx, abs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name, err)
		}
		out[externalPrefix+e.Name] = store.LastInput{Output: abs, Digest: d}
	}
	return out, nil
}
