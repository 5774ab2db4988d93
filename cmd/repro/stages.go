package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"repro/cmd/repro/view"
	"repro/dsl"
	"repro/experiment"
	"repro/registry"
	"repro/registry/builtin"

	"github.com/spf13/cobra"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

func newStagesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stages [TYPE]",
		Short: "List the registered stage types, or describe one: parameters, inputs, outputs",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg := builtin.Default()
			out := cmd.OutOrStdout()
			names := reg.Names()
			if len(args) == 1 {
				if _, ok := reg.Lookup(args[0]); !ok {
					return exitCode(exitFailure, "repro stages: unknown stage type %q.%s", args[0], dsl.Suggest(args[0], reg.Names()))
				}
				names = args
			}
			if asJSON {
				doc := view.StageTypes{FormatVersion: view.FormatVersion}
				for _, n := range names {
					t, _ := reg.Lookup(n)
					st, err := view.NewStageType(t, defaultJSON)
					if err != nil {
						return exitCode(exitFailure, "repro stages: %s: %v", n, err)
					}
					doc.Types = append(doc.Types, st)
				}
				return view.WriteJSON(out, doc)
			}
			if len(args) == 0 {
				writeStageList(out, reg)
				return nil
			}
			t, _ := reg.Lookup(args[0])
			return writeStage(out, t)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the stage types as JSON (parameters with types and defaults, inputs, outputs)")
	return cmd
}

// defaultJSON is a parameter's default as JSON (null when it has none that
// JSON can say).
func defaultJSON(p registry.Param) json.RawMessage {
	if p.Default == cty.NilVal || !p.Default.IsWhollyKnown() {
		return json.RawMessage("null")
	}
	b, err := ctyjson.Marshal(p.Default, p.Default.Type())
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

func writeStageList(w io.Writer, reg *registry.Registry) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tVERSION\tSUMMARY")
	for _, name := range reg.Names() {
		t, _ := reg.Lookup(name)
		fmt.Fprintf(tw, "%s\tv%d\t%s\n", name, t.Version, firstSentence(t.Doc))
	}
	tw.Flush()
	fmt.Fprintln(w, "\n`repro stages TYPE` shows a type's parameters, inputs and outputs.")
}

func writeStage(w io.Writer, t *registry.StageType) error {
	fmt.Fprintf(w, "%s (version %d)\n\n", t.Name, t.Version)
	if t.Doc != "" {
		fmt.Fprintf(w, "%s\n\n", wrap(t.Doc, 88, ""))
	}
	var flags []string
	if t.Seeded {
		flags = append(flags, "seeded (the stage's seed is part of its cache key)")
	}
	if t.Tensor {
		flags = append(flags, "tensor work (runs on the selected device)")
	}
	if len(flags) > 0 {
		fmt.Fprintf(w, "%s\n\n", strings.Join(flags, "; "))
	}
	ps, err := t.ParamSchema()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "Parameters:")
	if len(ps) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range ps {
		def := "required"
		if !p.Required {
			def = "default " + experiment.FormatValue(p.Default)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.Name, p.Type.FriendlyName(), def, p.Doc)
	}
	tw.Flush()
	ports := func(title string, pp []registry.Port) {
		fmt.Fprintf(w, "\n%s:\n", title)
		if len(pp) == 0 {
			fmt.Fprintln(w, "  (none)")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, p := range pp {
			opt := ""
			if p.Optional {
				opt = " (optional)"
			}
			fmt.Fprintf(tw, "  %s\t%s%s\t%s\n", p.Name, p.Kind, opt, p.Doc)
		}
		tw.Flush()
	}
	ports("Inputs", t.Inputs)
	ports("Outputs", t.Outputs)
	return nil
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 110 {
		s = s[:strings.LastIndexByte(s[:107], ' ')] + " ..."
	}
	return s
}

// wrap re-flows text to width columns, keeping blank-line paragraph breaks.
func wrap(s string, width int, indent string) string {
	var out []string
	for _, para := range strings.Split(strings.TrimSpace(s), "\n\n") {
		words := strings.Fields(para)
		line := indent
		var lines []string
		for _, wd := range words {
			if len(line)+len(wd)+1 > width && strings.TrimSpace(line) != "" {
				lines = append(lines, line)
				line = indent
			}
			if strings.TrimSpace(line) != "" {
				line += " "
			}
			line += wd
		}
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
		out = append(out, strings.Join(lines, "\n"))
	}
	return strings.Join(out, "\n\n")
}
