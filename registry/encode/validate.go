package encode

import (
	"strings"

	"repro/internal/dataset"
	"repro/registry"
)

// The encode.* parameter checks (registry.Validator), run when the file is
// loaded.

// Validate checks that vectors names a word-vector dataset of the catalogue.
func (p *GloVeParams) Validate() error {
	var names []string
	for _, n := range dataset.Names() {
		if d, _ := dataset.Lookup(n); d != nil {
			if f, ok := d.File("vectors"); ok && f.Format == dataset.FormatGloVeGz {
				names = append(names, n)
				if n == p.Vectors {
					return nil
				}
			}
		}
	}
	return registry.Paramf("vectors", "%q is not a word-vector dataset (known: %s)", p.Vectors, strings.Join(names, ", "))
}

// Validate checks that max_features is not negative.
func (p *TFIDFParams) Validate() error {
	var c registry.Checks
	c.Add(p.MaxFeatures >= 0, "max_features", "%d is negative (0 keeps every term)", p.MaxFeatures)
	return c.Result()
}

// Validate checks that the path is given and the checksum, when given, is
// 64 hexadecimal digits.
func (p *FileParams) Validate() error {
	var c registry.Checks
	c.Add(p.Path != "", "path", "required: a JSONL file of {\"text\", \"vector\"} rows")
	c.Add(p.SHA256 == "" || len(p.SHA256) == 64 && strings.Trim(strings.ToLower(p.SHA256), "0123456789abcdef") == "",
		"sha256", "%q is not a sha256 (64 hexadecimal digits)", p.SHA256)
	return c.Result()
}
