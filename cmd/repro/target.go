package main

import (
	"fmt"
	"strings"

	"repro/dsl"
	"repro/experiment"
	"repro/registry"
)

// moduleTargetProblem explains, for the first --target of opts that
// addresses a module stage (module.M.STAGE) and selects nothing, what is
// wrong with it: an undeclared module or stage (with those that exist), or
// a declared stage this pipeline does not use. "" when no such target.
// It loads the file again: it runs only after a --target error.
func moduleTargetProblem(reg *registry.Registry, file string, opts experiment.Options) string {
	var mods []string
	for _, t := range opts.Targets {
		if strings.HasPrefix(t, "module.") {
			mods = append(mods, t)
		}
	}
	if len(mods) == 0 {
		return ""
	}
	cfg, diags := dsl.NewLoader(reg).Load(file, dsl.Options{Profile: opts.Profile, Sets: opts.Sets, Ablation: opts.Ablation, Vars: opts.Vars})
	if diags.HasErrors() || cfg == nil || len(cfg.Variants) == 0 {
		return ""
	}
	for _, t := range mods {
		for _, v := range cfg.Variants {
			if p := cfg.TargetProblem(v, t); p != "" {
				return fmt.Sprintf("--target %s: %s", t, p)
			}
		}
	}
	return ""
}
