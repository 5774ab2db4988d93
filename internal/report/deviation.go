package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Deviation is a declared difference from the paper, printed under the
// table so that no number is read as the paper's method on the paper's data
// when it is not.
type Deviation struct {
	Name     string `json:"name"`
	What     string `json:"what"`
	Paper    string `json:"paper"`
	Ours     string `json:"ours"`
	Why      string `json:"why"`
	Evidence string `json:"evidence,omitempty"`
	// Tables are the tables it touches, as printed: a module's carry the
	// module's short name ("GenSE Table 2", dsl's qualifyTables), since
	// they are the module's tables, not the experiment's.
	Tables []string `json:"tables,omitempty"`
	// StandIns are the data directory's stand-in datasets read in the
	// paper's place because of it.
	StandIns []string `json:"stand_ins,omitempty"`
	// Profile is the profile that declares it; "" for the experiment's own.
	Profile string `json:"profile,omitempty"`
	// Modules are the module instances that declare it ("module.chat",
	// "module.chat.module.lm": how their stages' names start), absent for
	// the experiment's own; Source is the module's file, relative to the
	// experiment file's directory.
	Modules []string `json:"modules,omitempty"`
	Source  string   `json:"source,omitempty"`
}

// Same reports whether d and o are one declaration: the same name, declared
// by the same profile of the same file (the experiment's own, or one
// module's). A module's deviation may share its name with the
// experiment's.
func (d Deviation) Same(o Deviation) bool {
	return d.Name == o.Name && d.Profile == o.Profile && d.Source == o.Source && slices.Equal(d.Modules, o.Modules)
}

// from says where a module's deviation comes from: its instances and file;
// "" for the experiment's own.
func (d Deviation) from() string {
	if len(d.Modules) == 0 {
		return ""
	}
	return fmt.Sprintf("%s (%s)", strings.Join(d.Modules, ", "), d.Source)
}

// Deviations is a report's deviation list; it encodes as [] when empty, so
// a reader of --json can tell "none declared" from a report that predates
// the field only by the field itself.
type Deviations []Deviation

// MarshalJSON writes an empty list as [], never null.
func (ds Deviations) MarshalJSON() ([]byte, error) {
	if ds == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]Deviation(ds))
}

func (d Deviation) tables() string {
	if len(d.Tables) == 0 {
		return ""
	}
	return " (" + strings.Join(d.Tables, ", ") + ")"
}

// writeDeviationsText prints the deviation list, one block per deviation;
// nothing when there is none.
func writeDeviationsText(w io.Writer, ds []Deviation) {
	if len(ds) == 0 {
		return
	}
	fmt.Fprintf(w, "\ndeviations from the paper (%d):\n", len(ds))
	for _, d := range ds {
		fmt.Fprintf(w, "  %s%s: %s\n", d.Name, d.tables(), d.What)
		if from := d.from(); from != "" {
			fmt.Fprintf(w, "    from:  %s\n", from)
		}
		fmt.Fprintf(w, "    paper: %s\n    ours:  %s\n    why:   %s\n", d.Paper, d.Ours, d.Why)
		if d.Evidence != "" {
			fmt.Fprintf(w, "    evidence: %s\n", d.Evidence)
		}
		if len(d.StandIns) > 0 {
			fmt.Fprintf(w, "    stand-in data: %s\n", strings.Join(d.StandIns, ", "))
		}
	}
}

// writeDeviationsMarkdown writes the deviation list under its heading;
// nothing when there is none.
func writeDeviationsMarkdown(w io.Writer, ds []Deviation) {
	if len(ds) == 0 {
		return
	}
	fmt.Fprintf(w, "\n**Deviations from the paper**\n\n")
	WriteDeviationsMarkdown(w, ds)
}

// WriteDeviationsMarkdown writes ds as a bullet list, one line each (what,
// then the name and tables), as the markdown report does under its heading
// (repro docs lists a paper profile's with it).
func WriteDeviationsMarkdown(w io.Writer, ds []Deviation) {
	for _, d := range ds {
		tables := ""
		if len(d.Tables) > 0 {
			tables = "; " + strings.Join(d.Tables, ", ")
		}
		from := ""
		if len(d.Modules) > 0 {
			from = " of " + strings.Join(backquote(d.Modules), ", ") + " (`" + d.Source + "`)"
		}
		fmt.Fprintf(w, "- **%s** (`%s`%s%s): paper: %s; ours: %s; why: %s.", d.What, d.Name, from, tables, d.Paper, d.Ours, strings.TrimSuffix(d.Why, "."))
		if d.Evidence != "" {
			fmt.Fprintf(w, " Evidence: %s.", strings.TrimSuffix(d.Evidence, "."))
		}
		if len(d.StandIns) > 0 {
			fmt.Fprintf(w, " Stand-in data: %s.", strings.Join(d.StandIns, ", "))
		}
		fmt.Fprintln(w)
	}
}

func backquote(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return out
}
