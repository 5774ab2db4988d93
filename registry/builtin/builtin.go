// Package builtin builds the registry of every stage type repro ships. Each
// family package exports a Register function; Default calls them in turn, so
// the set of types is explicit here rather than spread over init functions.
package builtin

import (
	"repro/registry"
	"repro/registry/annotate"
	"repro/registry/data"
	"repro/registry/encode"
	"repro/registry/evaluate"
	"repro/registry/figure"
	"repro/registry/generate"
	"repro/registry/model"
	"repro/registry/pairs"
	"repro/registry/synth"
	"repro/registry/text"
	"repro/registry/train"
)

// Default returns a registry holding every built-in stage type.
func Default() *registry.Registry {
	r := registry.New()
	for _, register := range families {
		register(r)
	}
	return r
}

var families = []func(*registry.Registry){
	annotate.Register,
	data.Register,
	data.RegisterReleased,
	encode.Register,
	evaluate.Register,
	synth.Register,
	text.Register,
	train.Register,
	train.RegisterPaSeR,
	train.RegisterMLM,
	train.RegisterLM,
	train.RegisterT5,
	generate.Register,
	generate.RegisterDINO,
	pairs.Register,
	train.RegisterCosine,
	figure.Register,
	model.Register,
}
