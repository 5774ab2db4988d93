package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"repro/runner"

	"golang.org/x/term"
)

// display renders runner events. On a terminal it redraws one line per
// stage in place; in a log (no TTY, CI=true or --plain) it prints a plain
// line per state change and throttled progress lines, so CI logs stay short
// and readable.
type display struct {
	w     io.Writer
	tty   bool
	start time.Time

	mu       sync.Mutex
	order    []string
	state    map[string]runner.Event
	lastLine map[string]time.Time // plain mode: last progress line per node
	warnings []string             // tty mode: shown under the summary line
	drawn    int                  // tty mode: lines drawn last time
	stop     chan struct{}
	done     chan struct{}
}

// isTerminal says whether progress may redraw lines on w: a terminal, and
// neither --plain, CI=true nor TERM=dumb.
func isTerminal(w io.Writer) bool {
	if global.plain || os.Getenv("CI") == "true" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newDisplay(w io.Writer, tty bool, order []string) *display {
	d := &display{w: w, tty: tty, start: time.Now(), order: order,
		state: map[string]runner.Event{}, lastLine: map[string]time.Time{},
		stop: make(chan struct{}), done: make(chan struct{})}
	if tty {
		go d.loop()
	} else {
		close(d.done)
	}
	return d
}

func (d *display) loop() {
	defer close(d.done)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			d.mu.Lock()
			d.redraw()
			d.mu.Unlock()
			return
		case <-t.C:
			d.mu.Lock()
			d.redraw()
			d.mu.Unlock()
		}
	}
}

// Close stops redrawing and leaves the final state on screen.
func (d *display) Close() {
	if d.tty {
		close(d.stop)
	}
	<-d.done
}

// Event is the runner's callback.
func (d *display) Event(ev runner.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ev.Kind == runner.EventWarning {
		// Not a state of the node: said once, kept on the screen.
		line := fmt.Sprintf("%-8s %s (%s): %s", "warning", ev.Node, ev.Type, ev.Status)
		if d.tty {
			d.warnings = append(d.warnings, line)
		} else {
			fmt.Fprintf(d.w, "[%7s] %s\n", shortDur(time.Since(d.start)), line)
		}
		return
	}
	prev, seen := d.state[ev.Node]
	progress := ev.Kind == runner.EventProgress
	if progress {
		// Shown as a running stage, keeping what its start event said.
		ev.Kind = runner.EventRunning
		if ev.Device == "" {
			ev.Device = prev.Device
		}
		if ev.Log == "" {
			ev.Log = prev.Log
		}
	}
	d.state[ev.Node] = ev
	if !seen {
		known := false
		for _, id := range d.order {
			if id == ev.Node {
				known = true
			}
		}
		if !known {
			d.order = append(d.order, ev.Node)
		}
	}
	if d.tty {
		return
	}
	// Plain lines: every state change; progress at most every 15 seconds.
	if seen && prev.Kind == ev.Kind && ev.Kind != runner.EventRunning {
		return
	}
	if progress {
		if ev.Total <= 0 && ev.Status == "" && ev.Done == 0 {
			return // nothing to say beyond "running"
		}
		if time.Since(d.lastLine[ev.Node]) < 15*time.Second && !(ev.Total > 0 && ev.Done >= ev.Total) {
			return
		}
	}
	if ev.Kind == runner.EventWaiting {
		return // too chatty for a log; the display shows it on a terminal
	}
	d.lastLine[ev.Node] = time.Now()
	fmt.Fprintf(d.w, "[%7s] %s\n", shortDur(time.Since(d.start)), d.line(ev))
}

func (d *display) redraw() {
	var b strings.Builder
	if d.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", d.drawn)
	}
	n := 0
	for _, l := range d.screen(d.height()) {
		// A line may hold several (a failed cluster job's log tail): clear
		// and count each, so the next redraw goes back far enough.
		for _, part := range strings.Split(l, "\n") {
			fmt.Fprintf(&b, "\x1b[2K%s\n", part)
			n++
		}
	}
	d.drawn = n
	io.WriteString(d.w, b.String())
}

// height is the terminal's height in lines (0: unknown, no limit).
func (d *display) height() int {
	if f, ok := d.w.(*os.File); ok {
		if _, h, err := term.GetSize(int(f.Fd())); err == nil {
			return h
		}
	}
	return 0
}

