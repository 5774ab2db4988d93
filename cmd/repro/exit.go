package main

import (
	"fmt"

	"repro/runner/remote"
)

// exitStatus is the process's exit code; every code repro exits with is
// one of the constants below.
type exitStatus int

const (
	exitOK      exitStatus = 0
	exitFailure exitStatus = 1 // bad input, a failed stage, a missing value
	// check: a cell regressed beyond its tolerance; plan
	// --detailed-exitcode: something would run.
	exitRegression  exitStatus = 2
	exitPlanChanges exitStatus = 2
	// check: a cell improved beyond its tolerance (without
	// --allow-improvement).
	exitImprovement exitStatus = 3
	// stage-exec: the job's key differs from the coordinator's; it ran
	// nothing (remote.ExitRefused, which the coordinator reads).
	exitRefused     exitStatus = remote.ExitRefused
	exitInterrupted exitStatus = 130 // SIGINT: 128 + 2, as a shell reports it
	exitTerminated  exitStatus = 143 // SIGTERM: 128 + 15 (a batch system's cancel)
)

// exitError carries an exit code chosen by a subcommand; msg (possibly empty
// when the command already printed its explanation) goes to stderr.
type exitError struct {
	code  exitStatus
	msg   string
	cause error // for errors.Is; nil for most
}

func (e *exitError) Error() string { return e.msg }

func (e *exitError) Unwrap() error { return e.cause }

func exitCode(code exitStatus, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}
