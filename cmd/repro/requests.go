package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"repro/experiment"
	"repro/registry"
	"repro/runner"
	"repro/store"

	"github.com/spf13/cobra"
)

// printRequestPlan prints what the stages that send language-model requests
// would send: requests, how many are already answered in the request
// cache, and the estimated tokens and cost of the rest. Nothing is sent.
func printRequestPlan(ctx context.Context, w io.Writer, st *store.Store, x *experiment.Experiment, entries []runner.PlanEntry) error {
	rps, err := x.PlanRequests(ctx, st, entries)
	if err != nil {
		return err
	}
	if len(rps) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nLanguage-model requests (estimated; plan sends nothing):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tMODEL\tREQUESTS\tCACHED\tTO SEND\tTOKENS IN/OUT\tCOST\tNOTE")
	var send int
	var in, out int64
	var cost float64
	priced := true
	for _, r := range rps {
		toSend := r.Requests - r.Cached
		n, sendText := fmt.Sprint(r.Requests), fmt.Sprint(toSend)
		if !r.Exact {
			n = "<= " + n
			if r.Requests == 0 {
				n, sendText = "?", "?"
			}
		}
		costText := "-"
		unknown := !r.Exact && r.Requests == 0
		if unknown {
			costText = "?"
			priced = false
		} else if r.Priced {
			costText = fmt.Sprintf("$%.2f", r.Cost())
			cost += r.Cost()
		} else if toSend > 0 {
			priced = false
			costText = "no price"
		}
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%d\t%s\t%s/%s\t%s\t%s\n", r.ID, r.Provider, r.Model, n, r.Cached, sendText,
			humanCount(r.PromptTokens), humanCount(r.CompletionTokens), costText, r.Note)
		send += toSend
		in += r.PromptTokens
		out += r.CompletionTokens
	}
	tw.Flush()
	total := fmt.Sprintf("$%.2f", cost)
	if !priced {
		total += " plus what the rows without a cost need"
	}
	fmt.Fprintf(w, "\n%d request(s) to send, about %s prompt and %s completion tokens, estimated %s.\n",
		send, humanCount(in), humanCount(out), total)
	return nil
}

