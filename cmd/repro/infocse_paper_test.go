package main

import (
	"fmt"
	"strings"
	"testing"

	"repro/experiment"
	"repro/graph"
)

// loop is the graph's loop of repeat name (nil when it has no until).
func loop(x *experiment.Experiment, name string) *graph.Loop {
	for _, l := range x.Graph.Loops {
		if l.Name == name {
			return l
		}
	}
	return nil
}

// TestInfoCSEPaperRounds: in the paper profile InfoCSE's IDC rounds stop
// by the paper's rule (validation R@5 stops improving, repeat ... until)
// and Table 1, the fine-tuning and Table 3's Partition and CP rows read the
// selected round, not a fixed round 2; Table 3's Iter-k rows keep fixed
// rounds whose stages are InfoCSE's own.
func TestInfoCSEPaperRounds(t *testing.T) {
	x := loadPaper(t, "infocse", "")
	l := loop(x, "infocse")
	if l == nil {
		t.Fatal("repeat infocse has no until: the IDC rounds do not stop by validation")
	}
	if len(l.Rounds) < 3 || l.Patience != 1 || strings.Join(l.Path, ".") != "r5" {
		t.Errorf("infocse loop: %d rounds, patience %d, metric %v", len(l.Rounds), l.Patience, l.Path)
	}
	metric := byID(t, x, l.MetricNode(1))
	if e := metric.Inputs["data"]; e.Node != "split" || e.Output != "validation" {
		t.Errorf("the rounds stop on %v, want the validation articles", e)
	}
	last := l.Rounds[len(l.Rounds)-1]
	lastModel := ""
	for _, id := range last {
		if strings.HasSuffix(id, ".infocse_train") {
			lastModel = id
		}
	}
	for _, s := range []string{`eval["infocse"]`, `ft["infocse_1k"]`, `ft["infocse_all"]`} {
		n := node(t, x, 0, s)
		port := "init"
		if s == `eval["infocse"]` {
			port = "encoder"
		}
		// A reader of repeat.infocse.last: the runner hands it the
		// selected round.
		if e := n.Inputs[port]; e.Node != lastModel {
			t.Errorf("%s.%s reads %v, want repeat.infocse.last (%s)", s, port, e, lastModel)
		}
	}
	for _, e := range x.Config.Expects {
		if strings.HasPrefix(e.Name, "t1_infocse[") || strings.HasPrefix(e.Name, "t3_partition[") || strings.HasPrefix(e.Name, "t3_cp[") {
			if e.Value.Stage != `eval["infocse"]` {
				t.Errorf(`%s reads %s, want eval["infocse"] (the selected round)`, e.Name, e.Value.Stage)
			}
		}
	}
	// Iter-1..3: fixed rounds of the same stages as InfoCSE's first three.
	if loop(x, `idc["conpono"]`) != nil {
		t.Error(`repeat idc["conpono"] (Table 3's Iter-k rows) stops by until; its rounds must be fixed`)
	}
	for r := 1; r <= 3; r++ {
		a, b := node(t, x, 0, fmt.Sprintf(`idc["conpono"][%d].idc_train`, r)), node(t, x, 0, fmt.Sprintf("infocse[%d].infocse_train", r))
		if !sameNode(t, x, a, b) {
			t.Errorf("round %d: idc_train and infocse_train differ", r)
		}
	}
}

// TestInfoCSEPaperPlusCandidates: InfoCSE++'s first candidate is the
// fine-tuned InfoCSE itself (Table 3's Fine-tuned row; the paper returns
// the best fine-tuned model), so round 1 of each InfoCSE++ loop fine-tunes
// the selected InfoCSE exactly as ft["infocse_*"] does and is validated before
// any further IDC round.
func TestInfoCSEPaperPlusCandidates(t *testing.T) {
	x := loadPaper(t, "infocse", "")
	for _, c := range []struct{ loop, ft string }{{`pp["1k"]`, `ft["infocse_1k"]`}, {`pp["all"]`, `ft["infocse_all"]`}} {
		l := loop(x, c.loop)
		if l == nil {
			t.Fatalf("repeat %s has no until", c.loop)
		}
		val := byID(t, x, l.MetricNode(1))
		cand := byID(t, x, val.Inputs["encoder"].Node)
		if !sameNode(t, x, cand, node(t, x, 0, c.ft)) {
			t.Errorf("%s round 1's candidate %s is not the fine-tuned InfoCSE (%s): %v", c.loop, cand.ID, c.ft, cand.Inputs)
		}
	}
}

// TestInfoCSEPaperSimilarity: retrieval ranks with the similarity each
// encoder trained with: the inner product (the paper profile's) for every
// encoder trained by train.infonce or train.headline, in the tables and in
// their model selection; SimCSE's, trained with the cosine, by the cosine.
func TestInfoCSEPaperSimilarity(t *testing.T) {
	x := loadPaper(t, "infocse", "")
	n := 0
	for _, nd := range x.Graph.Nodes {
		switch nd.Type.Name {
		case "evaluate.retrieval":
			n++
			want := "dot"
			if nd.Inputs["encoder"].Node == "simcse" { // SimCSE itself, zero-shot (not fine-tuned)
				want = ""
			}
			if got := str(nd, "similarity"); got != want {
				t.Errorf("%s (encoder %s): similarity %q, want %q", nd.ID, nd.Inputs["encoder"].Node, got, want)
			}
		case "train.infonce", "train.headline":
			if _, ok := nd.Inputs["validation"]; ok && (str(nd, "similarity") != "dot" || str(nd, "validation_similarity") != "dot") {
				t.Errorf("%s: trains by %q, selects by %q; want dot and dot", nd.ID, str(nd, "similarity"), str(nd, "validation_similarity"))
			}
		}
	}
	if n < 20 {
		t.Errorf("%d retrieval evaluations", n)
	}
}

// sameNode: a and b are the same stage instance in all but name (type,
// parameters, seed, and inputs from the same stages), so they have one
// cache key.
func sameNode(t *testing.T, x *experiment.Experiment, a, b *graph.Node) bool {
	t.Helper()
	if a.Type != b.Type || !a.Params.RawEquals(b.Params) || a.Seed != b.Seed || len(a.Inputs) != len(b.Inputs) {
		return false
	}
	for port, ea := range a.Inputs {
		eb, ok := b.Inputs[port]
		if !ok || ea.Output != eb.Output {
			return false
		}
		if ea.Node != eb.Node && !sameNode(t, x, byID(t, x, ea.Node), byID(t, x, eb.Node)) {
			return false
		}
	}
	return true
}
