package registry

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Resources is what one run of a stage needs. A stage type declares its
// defaults (StageType.Resources, else DefaultResources); a stage block's
// `resources { }` overrides them per stage, and a profile's stage block may
// override them again. The one declaration drives both executors: the
// local one reads GPUs (a GPU device, serialised per GPU) and CPUs (how many
// of -j's slots the stage takes); a cluster executor turns every field into
// its scheduler's request (Slurm: --gres=gpu:N, --cpus-per-task, --mem,
// --time). Resources never enter a cache key: where a stage runs does not
// change what it computes (the tensor backend family, which can, is keyed
// separately).
type Resources struct {
	GPUs   int    `cty:"gpus" doc:"GPUs the stage uses when one is available (tensor stages: 1; 0 keeps it on the CPU)"`
	CPUs   int    `cty:"cpus" doc:"cores the stage keeps busy: slots of -j it takes locally, --cpus-per-task on a cluster"`
	Memory string `cty:"memory" doc:"memory a cluster job asks for, e.g. \"16G\" or \"512M\" (\"\": the cluster's default)"`
	Time   string `cty:"time" doc:"wall-clock limit of a cluster job, e.g. \"2h\" or \"90m\" (\"\": the partition's default)"`
}

// DefaultResources is what a stage type needs when it declares nothing: one
// core, and one GPU if it does tensor work.
func (t *StageType) DefaultResources() Resources {
	r := t.Resources
	if r.CPUs == 0 {
		r.CPUs = 1
	}
	if t.Tensor && r.GPUs == 0 && !t.CPUOnly {
		r.GPUs = 1
	}
	return r
}

// Validate checks the values: counts not negative, at least one core, a
// memory size with a unit and a positive duration.
func (r Resources) Validate() error {
	if r.GPUs < 0 {
		return fmt.Errorf("gpus: %d is negative", r.GPUs)
	}
	if r.CPUs < 1 {
		return fmt.Errorf("cpus: %d; a stage needs at least one core", r.CPUs)
	}
	if r.Memory != "" {
		if _, err := MemoryMB(r.Memory); err != nil {
			return fmt.Errorf("memory: %v", err)
		}
	}
	if r.Time != "" {
		d, err := time.ParseDuration(r.Time)
		if err != nil || d <= 0 {
			return fmt.Errorf("time: %q is not a positive duration such as \"90m\" or \"2h\"", r.Time)
		}
	}
	return nil
}

// MemoryMB parses a memory size with a unit (K, M, G or T, binary
// multiples as Slurm reads them) into mebibytes, rounded up.
func MemoryMB(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := map[byte]float64{'K': 1.0 / 1024, 'M': 1, 'G': 1024, 'T': 1024 * 1024}
	if len(s) < 2 {
		return 0, fmt.Errorf("%q: want a number and a unit (K, M, G, T), e.g. \"16G\"", s)
	}
	u := s[len(s)-1]
	if u >= 'a' && u <= 'z' {
		u -= 'a' - 'A'
	}
	mul, ok := units[u]
	n, err := strconv.ParseFloat(s[:len(s)-1], 64)
	if !ok || err != nil || n <= 0 {
		return 0, fmt.Errorf("%q: want a positive number and a unit (K, M, G, T), e.g. \"16G\"", s)
	}
	mb := n * mul
	if mb != float64(int64(mb)) {
		return int64(mb) + 1, nil
	}
	return int64(mb), nil
}
