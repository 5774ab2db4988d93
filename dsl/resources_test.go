package dsl

import (
	"testing"

	"repro/registry"
)

const resourcesSrc = `
experiment "r" {}

stage "s" {
  uses = "data.sentences"
  path = "x"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.s.sentences
  resources {
    cpus   = 2
    memory = "4G"
  }
}

stage "train" {
  uses = "train.encoder"
  data = stage.mask.pairs
}

profile "cluster" {
  resources {
    time = "2h"
    cpus = 3
  }
  stage "train" {
    resources {
      gpus = 2
    }
  }
}
`

// Resources layer as documented: type defaults, the profile's default, the
// stage block, the profile's stage block, --set; and they reach the graph.
func TestResources(t *testing.T) {
	t.Parallel()
	res := func(cfg *Config, name string) registry.Resources {
		t.Helper()
		n := cfg.Variants[0].Graph.Node(name)
		if n == nil {
			t.Fatalf("no node %s", name)
		}
		return n.Resources
	}
	plain := mustLoad(t, "r.hcl", []byte(resourcesSrc), Options{})
	if got := res(plain, "s"); got != (registry.Resources{CPUs: 1}) {
		t.Errorf("s: %+v, want the type's default (1 cpu)", got)
	}
	if got := res(plain, "mask"); got != (registry.Resources{CPUs: 2, Memory: "4G"}) {
		t.Errorf("mask: %+v", got)
	}
	if got := res(plain, "train"); got != (registry.Resources{CPUs: 1, GPUs: 1}) {
		t.Errorf("train: %+v, want a tensor type's default (1 gpu)", got)
	}
	cl := mustLoad(t, "r.hcl", []byte(resourcesSrc), Options{Profile: "cluster", Sets: []string{"stage.mask.resources.memory=8G"}})
	if got := res(cl, "s"); got != (registry.Resources{CPUs: 3, Time: "2h"}) {
		t.Errorf("cluster s: %+v, want the profile's default", got)
	}
	if got := res(cl, "mask"); got != (registry.Resources{CPUs: 2, Memory: "8G", Time: "2h"}) {
		t.Errorf("cluster mask: %+v, want the stage block over the profile default, --set over both", got)
	}
	if got := res(cl, "train"); got != (registry.Resources{CPUs: 3, GPUs: 2, Time: "2h"}) {
		t.Errorf("cluster train: %+v", got)
	}
	if n := cl.Variants[0].Graph.Node("mask"); n.Source != "r.hcl:9" {
		t.Errorf("source %q, want r.hcl:9", n.Source)
	}
	// Resources are not parameters: they change no parameter object.
	if !plain.Variants[0].Graph.Node("train").Params.RawEquals(cl.Variants[0].Graph.Node("train").Params) {
		t.Error("a resource changed the parameters")
	}
}
