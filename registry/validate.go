package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Validator is implemented (on the pointer) by a Params struct whose values
// need checks beyond their types: a split that must be one of a list, a
// count that must be positive, a checksum that must be hex. Validate returns
// nil, a *ParamError, or several joined with errors.Join; errors that name
// no parameter are about the stage block as a whole.
//
// The dsl calls it for every stage block when the file is loaded (so `repro
// validate` reports the value at its file:line:col, before anything runs),
// and the runner again before a stage runs, so Run may assume valid
// parameters.
type Validator interface {
	Validate() error
}

// ParamError says what is wrong with one parameter's value.
type ParamError struct {
	Param string
	Msg   string
}

func (e *ParamError) Error() string { return e.Param + ": " + e.Msg }

// Paramf returns a *ParamError for param.
func Paramf(param, format string, args ...any) *ParamError {
	return &ParamError{Param: param, Msg: fmt.Sprintf(format, args...)}
}

// Checks collects parameter errors; Err joins them (nil when none).
type Checks struct{ errs []error }

// Add records a problem with param unless ok.
func (c *Checks) Add(ok bool, param, format string, args ...any) {
	if !ok {
		c.errs = append(c.errs, Paramf(param, format, args...))
	}
}

// Positive checks that an integer parameter is at least 1.
func (c *Checks) Positive(param string, v int) {
	c.Add(v >= 1, param, "%d; must be at least 1", v)
}

// NonNegative checks that an integer parameter is not negative.
func (c *Checks) NonNegative(param string, v int) {
	c.Add(v >= 0, param, "%d is negative", v)
}

// OneOf checks that a string parameter is one of choices.
func (c *Checks) OneOf(param, v string, choices ...string) {
	for _, ch := range choices {
		if v == ch {
			return
		}
	}
	c.errs = append(c.errs, Paramf(param, "%q is not one of %s", v, strings.Join(choices, ", ")))
}

// Err adds err (a *ParamError, joined ones, or any error) when not nil.
func (c *Checks) Err(err error) {
	if err != nil {
		c.errs = append(c.errs, err)
	}
}

// Result is every recorded problem joined, or nil.
func (c *Checks) Result() error { return errors.Join(c.errs...) }

// ValidateParams runs the Validator of decoded parameters (a pointer to a
// Params struct, as DecodeParams returns), if it has one.
func (t *StageType) ValidateParams(params any) error {
	if v, ok := params.(Validator); ok {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return nil
}

// ParamErrors flattens err into the parameter errors it holds (through
// errors.Join and wrapping) and the rest.
func ParamErrors(err error) (params []*ParamError, other []error) {
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		var pe *ParamError
		if errors.As(e, &pe) && pe == e {
			params = append(params, pe)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		if u := errors.Unwrap(e); u != nil {
			// A wrapper (the stage type's name): look inside.
			before := len(params) + len(other)
			walk(u)
			if len(params)+len(other) > before {
				return
			}
		}
		other = append(other, e)
	}
	walk(err)
	return params, other
}

// Call validates env.Params and runs the stage: what the runner does once
// the parameters are decoded, for callers that drive a stage type directly
// (tests, tools).
func (t *StageType) Call(ctx context.Context, env *Env) error {
	if err := t.ValidateParams(env.Params); err != nil {
		return err
	}
	return t.Run(ctx, env)
}
