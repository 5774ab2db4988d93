package dsl

import (
	"strings"
	"testing"
)

const extendsBase = `
experiment "x" {}

variable "n" {
  default = 1000
}

stage "corpus" {
  uses  = "data.sentences"
  path  = "x"
  limit = var.n
}

stage "mask" {
  for_each = { a = 1, b = 2 }
  uses     = "text.mask"
  input    = stage.corpus.sentences
  top_k    = each.value
}

stage "train" {
  uses = "train.encoder"
  data = stage.mask["a"].pairs
}

deviation "stand_in" {
  what  = "w"
  paper = "p"
  ours  = "o"
  why   = "y"
}
`

// The ci profile written in full: what extends must give.
const extendsLonghand = extendsBase + `
profile "mini" {
  variables = { n = 100 }
  stage "mask" { ratio = 0.1 }
  stage "train" {
    batch_size = 32
    max_steps  = 500
  }
  deviation "small" {
    what  = "scale"
    paper = "p"
    ours  = "o"
    why   = "y"
  }
}

profile "ci" {
  variables = { n = 100 }
  stage "mask" { ratio = 0.1 }
  stage "train" {
    batch_size = 32
    max_steps  = 50
  }
}
`

const extendsShort = extendsBase + `
profile "mini" {
  variables = { n = 100 }
  stage "mask" { ratio = 0.1 }
  stage "train" {
    batch_size = 32
    max_steps  = 500
  }
  deviation "small" {
    what  = "scale"
    paper = "p"
    ours  = "o"
    why   = "y"
  }
}

profile "ci" {
  extends = "mini"
  stage "train" { max_steps = 50 }
}
`

func identitySet(t *testing.T, cfg *Config) map[string]bool {
	t.Helper()
	ids, err := cfg.Variants[0].Graph.Identities()
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, id := range ids {
		set[id] = true
	}
	return set
}

// TestProfileExtends: a profile that extends another computes what the
// same profile written in full computes, its own settings win over the
// parent's, and it reports the parent's deviations as the parent's.
func TestProfileExtends(t *testing.T) {
	t.Parallel()
	short := mustLoad(t, "short.hcl", []byte(extendsShort), Options{Profile: "ci"})
	long := mustLoad(t, "long.hcl", []byte(extendsLonghand), Options{Profile: "ci"})
	a, b := identitySet(t, short), identitySet(t, long)
	if len(a) != len(b) || len(a) != 4 {
		t.Fatalf("%d and %d identities, want 4 each", len(a), len(b))
	}
	for id := range a {
		if !b[id] {
			t.Errorf("identity %s of the extending profile is not the longhand profile's", id)
		}
	}
	train := short.Variants[0].Graph.Node("train")
	if got := train.Params.GetAttr("max_steps").AsBigFloat().String(); got != "50" {
		t.Errorf("ci max_steps %s, want its own 50 over mini's 500", got)
	}
	if got := train.Params.GetAttr("batch_size").AsBigFloat().String(); got != "32" {
		t.Errorf("ci batch_size %s, want mini's 32", got)
	}
	if len(short.Deviations) != 2 || short.Deviations[1].Name != "small" || short.Deviations[1].Profile != "mini" {
		t.Errorf("ci deviations %+v, want the file's and mini's (declared by mini)", short.Deviations)
	}
	// The parent is unchanged by its child.
	mini := mustLoad(t, "short.hcl", []byte(extendsShort), Options{Profile: "mini"})
	if got := mini.Variants[0].Graph.Node("train").Params.GetAttr("max_steps").AsBigFloat().String(); got != "500" {
		t.Errorf("mini max_steps %s after ci extended it, want 500", got)
	}
	// A child's deviation of the same name replaces the parent's.
	redeclared := strings.Replace(extendsShort, `extends = "mini"`, `extends = "mini"
  deviation "small" {
    what  = "smaller"
    paper = "p"
    ours  = "o"
    why   = "y"
  }`, 1)
	ci := mustLoad(t, "short.hcl", []byte(redeclared), Options{Profile: "ci"})
	if len(ci.Deviations) != 2 || ci.Deviations[1].What != "smaller" || ci.Deviations[1].Profile != "ci" {
		t.Errorf("redeclared deviation: %+v", ci.Deviations)
	}
}

// TestProfileExtendsChain: a chain resolves parent first, whatever order
// the profiles are written in.
func TestProfileExtendsChain(t *testing.T) {
	t.Parallel()
	src := extendsBase + `
profile "smoke" {
  extends = "ci"
  stage "train" { max_steps = 5 }
}
profile "ci" {
  extends = "mini"
  stage "train" { max_steps = 50 }
}
profile "mini" {
  stage "train" {
    batch_size = 32
    max_steps  = 500
  }
}
`
	cfg := mustLoad(t, "chain.hcl", []byte(src), Options{Profile: "smoke"})
	train := cfg.Variants[0].Graph.Node("train")
	if s, b := train.Params.GetAttr("max_steps").AsBigFloat().String(), train.Params.GetAttr("batch_size").AsBigFloat().String(); s != "5" || b != "32" {
		t.Errorf("smoke: max_steps %s, batch_size %s; want 5 and 32", s, b)
	}
}
