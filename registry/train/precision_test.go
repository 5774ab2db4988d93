package train

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// TestPrecisionParam: every train.* type has the precision parameter,
// fp32 by default and added after results were cached (left out of the key
// at its default, so no key changes); tf32 and bf16 are accepted and
// anything else is refused, naming the choices.
func TestPrecisionParam(t *testing.T) {
	r := allTypes()
	for _, name := range r.Names() {
		if !strings.HasPrefix(name, "train.") {
			continue
		}
		st, _ := r.Lookup(name)
		ps, err := st.ParamSchema()
		if err != nil {
			t.Fatal(err)
		}
		attrs := map[string]cty.Value{}
		found := false
		for _, p := range ps {
			attrs[p.Name] = p.Default
			if p.Name == "precision" {
				found = true
				if !p.Added || !p.Default.RawEquals(cty.StringVal("fp32")) {
					t.Errorf("%s: precision is added=%v with default %#v; want added, fp32", name, p.Added, p.Default)
				}
			}
		}
		if !found {
			t.Errorf("%s has no precision parameter", name)
			continue
		}
		for _, v := range []string{"tf32", "bf16", "fp16"} {
			attrs["precision"] = cty.StringVal(v)
			params, err := st.DecodeParams(cty.ObjectVal(attrs))
			if err == nil {
				if val, ok := params.(interface{ Validate() error }); ok {
					err = val.Validate()
				}
			}
			bad := err != nil && strings.Contains(err.Error(), "precision")
			if bad != (v == "fp16") {
				t.Errorf("%s: precision %q: %v", name, v, err)
			}
		}
	}
}
