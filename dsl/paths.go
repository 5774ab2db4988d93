package dsl

import (
	"fmt"
	"os"
	"path/filepath"

	"repro/registry"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Paths. A parameter that names something on disk (registry.Param.Path)
// resolves a relative value against the directory of the file that writes
// it, as a module's source does, so an experiment names its own fixtures
// the same way wherever repro is started; a value typed on the command line
// (-var, --set) resolves against the working directory, as a shell user
// expects. What it names must exist, and be the kind of thing the
// parameter reads (a file; a directory; a checkpoint directory with a
// config.json), or the load fails at the line that sets it: `repro
// validate` says what `repro run` would refuse, before anything runs.
//
// The resolved, absolute path is what the stage sees (and its parameters
// encode, so it is in the cache key, as a -var path always was); the
// content the path holds is in the key too, through the type's Externals.

// resolvePath resolves value, written by expr, and checks it.
func (e *evaluator) resolvePath(expr hcl.Expression, kind registry.PathKind, value string) (string, error) {
	path, where := value, ""
	if !filepath.IsAbs(value) {
		base, what := e.pathBase(expr)
		path = filepath.Join(base, value)
		where = fmt.Sprintf(" (a relative path resolves against %s)", what)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if err := registry.CheckPath(kind, path); err != nil {
		return "", fmt.Errorf("%v%s", err, where)
	}
	return path, nil
}

// pathBase is the directory a relative value written by expr resolves
// against, and its description. A var.NAME reference resolves where the
// variable's value is written: a -var on the command line, or the file
// that declares it.
func (e *evaluator) pathBase(expr hcl.Expression) (string, string) {
	if t, ok := expr.(*hclsyntax.ScopeTraversalExpr); ok && t.Traversal.RootName() == "var" && len(t.Traversal) == 2 {
		if a, ok := t.Traversal[1].(hcl.TraverseAttr); ok {
			if o, ok := e.ovr["var."+a.Name]; ok {
				return e.pathBase(o.expr)
			}
			if v, ok := e.m.variables[a.Name]; ok {
				return fileBase(v.rng.Filename)
			}
		}
	}
	return fileBase(expr.Range().Filename)
}

// valueRange is where the value of expr is written: for var.NAME set by
// an override (-var, a profile, a module argument) the override's value,
// else expr itself. A module argument passes it on, so a relative -var
// path handed to a module still resolves against the working directory.
func (e *evaluator) valueRange(expr hcl.Expression) hcl.Range {
	if t, ok := expr.(*hclsyntax.ScopeTraversalExpr); ok && t.Traversal.RootName() == "var" && len(t.Traversal) == 2 {
		if a, ok := t.Traversal[1].(hcl.TraverseAttr); ok {
			if o, ok := e.ovr["var."+a.Name]; ok {
				return e.valueRange(o.expr)
			}
		}
	}
	return expr.Range()
}

// fileBase is the directory of an HCL file, or the working directory for
// the synthetic files that hold command-line values.
func fileBase(filename string) (string, string) {
	if fi, err := os.Stat(filename); err == nil && !fi.IsDir() {
		dir := filepath.Dir(filename)
		return dir, "the directory of " + filename
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = "."
	}
	return wd, fmt.Sprintf("the working directory, %s, for a command-line value", wd)
}
