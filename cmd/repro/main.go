// Command repro reproduces the tables of sentence-embedding papers from
// declarative HCL experiments: `repro run experiments/simcse.hcl --profile mini`.
//
// One file per subcommand; each parses its flags and calls into dsl/, runner/
// and internal/report, which do the work and the rendering.
//
// Exit codes: exit.go lists them (0 success; 1 an error; 2 a regression
// found by `repro check`, ...).
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
		return int(ee.code)
	}
	fmt.Fprintln(stderr, "repro:", err)
	return int(exitFailure)
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
