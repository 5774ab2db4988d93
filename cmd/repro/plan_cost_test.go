package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// A training stage that will run gets its estimated cost in the plan: a
// line after the table, and "cost" in the JSON (the hand count is in
// registry/train's TestCostHandCount: 161,280 FLOPs an update).
func TestPlanShowsCost(t *testing.T) {
	file := workspace(t)
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`
stage "train" {
  uses         = "train.simcse_unsup"
  data         = stage.corpus.sentences
  layers       = 2
  hidden       = 8
  heads        = 2
  intermediate = 32
  max_length   = 4
  batch_size   = 2
  max_steps    = 5
}
`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, out, errs := repro(t, "plan", file)
	if code != 0 || !strings.Contains(out, "Estimated cost") ||
		!strings.Contains(out, "  train  ~806 kFLOP (5 updates x 161 kFLOP)  2 x 8 x 32 encoder (architecture), 2 sequence(s) of 4 tokens per example") {
		t.Fatalf("plan: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = repro(t, "plan", "--json", file)
	if code != 0 {
		t.Fatalf("plan --json: exit %d\n%s%s", code, out, errs)
	}
	var p struct {
		Stages []struct {
			ID   string
			Cost *struct {
				FLOPs          *float64 `json:"flops"`
				FLOPsPerUpdate float64  `json:"flops_per_update"`
				Updates        int      `json:"updates"`
				Text           string   `json:"text"`
			} `json:"cost"`
		} `json:"stages"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Stages {
		switch {
		case s.ID == "train":
			if c := s.Cost; c == nil || c.FLOPs == nil || *c.FLOPs != 806400 || c.FLOPsPerUpdate != 161280 || c.Updates != 5 {
				t.Errorf("train's cost: %+v\n%s", c, out)
			}
		case s.Cost != nil:
			t.Errorf("%s has a cost: %+v", s.ID, s.Cost)
		}
	}
}