// screen is what the live display shows within height lines: finished
// stages (done, cached, not needed) collapse into one summary line --
// how many of all, elapsed, and the longest ETA among running stages --
// followed by the failed, running and waiting stages, as many as fit
// ("... and N more waiting" for the rest). height 0: no limit.
func (d *display) screen(height int) []string {
	var finished, ran, cached, mirrored int
	var active, waiting []string
	var eta time.Duration
	for _, id := range d.order {
		ev, ok := d.state[id]
		if !ok {
			ev = runner.Event{Kind: runner.EventWaiting, Node: id}
		}
		switch ev.Kind {
		case runner.EventDone:
			finished++
			ran++
		case runner.EventCached:
			finished++
			cached++
			if ev.Status == runner.MirrorStatus {
				mirrored++
			}
		case runner.EventStopped, runner.EventSkipped:
			finished++
		case runner.EventWaiting:
			waiting = append(waiting, d.line(ev))
		default:
			if ev.Kind == runner.EventRunning && ev.ETA > eta {
				eta = ev.ETA
			}
			active = append(active, d.line(ev))
		}
	}
	counts := fmt.Sprintf("%d ran, %d cached", ran, cached)
	if mirrored > 0 {
		counts += fmt.Sprintf(", %d of them from the mirror", mirrored)
	}
	summary := fmt.Sprintf("%d of %d stages finished (%s), elapsed %s", finished, len(d.order), counts, shortDur(time.Since(d.start)))
	if eta > 0 {
		summary += ", ETA " + shortDur(eta) + " for the running stages"
	}
	lines := append(append([]string{summary}, d.warnings...), active...)
	if height <= 0 {
		return append(lines, waiting...)
	}
	room := height - 1 - len(lines) // leave the cursor's line
	if room < 0 {
		return lines[:max(1, height-1)]
	}
	if len(waiting) <= room {
		return append(lines, waiting...)
	}
	if room > 0 {
		lines = append(lines, waiting[:room-1]...)
		lines = append(lines, fmt.Sprintf("... and %d more waiting", len(waiting)-(room-1)))
	}
	return lines
}

func (d *display) line(ev runner.Event) string {
	name := ev.Node
	if ev.Type != "" {
		name += " (" + ev.Type + ")"
	}
	switch ev.Kind {
	case runner.EventWaiting:
		s := fmt.Sprintf("%-8s %s", "waiting", name)
		if ev.Status != "" {
			s += ": " + ev.Status
		}
		return s
	case runner.EventCached:
		if ev.Status == runner.MirrorStatus {
			return fmt.Sprintf("%-8s %s: imported from the mirror", "cached", name)
		}
		return fmt.Sprintf("%-8s %s", "cached", name)
	case runner.EventRunning:
		s := fmt.Sprintf("%-8s %s", "running", name)
		if ev.Device != "" && ev.Device != "cpu" {
			s += " on " + ev.Device
		}
		if ev.Total > 0 {
			s += fmt.Sprintf(" %s %d/%d", bar(ev.Done, ev.Total, 20), ev.Done, ev.Total)
		} else if ev.Done > 0 {
			s += fmt.Sprintf(" %d", ev.Done)
		}
		if ev.Status != "" {
			s += " " + ev.Status
		}
		if ev.Elapsed > 0 {
			s += " " + shortDur(ev.Elapsed)
		}
		if ev.ETA > 0 {
			s += ", ETA " + shortDur(ev.ETA)
		}
		return s
	case runner.EventDone:
		return fmt.Sprintf("%-8s %s in %s", "done", name, shortDur(ev.Elapsed))
	case runner.EventFailed:
		s := fmt.Sprintf("%-8s %s: %v", "FAILED", name, ev.Err)
		if ev.Log != "" {
			s += " (log: " + ev.Log + ")"
		}
		return s
	case runner.EventSkipped:
		return fmt.Sprintf("%-8s %s: %v", "skipped", name, ev.Err)
	case runner.EventStopped:
		return fmt.Sprintf("%-8s %s: %v", "stopped", name, ev.Err)
	case runner.EventDecided:
		return fmt.Sprintf("%-8s repeat %s: %s", "until", ev.Node, ev.Status)
	}
	return name
}

func bar(done, total, width int) string {
	if total <= 0 {
		return ""
	}
	f := done * width / total
	if f > width {
		f = width
	}
	return "[" + strings.Repeat("#", f) + strings.Repeat(".", width-f) + "]"
}

func shortDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