func humanCount(n int64) string {
	switch {
	case n < 10000:
		return fmt.Sprint(n)
	case n < 10_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// newCacheRequestsCmd is `repro cache requests`: the request cache's
// answers per model, with their cost from an experiment's price table, the
// answers recorded as failures, and the only way to drop answers.
func newCacheRequestsCmd() *cobra.Command {
	var lf loadFlags
	var drop, failed bool
	var f store.RequestFilter
	cmd := &cobra.Command{
		Use:   "requests [FILE.hcl]",
		Short: "Language-model answers in the request cache: requests, failures, tokens and cost per model; --failed lists failures; --drop deletes",
		Long: `Counts the answered language-model requests in the request cache, per provider and model,
with their tokens and the answers recorded as failures (the stage could not parse them; a
re-run replays them as failures and does not pay for them again). Given an experiment file,
the cost comes from the price tables of its stages (parameter prices); without one, costs are
not shown. --failed lists the failures: request key, stage, model, reason and the answer.

Nothing else ever deletes an answer (repro cache gc keeps them all): --drop deletes those
selected by --model, --provider, --stage (a stage's name, or its key's first 8+ hex digits),
--key (a request key or its first 8+ hex digits) and --failed, or all of them, and they will
be paid for again.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := "x.hcl"
			if len(args) == 1 {
				file = args[0]
			}
			f.Failed = failed
			// Counting reads; only --drop writes.
			open := openStoreRead
			if drop {
				open = openStore
			}
			c, err := open(file)
			if errors.Is(err, store.ErrNoCache) {
				return exitCode(exitFailure, "repro cache requests: %v", err)
			}
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			if drop {
				n, err := c.DropRequests(ctx, f)
				if err != nil {
					return exitCode(exitFailure, "repro cache requests --drop: %v", err)
				}
				fmt.Fprintf(out, "dropped %d answer(s) from %s\n", n, c.Dir())
				return nil
			}
			if failed {
				fails, err := c.RequestFailures(ctx, f)
				if err != nil {
					return exitCode(exitFailure, "repro cache requests --failed: %v", err)
				}
				writeRequestFailures(out, fails)
				return nil
			}
			if f != (store.RequestFilter{}) {
				return exitCode(exitFailure, "repro cache requests: --provider, --model, --stage and --key select what --drop deletes or --failed lists")
			}
			prices := map[string]registry.RequestEstimate{}
			if len(args) == 1 {
				x, err := loadExperiment(file, &lf, defaultRegistry(), cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				if prices, err = x.Prices(ctx, c); err != nil {
					return exitCode(exitFailure, "repro cache requests: %v", err)
				}
			}
			stats, err := c.RequestStats(ctx)
			if err != nil {
				return exitCode(exitFailure, "repro cache requests: %v", err)
			}
			writeRequestStats(out, stats, prices, len(args) == 1)
			fmt.Fprintf(out, "in %s\n", c.Dir())
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().BoolVar(&drop, "drop", false, "delete answers (those selected by the other flags, else all): they will be paid for again")
	cmd.Flags().BoolVar(&failed, "failed", false, "only the answers recorded as failures: list them, or with --drop delete them")
	cmd.Flags().StringVar(&f.Provider, "provider", "", "only this provider's answers")
	cmd.Flags().StringVar(&f.Model, "model", "", "only this model's answers")
	cmd.Flags().StringVar(&f.Stage, "stage", "", "only the answers this stage stored (its name, or its stage key's first 8+ hex digits)")
	cmd.Flags().StringVar(&f.Key, "key", "", "only this request (its key, or the key's first 8+ hex digits)")
	return cmd
}

// writeRequestFailures lists stored failures, one a line, with the start
// of the unusable answer (on one line).
func writeRequestFailures(w io.Writer, fails []store.RequestFailure) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REQUEST\tSTAGE\tPROVIDER/MODEL\tREASON\tANSWER")
	for _, f := range fails {
		stage := f.Stage
		if stage == "" {
			stage = "-"
		}
		answer := strings.Join(strings.Fields(f.Answer), " ")
		if len(answer) > 60 {
			cut := 60
			for cut > 0 && !utf8.RuneStart(answer[cut]) {
				cut--
			}
			answer = answer[:cut] + "..."
		}
		fmt.Fprintf(tw, "%.12s\t%s\t%s/%s\t%s\t%q\n", f.Key, stage, f.Provider, f.Model, f.Failure, answer)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d failure(s); repro cache requests --drop --failed [--stage S | --key K] to ask again\n", len(fails))
}

func writeRequestStats(w io.Writer, stats []store.RequestStats, prices map[string]registry.RequestEstimate, haveFile bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tMODEL\tREQUESTS\tFAILED\tPROMPT TOKENS\tCOMPLETION TOKENS\tCOST\tWAITED")
	var total float64
	var n, failures int
	unpriced := []string{}
	for _, s := range stats {
		cost := "-"
		if p, ok := prices[s.Provider+"/"+s.Model]; ok {
			v := (float64(s.PromptTokens)*p.InputPer1K + float64(s.CompletionTokens)*p.OutputPer1K) / 1000
			cost = fmt.Sprintf("$%.4f", v)
			total += v
		} else {
			unpriced = append(unpriced, s.Model)
		}
		n += s.Requests
		failures += s.Failures
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", s.Provider, s.Model, s.Requests, s.Failures, s.PromptTokens, s.CompletionTokens, cost, shortDur(s.Duration))
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d answer(s) cached", n)
	if failures > 0 {
		fmt.Fprintf(w, ", of which %d failure(s) (answers the stage could not parse: repro cache requests --failed)", failures)
	}
	if len(stats) > 0 && len(unpriced) < len(stats) {
		fmt.Fprintf(w, ", worth $%.4f at the experiment's prices", math.Round(total*1e4)/1e4)
	}
	fmt.Fprintln(w)
	if len(unpriced) > 0 {
		sort.Strings(unpriced)
		if haveFile {
			fmt.Fprintf(w, "no price in the experiment for: %s\n", strings.Join(unpriced, ", "))
		} else {
			fmt.Fprintln(w, "name the experiment file (repro cache requests FILE.hcl) for costs from its price tables")
		}
	}
}
