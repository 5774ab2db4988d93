package backend

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Run-time selection. A backend that needs a system library (OpenBLAS) or a
// device (CUDA) is compiled in only with its build tag; its file registers a
// constructor under its name from init, so ByName knows exactly the backends
// this binary contains and can tell a user which tag is missing for the
// others. Constructors run lazily: naming "cuda" is what opens the device.

// buildTags names the build tag of each optional backend, for the error
// message when it is asked for but not compiled in.
var buildTags = map[string]string{
	"openblas": "openblas",
	"cuda":     "cuda",
}

var (
	regMu    sync.Mutex
	registry = map[string]func(arg string) (Backend, error){}
)

// Register makes a backend constructor available to ByName. tag is the build
// tag that compiles it in ("" for none). open receives what follows the
// colon in "name:arg" ("" when there is none), e.g. the device ordinal of
// "cuda:1". Register is called from init by the files (and, for CUDA, the
// package) that implement each backend; registering a name twice panics.
func Register(name, tag string, open func(arg string) (Backend, error)) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("backend: Register called twice for " + name)
	}
	registry[name] = open
	if tag != "" {
		buildTags[name] = tag
	}
}

// Names lists the backends compiled into this binary, sorted.
func Names() []string {
	regMu.Lock()
	defer regMu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ByName opens the backend called spec: "cpu", "openblas", "cuda" or
// "cuda:N" (device N). A backend this binary was not built with gives an error
// naming the build tag to add; an unknown name lists the available ones.
// Opening may fail (no GPU, bad device number).
func ByName(spec string) (Backend, error) {
	name, arg, _ := strings.Cut(spec, ":")
	regMu.Lock()
	open, ok := registry[name]
	tag := buildTags[name]
	regMu.Unlock()
	if ok {
		b, err := open(arg)
		if err != nil {
			return nil, fmt.Errorf("backend %q: %w", spec, err)
		}
		return b, nil
	}
	if tag != "" {
		return nil, fmt.Errorf("backend %q is not compiled into this binary: rebuild with -tags %s (available: %s)", name, tag, strings.Join(Names(), ", "))
	}
	return nil, fmt.Errorf("unknown backend %q (available: %s)", name, strings.Join(Names(), ", "))
}
