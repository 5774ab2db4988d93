package dsl

import (
	"sort"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions are what expressions may call: go-cty's pure standard library
// (no file, time or random functions, so a configuration evaluates to the
// same values everywhere and stage keys stay stable).
func functions() map[string]function.Function {
	return map[string]function.Function{
		"abs":        stdlib.AbsoluteFunc,
		"ceil":       stdlib.CeilFunc,
		"floor":      stdlib.FloorFunc,
		"log":        stdlib.LogFunc,
		"max":        stdlib.MaxFunc,
		"min":        stdlib.MinFunc,
		"pow":        stdlib.PowFunc,
		"signum":     stdlib.SignumFunc,
		"parseint":   stdlib.ParseIntFunc,
		"concat":     stdlib.ConcatFunc,
		"contains":   stdlib.ContainsFunc,
		"distinct":   stdlib.DistinctFunc,
		"element":    stdlib.ElementFunc,
		"flatten":    stdlib.FlattenFunc,
		"keys":       stdlib.KeysFunc,
		"length":     stdlib.LengthFunc,
		"lookup":     stdlib.LookupFunc,
		"merge":      stdlib.MergeFunc,
		"range":      stdlib.RangeFunc,
		"reverse":    stdlib.ReverseListFunc,
		"slice":      stdlib.SliceFunc,
		"sort":       stdlib.SortFunc,
		"values":     stdlib.ValuesFunc,
		"zipmap":     stdlib.ZipmapFunc,
		"format":     stdlib.FormatFunc,
		"formatlist": stdlib.FormatListFunc,
		"join":       stdlib.JoinFunc,
		"lower":      stdlib.LowerFunc,
		"upper":      stdlib.UpperFunc,
		"replace":    stdlib.ReplaceFunc,
		"split":      stdlib.SplitFunc,
		"substr":     stdlib.SubstrFunc,
		"trimspace":  stdlib.TrimSpaceFunc,
		"tostring":   stdlib.MakeToFunc(cty.String),
		"tonumber":   stdlib.MakeToFunc(cty.Number),
		"tobool":     stdlib.MakeToFunc(cty.Bool),
		"tolist":     stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"toset":      stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)), // for_each = toset([...])
		"jsonencode": stdlib.JSONEncodeFunc,
	}
}

// Suggest returns ` Did you mean "x"?` for the closest candidate within a
// small edit distance (the threshold HCL itself uses), else "".
func Suggest(given string, candidates []string) string {
	best, bestDist := "", 0
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	for _, c := range sorted {
		d := levenshtein.Distance(strings.ToLower(given), strings.ToLower(c), nil)
		limit := 3
		if l := len(given) / 3; l > limit {
			limit = l
		}
		if d < limit && (best == "" || d < bestDist) {
			best, bestDist = c, d
		}
	}
	if best == "" || best == given {
		return ""
	}
	return " Did you mean \"" + best + "\"?"
}
