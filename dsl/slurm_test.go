package dsl

import (
	"reflect"
	"strings"
	"testing"
)

const slurmSrc = `
experiment "r" {}

variable "account" {
  default = "proj1"
}

stage "s" {
  uses = "data.sentences"
  path = "x"
}

slurm {
  partition = "cpu"
  account   = var.account
  flags     = ["--qos=normal"]
}

profile "gpu" {
  slurm {
    partition = "gpu"
    flags     = ["--qos=high", "--constraint=a100"]
  }
}

profile "plain" {}
`

// The file's slurm block applies to every profile; a profile's block
// replaces what it sets; variables work; nothing reaches a parameter.
func TestSlurmSettings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		opts Options
		want Slurm
	}{
		{Options{}, Slurm{Partition: "cpu", Account: "proj1", Flags: []string{"--qos=normal"}, Source: "r.hcl:13"}},
		{Options{Profile: "plain"}, Slurm{Partition: "cpu", Account: "proj1", Flags: []string{"--qos=normal"}, Source: "r.hcl:13"}},
		{Options{Profile: "gpu", Vars: map[string]string{"account": "proj2"}},
			Slurm{Partition: "gpu", Account: "proj2", Flags: []string{"--qos=high", "--constraint=a100"}, Source: "r.hcl:20"}},
	}
	for _, c := range cases {
		cfg := mustLoad(t, "r.hcl", []byte(slurmSrc), c.opts)
		if !reflect.DeepEqual(cfg.Slurm, c.want) {
			t.Errorf("%+v: got %+v, want %+v", c.opts, cfg.Slurm, c.want)
		}
	}
	if cfg := mustLoad(t, "r.hcl", []byte(`experiment "r" {}`), Options{}); !reflect.DeepEqual(cfg.Slurm, Slurm{}) {
		t.Errorf("no block: %+v", cfg.Slurm)
	}
}

func TestSlurmErrors(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		`experiment "r" {}
slurm { queue = "x" }`: `r.hcl:2,9-14: Unsupported argument; An argument named "queue" is not expected here.`,
		`experiment "r" {}
slurm { flags = "--qos=high" }`: `r.hcl:2,17-29: Invalid flags; flags must be a list of strings`,
		`experiment "r" {}
slurm { partition = ["a"] }`: `r.hcl:2,21-26: Invalid partition; partition must be a string.`,
		`experiment "r" {}
slurm {}
slurm {}`: `r.hcl:3,1-6: Duplicate slurm block; Only one slurm block is allowed in a file; the first is at r.hcl:2,1-6.`,
		`experiment "r" {}
profile "p" {
  slurm {}
  slurm { account = 3 }
}`: `r.hcl:4,3-8: Duplicate slurm block; Only one slurm block is allowed in a profile`,
	} {
		l := NewLoader(testRegistry())
		_, diags := l.LoadSource("r.hcl", []byte(src), Options{Profile: profileIn(src)})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), want) {
			t.Errorf("%s\ngot:  %v\nwant: %s", src, diags, want)
		}
	}
}

func profileIn(src string) string {
	if strings.Contains(src, `profile "p"`) {
		return "p"
	}
	return ""
}
