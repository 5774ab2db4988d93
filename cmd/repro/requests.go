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
// answers per model, with their cost from an experiment's price table, and
// the only way to drop answers.
func newCacheRequestsCmd() *cobra.Command {
	var lf loadFlags
	var drop bool
	var provider, model string
	cmd := &cobra.Command{
		Use:   "requests [FILE.hcl]",
		Short: "Language-model answers in the request cache: requests, tokens and cost per model; --drop deletes",
		Long: `Counts the answered language-model requests in the request cache, per provider and model,
with their tokens. Given an experiment file, the cost comes from the price tables of its stages
(parameter prices); without one, costs are not shown.

Nothing else ever deletes an answer (repro cache gc keeps them all): --drop deletes those of
--model (and --provider), or all of them, and they will be paid for again.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := "x.hcl"
			if len(args) == 1 {
				file = args[0]
			}
			// Counting reads; only --drop writes.
			open := openStoreRead
			if drop {
				open = openStore
			}
			c, err := open(file)
			if errors.Is(err, store.ErrNoCache) {
				return exitCode(1, "repro cache requests: %v", err)
			}
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			if drop {
				n, err := c.DropRequests(ctx, provider, model)
				if err != nil {
					return exitCode(1, "repro cache requests --drop: %v", err)
				}
				fmt.Fprintf(out, "dropped %d answer(s) from %s\n", n, c.Dir())
				return nil
			}
			if provider != "" || model != "" {
				return exitCode(1, "repro cache requests: --provider and --model select what --drop deletes")
			}
			prices := map[string]registry.RequestEstimate{}
			if len(args) == 1 {
				x, err := loadExperiment(file, &lf, defaultRegistry(), cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				if prices, err = x.Prices(ctx, c); err != nil {
					return exitCode(1, "repro cache requests: %v", err)
				}
			}
			stats, err := c.RequestStats(ctx)
			if err != nil {
				return exitCode(1, "repro cache requests: %v", err)
			}
			writeRequestStats(out, stats, prices, len(args) == 1)
			fmt.Fprintf(out, "in %s\n", c.Dir())
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().BoolVar(&drop, "drop", false, "delete answers (those of --model/--provider when given, else all): they will be paid for again")
	cmd.Flags().StringVar(&provider, "provider", "", "with --drop: only this provider's answers")
	cmd.Flags().StringVar(&model, "model", "", "with --drop: only this model's answers")
	return cmd
}

func writeRequestStats(w io.Writer, stats []store.RequestStats, prices map[string]registry.RequestEstimate, haveFile bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tMODEL\tREQUESTS\tPROMPT TOKENS\tCOMPLETION TOKENS\tCOST\tWAITED")
	var total float64
	var n int
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
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", s.Provider, s.Model, s.Requests, s.PromptTokens, s.CompletionTokens, cost, shortDur(s.Duration))
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d answer(s) cached", n)
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
