// Command repro reproduces the tables of sentence-embedding papers from
// declarative HCL experiments: `repro run experiments/simcse.hcl --profile mini`.
//
// One file per subcommand; each parses its flags and calls into dsl/, runner/
// and internal/report, which do the work and the rendering.
//
// Exit codes: 0 success; 1 an error (bad input, a failed stage, a missing
// value); 2 a regression found by `repro check`.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI and returns the process exit code (a function so the
// CLI's tests can call it in-process).
func run(args []string, stdout, stderr io.Writer) int {
	global = globalFlags{}
	root := newRootCmd()
	root.SetArgs(terraformStyle(args))
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	stopProfile()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "repro:", err)
	return 1
}

// exitError carries an exit code chosen by a subcommand; msg (possibly empty
// when the command already printed its explanation) goes to stderr.
type exitError struct {
	code  int
	msg   string
	cause error // for errors.Is; nil for most
}

func (e *exitError) Error() string { return e.msg }

func (e *exitError) Unwrap() error { return e.cause }

func exitCode(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// terraformStyle accepts Terraform's single-dash -var (pflag would read it
// as the shorthands -v -a -r) by rewriting it to --var.
func terraformStyle(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "-var" || strings.HasPrefix(a, "-var=") {
			a = "-" + a
		}
		out[i] = a
	}
	return out
}
