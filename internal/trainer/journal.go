package trainer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// journal is a recipe's per-update records, one JSON line each, appended
// to a file beside the resumable state as the run goes. The state counts
// the updates it holds; when a run starts, the journal drops the lines of
// later updates (a run killed after writing them redoes those updates), so
// a resumed run ends with the same records as an uninterrupted one. With
// no path the records are kept in memory only.
type journal struct {
	path  string
	lines []json.RawMessage
	steps []int
	f     *os.File
}

// openJournal reads path's lines; a line cut short by a crash ends them.
func openJournal(path string) (*journal, error) {
	j := &journal{path: path}
	if path == "" {
		return j, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return j, nil
	}
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var s struct {
			Step *int `json:"step"`
		}
		if json.Unmarshal(sc.Bytes(), &s) != nil || s.Step == nil {
			break
		}
		j.lines = append(j.lines, json.RawMessage(bytes.Clone(sc.Bytes())))
		j.steps = append(j.steps, *s.Step)
	}
	return j, nil
}

// start keeps the records of the first step updates (those the loaded
// state holds) and rewrites the file with them.
func (j *journal) start(step int) error {
	n := len(j.lines)
	for n > 0 && j.steps[n-1] > step {
		n--
	}
	j.lines, j.steps = j.lines[:n], j.steps[:n]
	if j.path == "" {
		return nil
	}
	f, err := os.Create(j.path)
	if err != nil {
		return err
	}
	j.f = f
	for _, l := range j.lines {
		if err := j.write(l); err != nil {
			return err
		}
	}
	return nil
}

// add appends the record of update step.
func (j *journal) add(step int, rec any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	j.lines = append(j.lines, b)
	j.steps = append(j.steps, step)
	if j.f == nil {
		return nil
	}
	return j.write(b)
}

func (j *journal) write(b []byte) error {
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("%s: %w", j.path, err)
	}
	return nil
}

// sync puts the records on disk before a state snapshot counts them.
func (j *journal) sync() error {
	if j.f == nil {
		return nil
	}
	return j.f.Sync()
}

func (j *journal) close() {
	if j.f != nil {
		j.f.Close()
	}
}
