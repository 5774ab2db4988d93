package dino

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"repro/internal/rows"
)

func gp(x1, x2 string, label float64, x int) rows.GeneratedPair {
	return rows.GeneratedPair{Sentence1: x1, Sentence2: x2, Label: label, Instruction: label, Origin: "generated", X1: x}
}

func TestInstruction(t *testing.T) {
	t.Parallel()
	got := Instruction(Template, Labels[0].Instruction, "A man is playing a flute.")
	want := "Task: Write two sentences that mean the same thing.\nSentence 1: \"A man is playing a flute.\"\nSentence 2: \""
	if got != want {
		t.Errorf("I_1(x1) = %q, want %q", got, want)
	}
	if got := X1Prompt(Template, Labels[2].Instruction); got != "Task: Write two sentences that are on completely different topics.\nSentence 1: \"" {
		t.Errorf("x1 prompt %q", got)
	}
	for _, bad := range []string{"no placeholders", "[I] only", "[X] only", "[I] [X] [X]"} {
		if CheckTemplate(bad) == nil {
			t.Errorf("template %q accepted", bad)
		}
	}
	if cl := counterlabels(Labels, 2); len(cl) != 2 || cl[0] != 0 || cl[1] != 1 {
		t.Errorf("CL(0) = %v, want labels 1 and 0.5", cl)
	}
	if cl := counterlabels(Labels, 0); len(cl) != 0 {
		t.Errorf("CL(1) = %v, want none", cl)
	}
}

func TestPostProcessing(t *testing.T) {
	t.Parallel()
	ps := []rows.GeneratedPair{gp("a", "a ", 1, 0), gp("a", "b", 1, 0), gp("c", "d", 0, 1), gp("c", "e", 0.5, 1), gp("f", "g", 0, 2)}
	kept, dropped := DropIdentical(ps)
	if dropped != 1 || len(kept) != 4 || kept[0].Sentence2 != "b" {
		t.Errorf("drop identical: %d dropped, %+v", dropped, kept)
	}
	sm := Smooth(kept, 0.1, 0.9)
	if sm[0].Label != 0.9 || sm[1].Label != 0.1 || sm[2].Label != 0.5 || kept[0].Label != 1 {
		t.Errorf("smooth: %+v (input %+v)", sm, kept)
	}
	aug, err := Augment(sm, 2, 0, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if len(aug) != 4+3*2 {
		t.Fatalf("augment: %d rows, want 10", len(aug))
	}
	for _, p := range aug[4:] {
		if p.Origin != "augmented" || p.Label != 0 {
			t.Errorf("augmented row %+v", p)
		}
		// x2 comes from an entry with another x1.
		for _, q := range sm {
			if q.Sentence2 == p.Sentence2 && q.Sentence1 == p.Sentence1 {
				t.Errorf("augmented x2 %q drawn from its own x1 %q", p.Sentence2, p.Sentence1)
			}
		}
	}
	if _, err := Augment(sm[:1], 2, 0, rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Error("augmentation of one x1 accepted")
	}
	tr, va, err := Split(aug, 0.1, rand.New(rand.NewPCG(3, 4)))
	if err != nil || len(tr) != 9 || len(va) != 1 {
		t.Errorf("split: %d + %d, %v", len(tr), len(va), err)
	}
	tr2, va2, _ := Split(aug, 0.1, rand.New(rand.NewPCG(3, 4)))
	if !reflect.DeepEqual(va2[0], va[0]) || !reflect.DeepEqual(tr2[0], tr[0]) {
		t.Error("the same seed split differently")
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	ts := []rows.Triplet{{Anchor: "A man plays.", Positive: "Someone plays.", Negative: "Nobody plays."},
		{Anchor: "Dogs run.", Positive: "Animals run.", Negative: ""}}
	texts, err := Render(ts, Template, Labels, `"`, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		Instruction(Template, "mean the same thing", "A man plays.") + `Someone plays."`,
		Instruction(Template, "are somewhat similar", "A man plays.") + `Nobody plays."`,
		Instruction(Template, "are on completely different topics", "A man plays.") + `Animals run."`,
		Instruction(Template, "mean the same thing", "Dogs run.") + `Animals run."`,
		Instruction(Template, "are on completely different topics", "Dogs run.") + `Someone plays."`,
	}
	if strings.Join(texts, "\n--\n") != strings.Join(want, "\n--\n") {
		t.Errorf("render:\n%s\nwant\n%s", strings.Join(texts, "\n--\n"), strings.Join(want, "\n--\n"))
	}
}
