package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"repro/internal/mlm"
)

// stepLog records every update's loss (and evaluations) so that the
// pretraining curve is a function of the run alone: a file in the stage's
// work directory, one JSON line per update, appended as the run goes. A run
// that resumes from the trainer's saved state (taken after some update r)
// keeps the lines up to r and appends from r+1, so a killed-and-resumed run
// writes the same curve as an uninterrupted one.
type stepLog struct {
	path  string
	lines []stepLine
	f     *os.File
}

type stepLine struct {
	Step int       `json:"step"`
	Loss float64   `json:"loss"`
	LR   float64   `json:"lr"`
	Dev  *mlm.Eval `json:"dev,omitempty"`
	// NSP is the share of the update's pairs whose next-sentence label
	// the classifier got right (next_sentence only).
	NSP *float64 `json:"nsp_accuracy,omitempty"`
}

// openStepLog reads path's lines (none when path is "" or absent).
func openStepLog(path string) (*stepLog, error) {
	l := &stepLog{path: path}
	if path == "" {
		return l, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return l, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s stepLine
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			break // a line cut by a crash ends the log
		}
		l.lines = append(l.lines, s)
	}
	return l, nil
}

// add records update s; the first call drops what a resumed run redoes.
func (l *stepLog) add(s stepLine) error {
	if l.f == nil && l.path != "" {
		for len(l.lines) > 0 && l.lines[len(l.lines)-1].Step >= s.Step {
			l.lines = l.lines[:len(l.lines)-1]
		}
		f, err := os.Create(l.path)
		if err != nil {
			return err
		}
		l.f = f
		for _, old := range l.lines {
			if err := l.write(old); err != nil {
				return err
			}
		}
	}
	l.lines = append(l.lines, s)
	if l.f != nil {
		return l.write(s)
	}
	return nil
}

func (l *stepLog) write(s stepLine) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(l.f, "%s\n", b)
	return err
}

func (l *stepLog) close() {
	if l.f != nil {
		l.f.Close()
	}
}

// curve averages the training loss over windows of every updates (a point
// at every multiple of every, at every evaluation and at the last update).
func (l *stepLog) curve(every int) []curvePoint {
	var out []curvePoint
	sum, nsp, n, nn := 0.0, 0.0, 0, 0
	for i, s := range l.lines {
		sum += s.Loss
		n++
		if s.NSP != nil {
			nsp += *s.NSP
			nn++
		}
		if s.Dev != nil || s.Step%every == 0 || i == len(l.lines)-1 {
			pt := curvePoint{Step: s.Step, TrainLoss: sum / float64(n), LR: s.LR, Dev: s.Dev}
			if nn > 0 {
				acc := nsp / float64(nn)
				pt.NSP = &acc
			}
			out = append(out, pt)
			sum, nsp, n, nn = 0, 0, 0, 0
		}
	}
	return out
}

// lastNSP is the mean next-sentence accuracy of the last n updates that
// logged one; false when none did.
func (l *stepLog) lastNSP(n int) (float64, bool) {
	sum, k := 0.0, 0
	for i := len(l.lines) - 1; i >= 0 && k < n; i-- {
		if a := l.lines[i].NSP; a != nil {
			sum += *a
			k++
		}
	}
	if k == 0 {
		return 0, false
	}
	return sum / float64(k), true
}
