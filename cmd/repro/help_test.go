package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// commands lists every command under root, depth first, by its path.
func commands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
			continue
		}
		out = append(out, commands(sub)...)
	}
	return out
}

// Every command's help reads right: a flag's argument name (pflag takes
// the first backquoted word of its usage) is one word, so a usage string
// that quotes a command does not turn into "--json repro check --report";
// the whole help text is held by a golden file.
func TestHelpText(t *testing.T) {
	global = globalFlags{}
	root := newRootCmd()
	var all strings.Builder
	for _, c := range commands(root) {
		check := func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			if strings.ContainsAny(name, " /.") {
				t.Errorf("%s --%s: argument name %q (a backquoted phrase in its usage)", c.CommandPath(), f.Name, name)
			}
		}
		c.LocalFlags().VisitAll(check)
		args := append(strings.Fields(strings.TrimPrefix(c.CommandPath(), "repro")), "--help")
		code, out, errs := repro(t, args...)
		if code != 0 || errs != "" {
			t.Errorf("%s --help: exit %d, stderr %q", c.CommandPath(), code, errs)
		}
		all.WriteString("==== " + c.CommandPath() + " --help\n" + out + "\n")
	}
	golden(t, "help.golden", all.String())
}
