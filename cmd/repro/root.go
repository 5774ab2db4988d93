package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// version is the repro version recorded in every stage run's provenance.
var version = "0.1.0-dev"

// globalFlags are shared by every subcommand.
type globalFlags struct {
	cacheDir string // --cache-dir, else REPRO_CACHE, else .repro beside the experiment
	plain    bool   // --plain: no terminal redraws (implied when stdout is not a terminal or CI=true)
	cpuProf  string // --cpuprofile: write a Go CPU profile of the command (for `go tool pprof`)
}

var global globalFlags

// profFile is the open --cpuprofile file; stopProfile closes it after the
// command, whether it succeeded or not.
var profFile *os.File

func stopProfile() {
	if profFile != nil {
		pprof.StopCPUProfile()
		profFile.Close()
		profFile = nil
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "repro",
		Short: "Reproduce sentence-embedding papers' tables from declarative HCL experiments",
		Long: `repro runs an experiment's HCL file as a DAG of registered stages, caching every
stage's output by content hash so that only what changed runs again, and prints the
paper's table beside the reproduced one.

  repro run experiments/simcse.hcl --profile mini
  repro plan experiments/paser.hcl --set stage.mask.top_k=1,2,3
  repro check experiments/*.hcl --profile mini`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.PersistentFlags().StringVar(&global.cacheDir, "cache-dir", "", "cache directory (default: $REPRO_CACHE, else .repro/ beside the experiment file)")
	root.PersistentFlags().BoolVar(&global.plain, "plain", false, "plain line-by-line progress, no terminal redraws")
	root.PersistentFlags().StringVar(&global.cpuProf, "cpuprofile", "", "write a CPU profile of this command to `FILE` (inspect with go tool pprof)")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if global.cpuProf == "" {
			return nil
		}
		f, err := os.Create(global.cpuProf)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		profFile = f
		return nil
	}
	root.AddCommand(
		newStagesCmd(),
		newDataCmd(),
		newRunCmd(),
		newPlanCmd(),
		newGraphCmd(),
		newValidateCmd(),
		newProfilesCmd(),
		newResultsCmd(),
		newCheckCmd(),
		newCacheCmd(),
		newMirrorCmd(),
		newBaselineCmd(),
		newFmtCmd(),
		newDocsCmd(),
		newStageExecCmd(),
	)
	return root
}
