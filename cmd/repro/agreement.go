package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"repro/cmd/repro/view"
	"repro/experiment"
	"repro/internal/report"

	"github.com/spf13/cobra"
)

// judgeAblation judges a recorded ablation grid by its agreement with the
// paper's orderings (internal/report/agreement.go) against the declared
// min_agreement. The minimum (and the paper's resolution) are the ones the
// file declares now, not the ones recorded with the grid: raising a gate
// must not need the grid re-run.
func judgeAblation(x *experiment.Experiment, rep *report.Report) view.CheckAbl {
	a := rep.Ablation
	if a.Agreement == nil {
		return view.CheckAbl{Name: a.Name, Status: "error", Error: "no paper values; check judges an ablation by its agreement with the paper"}
	}
	if x != nil && x.Config.Ablation != nil {
		a.Declare(x.Config.Ablation.MinAgreement, x.Config.Ablation.PaperResolution)
	}
	out := view.CheckAbl{Name: a.Name, Status: "ok", Agreement: a.Agreement, Lines: a.AgreementLines()}
	if a.Agreement.Below() {
		out.Status = "below"
	}
	return out
}

// checkAblations judges the latest recorded report of every ablation the
// file declares and adds the experiment's summary line.
func checkAblations(cmd *cobra.Command, file string, lf *loadFlags, seeds []int64) view.CheckFile {
	x, err := loadExperiment(file, lf, defaultRegistry(), cmd.ErrOrStderr())
	if err != nil {
		return view.CheckError(file, lf.profile, errText(file, err))
	}
	f := view.CheckFile{File: file, Profile: x.Profile, Status: "ok", Cells: []view.CheckCell{}}
	var abls []*report.Ablation
	for _, name := range x.Config.Ablations {
		one := *lf
		one.ablation = name
		if len(seeds) > 0 && !declaresPaper(cmd, file, &one) {
			// Nothing to combine for: agreement needs paper values, and a
			// grid without them need not be recorded under every seed.
			f.AddAblation(view.CheckAbl{Name: name, Status: "no paper values"})
			continue
		}
		xa, rep, err := recordedReport(cmd, file, &one, seeds)
		if err != nil || rep.Ablation == nil {
			f.AddAblation(view.CheckAbl{Name: name, Status: "error",
				Error: fmt.Sprintf("no recorded grid (run `repro run %s%s --ablation %s%s`)", file, rerunFlags(lf), name, seedsText(seeds))})
			continue
		}
		abls = append(abls, rep.Ablation)
		if rep.Ablation.Agreement == nil {
			f.AddAblation(view.CheckAbl{Name: name, Status: "no paper values"})
			continue
		}
		f.AddAblation(judgeAblation(xa, rep))
	}
	var b strings.Builder
	report.WriteSummary(&b, x.Config.Experiment.Name, lf.profile, report.Summarize(abls))
	f.Notes = strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	return f
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
	return " --seeds " + joinSeeds(seeds, ",")
}

// joinSeeds writes seeds separated by sep.
func joinSeeds(seeds []int64, sep string) string {
	ss := make([]string, len(seeds))
	for i, s := range seeds {
		ss[i] = strconv.FormatInt(s, 10)
	}
	return strings.Join(ss, sep)
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
