package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// WriteGrid prints the table paper-shaped for a terminal, as WriteMarkdown
// does for a file: one block per group of consecutive rows with the same
// columns, each cell "ours (paper)", fitted to width columns. A block too
// wide is split into column chunks, each repeating the row labels; a row
// label longer than a third of the width is shortened with "...". The
// per-cell detail (difference, tolerance, verdict) is WriteText's.
func WriteGrid(w io.Writer, r *Report, width int) {
	if width < 40 {
		width = 40
	}
	g := groupCells(r)
	text := func(c Cell) string {
		if c.Pending != "" {
			if c.HasPaper {
				return "(" + num(c.Paper, true) + ")"
			}
			return "pending"
		}
		ours := num(c.Ours, c.HasOurs)
		if c.Count && c.HasOurs {
			ours = fmt.Sprintf("%.0f", c.Ours)
		}
		if c.HasPaper {
			return fmt.Sprintf("%s (%s)", ours, num(c.Paper, true))
		}
		return ours
	}
	for _, b := range g.blocks {
		cols, group := b.cols, b.rows
		colW := make([]int, len(cols))
		total := 0
		for k, cl := range cols {
			colW[k] = utf8.RuneCountInString(cl)
			for _, rw := range group {
				colW[k] = max(colW[k], utf8.RuneCountInString(text(g.cell[[2]string{rw, cl}])))
			}
			total += 2 + colW[k]
		}
		// Row labels as long as they are, within what the columns leave
		// (at least a third of the width).
		labelW := 0
		for _, rw := range group {
			labelW = max(labelW, utf8.RuneCountInString(rw))
		}
		labelW = min(labelW, max(width/3, width-total))
		// Chunks of columns that fit beside the labels.
		for start := 0; start < len(cols); {
			end, used := start, labelW
			for end < len(cols) && (end == start || used+2+colW[end] <= width) {
				used += 2 + colW[end]
				end++
			}
			fmt.Fprintln(w)
			line := []string{pad("", labelW)}
			for k := start; k < end; k++ {
				line = append(line, padLeft(cols[k], colW[k]))
			}
			fmt.Fprintln(w, strings.TrimRight(strings.Join(line, "  "), " "))
			for _, rw := range group {
				line := []string{pad(shorten(rw, labelW), labelW)}
				for k := start; k < end; k++ {
					line = append(line, padLeft(text(g.cell[[2]string{rw, cols[k]}]), colW[k]))
				}
				fmt.Fprintln(w, strings.TrimRight(strings.Join(line, "  "), " "))
			}
			start = end
		}
	}
	if len(g.blocks) > 0 {
		fmt.Fprintln(w, "\nEach cell: ours (paper); (paper) alone: a row only the paper gives.")
	}
}

func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

func padLeft(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return strings.Repeat(" ", n-k) + s
	}
	return s
}

func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-3]) + "..."
}

// Verdicts counts the judged cells by verdict, in a fixed order, for the
// line under a run's table: "66 ok, 3 below paper, 24 pending".
func Verdicts(js []Judged) string {
	order := []Verdict{OK, BelowPaper, AbovePaper, Regressed, Improved, Missing, NoBaseline, NotComparable, Stale, NoPaper, Pending}
	n := map[Verdict]int{}
	for _, j := range js {
		n[j.Verdict]++
	}
	var parts []string
	for _, v := range order {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	return strings.Join(parts, ", ")
}

// cellGroups are a report's cells as tables: blocks of consecutive rows
// that have the same columns, and each cell by (row, column).
type cellGroups struct {
	blocks []cellBlock
	cell   map[[2]string]Cell
}

type cellBlock struct{ cols, rows []string }

func groupCells(r *Report) cellGroups {
	var rows []string
	rowCols := map[string][]string{}
	g := cellGroups{cell: map[[2]string]Cell{}}
	for _, c := range r.Cells {
		if _, ok := rowCols[c.Row]; !ok {
			rows = append(rows, c.Row)
		}
		if _, dup := g.cell[[2]string{c.Row, c.Column}]; !dup {
			rowCols[c.Row] = append(rowCols[c.Row], c.Column)
		}
		g.cell[[2]string{c.Row, c.Column}] = c
	}
	for i := 0; i < len(rows); {
		cols := rowCols[rows[i]]
		j := i + 1
		for j < len(rows) && slices.Equal(rowCols[rows[j]], cols) {
			j++
		}
		g.blocks = append(g.blocks, cellBlock{cols: cols, rows: rows[i:j]})
		i = j
	}
	return g
}
