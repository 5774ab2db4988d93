package registry

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// MetricAt reads the number at key path in a metrics artifact's
// metrics.json (KindMetrics): path ["stsb", "spearman"] reads key stsb,
// then spearman. Errors name the artifact file and the keys there are.
func MetricAt(a Artifact, path []string) (float64, error) {
	file := a.Path(FileMetrics)
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return 0, fmt.Errorf("%s: %v", file, err)
	}
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, fmt.Errorf("%s: not an object at %q", file, k)
		}
		if v, ok = m[k]; !ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return 0, fmt.Errorf("%s: no metric %q (has: %s)", file, strings.Join(path, "."), strings.Join(keys, ", "))
		}
	}
	f, ok := v.(float64)
	if !ok {
		return 0, fmt.Errorf("%s: metric %s is not a number", file, strings.Join(path, "."))
	}
	return f, nil
}
