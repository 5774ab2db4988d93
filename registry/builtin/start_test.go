package builtin

import (
	"reflect"
	"slices"
	"testing"

	"repro/registry"
)

// Every stage type whose parameters refuse a run before it starts
// (registry.StartChecker) asks only about input ports it declares, and
// passes once every input is connected: the check is about a model that
// comes from nowhere, never about one that is connected (a type without
// inputs, which loads a checkpoint it is given, may refuse at its defaults).
func TestStartCheckers(t *testing.T) {
	reg := Default()
	checkers := 0
	for _, name := range reg.Names() {
		st, _ := reg.Lookup(name)
		if st.Params == nil {
			continue
		}
		p := reflect.New(reflect.TypeOf(st.Params))
		p.Elem().Set(reflect.ValueOf(st.Params))
		c, ok := p.Interface().(registry.StartChecker)
		if !ok {
			continue
		}
		checkers++
		var ports []string
		for _, in := range st.Inputs {
			ports = append(ports, in.Name)
		}
		var asked []string
		c.CheckStart(func(port string) bool { asked = append(asked, port); return false })
		for _, a := range asked {
			if !slices.Contains(ports, a) {
				t.Errorf("%s: CheckStart asks about input %q, which it does not declare (%v)", name, a, ports)
			}
		}
		// A type with no input ports (model.hf_*: a checkpoint is its only
		// source) may refuse at its defaults; the others must not once
		// every input is connected.
		if err := c.CheckStart(func(string) bool { return true }); err != nil && len(ports) > 0 {
			t.Errorf("%s: refused with every input connected: %v", name, err)
		}
	}
	if checkers < 10 {
		t.Errorf("%d stage types check before start; the training types, generate.dino_* and encode.pooling should", checkers)
	}
}
