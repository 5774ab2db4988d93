package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"repro/runner"
)

// The live display fits the terminal: finished stages collapse into one
// summary line, and the waiting ones are cut to what fits.
func TestDisplayFitsTheTerminal(t *testing.T) {
	var order []string
	for i := 0; i < 60; i++ {
		order = append(order, fmt.Sprintf("s%02d", i))
	}
	d := newDisplay(io.Discard, false, order)
	for i := 0; i < 30; i++ {
		kind := runner.EventDone
		if i%3 == 0 {
			kind = runner.EventCached
		}
		d.Event(runner.Event{Kind: kind, Node: order[i], Type: "t"})
	}
	d.Event(runner.Event{Kind: runner.EventRunning, Node: order[30], Type: "train.mlm"})
	d.Event(runner.Event{Kind: runner.EventProgress, Node: order[30], Done: 5, Total: 10, ETA: 90 * time.Second})
	lines := d.screen(12)
	if len(lines) != 11 {
		t.Fatalf("%d lines for a 12-line terminal:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if !strings.HasPrefix(lines[0], "30 of 60 stages finished (20 ran, 10 cached), elapsed ") || !strings.HasSuffix(lines[0], ", ETA 1m30s for the running stages") {
		t.Errorf("summary line %q", lines[0])
	}
	if !strings.Contains(lines[1], "running  s30") || lines[10] != "... and 21 more waiting" {
		t.Errorf("lines:\n%s", strings.Join(lines, "\n"))
	}
	if all := d.screen(0); len(all) != 1+1+29 {
		t.Errorf("no height limit: %d lines", len(all))
	}
}
