package main

import (
	"fmt"
	"io"
	"strings"

	"repro/experiment"
	"repro/internal/report"

	"github.com/spf13/cobra"
)

// checkAblation judges a recorded ablation grid by its agreement with the
// paper's orderings (internal/report/agreement.go) against the declared
// min_agreement: ok (0), nothing to judge or no record (1), below (2). The
// minimum (and the paper's resolution) are the ones the file declares now,
// not the ones recorded with the grid: raising a gate must not need the grid
// re-run.
func checkAblation(out io.Writer, file string, x *experiment.Experiment, rep *report.Report) int {
	a := rep.Ablation
	if a.Agreement == nil {
		fmt.Fprintf(out, "%s: ERROR ablation %s has no paper values; check judges an ablation by its agreement with the paper\n", file, a.Name)
		return checkError
	}
	if x != nil && x.Config.Ablation != nil {
		a.Declare(x.Config.Ablation.MinAgreement, x.Config.Ablation.PaperResolution)
	}
	fmt.Fprintf(out, "%s: ablation %s: %s\n", file, a.Name, a.Agreement)
	for _, l := range a.AgreementLines() {
		fmt.Fprintf(out, "%s:   %s\n", file, l)
	}
	if a.Agreement.Below() {
		return checkRegression
	}
	return checkOK
}

// checkAblations judges the latest recorded report of every ablation the
// file declares and prints the experiment's summary line.
func checkAblations(cmd *cobra.Command, out io.Writer, file string, lf *loadFlags, seeds []int64) int {
	x, err := loadExperiment(file, lf, defaultRegistry(), cmd.ErrOrStderr())
	if err != nil {
		fmt.Fprintf(out, "%s: ERROR %v\n", file, err)
		return checkError
	}
	code := checkOK
	var abls []*report.Ablation
	for _, name := range x.Config.Ablations {
		one := *lf
		one.ablation = name
		if len(seeds) > 0 && !declaresPaper(cmd, file, &one) {
			// Nothing to combine for: agreement needs paper values, and a
			// grid without them need not be recorded under every seed.
			fmt.Fprintf(out, "%s: ablation %s: no paper values\n", file, name)
			continue
		}
		xa, rep, err := recordedReport(cmd, file, &one, seeds)
		if err != nil || rep.Ablation == nil {
			fmt.Fprintf(out, "%s: ERROR ablation %s: no recorded grid (run `repro run %s%s --ablation %s%s`)\n", file, name, file, rerunFlags(lf), name, seedsText(seeds))
			code = checkError
			continue
		}
		abls = append(abls, rep.Ablation)
		if rep.Ablation.Agreement == nil {
			fmt.Fprintf(out, "%s: ablation %s: no paper values\n", file, name)
			continue
		}
		if c := checkAblation(out, file, xa, rep); c == checkRegression {
			code = checkRegression
		}
	}
	report.WriteSummary(out, x.Config.Experiment.Name, lf.profile, report.Summarize(abls))
	return code
}

// declaresPaper reports whether lf's ablation declares paper values (a file
// that does not load counts as declaring them: the error shows later).
func declaresPaper(cmd *cobra.Command, file string, lf *loadFlags) bool {
	x, err := loadExperiment(file, lf, defaultRegistry(), io.Discard)
	if err != nil || x.Config.Ablation == nil {
		return true
	}
	return len(x.Config.Ablation.Paper) > 0
}

// seedsText is the --seeds part of a command a hint gives.
func seedsText(seeds []int64) string {
	if len(seeds) == 0 {
		return ""
	}
	var ss []string
	for _, s := range seeds {
		ss = append(ss, fmt.Sprint(s))
	}
	return " --seeds " + strings.Join(ss, ",")
}

func profileFlag(p string) string {
	if p == "" {
		return ""
	}
	return " --profile " + p
}

// rerunFlags is the --profile, --var and --set part of the command that
// records what check looked for: a grid recorded under -var seed=1 is not
// the one a hint without it would run.
func rerunFlags(lf *loadFlags) string {
	flags := profileFlag(lf.profile)
	for _, v := range lf.vars {
		flags += " --var " + shellWord(v)
	}
	for _, v := range lf.sets {
		flags += " --set " + shellWord(v)
	}
	return flags
}

// shellWord quotes w for a POSIX shell when it holds anything but the
// characters flags and values usually have.
func shellWord(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.=,:/+-@") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
