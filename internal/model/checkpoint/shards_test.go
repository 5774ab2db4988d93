package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/model/safetensors"
)

func writeShard(t *testing.T, path string, ts map[string]safetensors.Tensor) {
	t.Helper()
	if err := safetensors.WriteFile(path, ts, nil); err != nil {
		t.Fatal(err)
	}
}

func TestReadWeightsSharded(t *testing.T) {
	dir := t.TempDir()
	a := safetensors.Tensor{Shape: []int{2}, Data: []float32{1, 2}}
	b := safetensors.Tensor{Shape: []int{1, 3}, Data: []float32{3, 4, 5}}
	writeShard(t, filepath.Join(dir, "model-00001-of-00002.safetensors"), map[string]safetensors.Tensor{"a": a})
	writeShard(t, filepath.Join(dir, "model-00002-of-00002.safetensors"), map[string]safetensors.Tensor{"b": b})
	index := `{"metadata": {"total_size": 20}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}`
	if err := os.WriteFile(filepath.Join(dir, FileWeightsIndex), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	ts, path, err := ReadWeights(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts["b"].Data[2] != 5 || ts["a"].Shape[0] != 2 || filepath.Base(path) != FileWeightsIndex {
		t.Fatalf("got %v from %s", ts, path)
	}

	// The index names a tensor its shard lacks.
	bad := strings.Replace(index, `"b": "model-00002`, `"c": "model-00002`, 1)
	os.WriteFile(filepath.Join(dir, FileWeightsIndex), []byte(bad), 0o644)
	if _, _, err := ReadWeights(dir); err == nil || !strings.Contains(err.Error(), `lacks tensor "c"`) {
		t.Errorf("missing tensor in shard: %v", err)
	}
	// A shard outside the directory.
	bad = strings.Replace(index, `"model-00002-of-00002.safetensors"}`, `"../x.safetensors"}`, 1)
	os.WriteFile(filepath.Join(dir, FileWeightsIndex), []byte(bad), 0o644)
	if _, _, err := ReadWeights(dir); err == nil || !strings.Contains(err.Error(), "not a file name") {
		t.Errorf("shard path: %v", err)
	}
	// Neither file.
	if _, _, err := ReadWeights(t.TempDir()); err == nil || !strings.Contains(err.Error(), FileWeightsIndex) {
		t.Errorf("empty directory: %v", err)
	}
}

// ReadWeights reads every tensor of dir's checkpoint (see OpenWeights). It
// also returns the path to name in errors about the tensors (the file or
// the index). Loading a model should use OpenWeights, which reads only
// what the model uses.
func ReadWeights(dir string) (map[string]safetensors.Tensor, string, error) {
	w, err := OpenWeights(dir)
	if err != nil {
		return nil, "", err
	}
	defer w.Close()
	out := make(map[string]safetensors.Tensor, len(w.infos))
	for _, n := range w.Names() {
		t, err := w.Read(n)
		if err != nil {
			return nil, "", err
		}
		out[n] = t
	}
	return out, w.Path, nil
}
