package dsl

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A file written with for_each on repeat blocks loads into the same
// (type, identity) set as the same pipeline written block by block, in
// every profile: folding repeat blocks re-runs nothing.
func TestRepeatForEachLonghand(t *testing.T) {
	t.Parallel()
	for _, profile := range []string{"", "mini"} {
		long := loadFile(t, "testdata/repeat_foreach/longhand.hcl", Options{Profile: profile})
		short := loadFile(t, "testdata/repeat_foreach/foreach.hcl", Options{Profile: profile})
		a, b := typeIdentities(t, long.Variants[0]), typeIdentities(t, short.Variants[0])
		if !slices.Equal(a, b) {
			t.Errorf("profile %q: longhand and for_each differ:\n%s\n--\n%s", profile, strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
		if want := map[string]int{"": 33, "mini": 29}[profile]; len(a) != want {
			t.Errorf("profile %q: %d stages, want %d", profile, len(a), want)
		}
		var ls, lf []string
		for _, e := range long.Expects {
			ls = append(ls, identitiesByName(t, long.Variants[0])[e.Value.Stage])
		}
		for _, e := range short.Expects {
			lf = append(lf, identitiesByName(t, short.Variants[0])[e.Value.Stage])
		}
		if !slices.Equal(ls, lf) {
			t.Errorf("profile %q: the expects read other stages: %v, %v", profile, ls, lf)
		}
	}
}

func TestRepeatForEach(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/repeat_foreach/foreach.hcl", Options{})
	v := cfg.Variants[0]
	names := strings.Join(stageNames(v), " ")
	for _, n := range []string{`idc["a"][3].annotate`, `idc["a"][3].train`, `idc["b"][2].train`, `ft["x"][4].score`, `ft["y"][1].tune`, `eval["a"]`} {
		if v.Stage(n) == nil {
			t.Errorf("no stage %s in %s", n, names)
		}
	}
	if v.Stage(`idc["b"][3].train`) != nil {
		t.Errorf("idc[\"b\"] has 2 rounds: %s", names)
	}
	in := func(stage, input string) string {
		s := v.Stage(stage)
		if s == nil {
			return "no stage " + stage
		}
		r := s.Inputs[input]
		return r.Stage + "." + r.Output
	}
	for _, c := range [][3]string{
		{`idc["a"][1].annotate`, "model", "init_a.model"},            // start = each.value.model
		{`idc["b"][1].annotate`, "model", "init_b.model"},            //
		{`idc["a"][2].annotate`, "model", `idc["a"][1].train.model`}, // previous: this instance's round 1
		{`idc["b"][2].train`, "data", `idc["b"][2].annotate.pairs`},  // stage.S: this instance's, this round's
		{`ft["x"][1].tune`, "init", `idc["a"][3].train.model`},       // a computed key: repeat.idc[...].last
		{`ft["y"][1].tune`, "init", `idc["b"][2].train.model`},       //
		{`ft["y"][3].score`, "model", `ft["y"][3].tune.model`},       //
		{`eval["a"]`, "model", `idc["a"][3].train.model`},            // listed in a stage's for_each
		{`eval["b"]`, "model", `idc["b"][1].train.model`},            // round[N] of an instance
		{`ft["x"][2].tune`, "init", `ft["x"][1].tune.model`},         //
		{`idc["b"][2].annotate`, "documents", `docs.documents`},      // an outer stage
	} {
		if got := in(c[0], c[1]); got != c[2] {
			t.Errorf("%s.%s = %s, want %s", c[0], c[1], got, c[2])
		}
	}
	s := v.Stage(`idc["b"][2].train`)
	if s.Block != "train" || s.Repeat != "idc" || s.Key != "b" || s.Round != 2 {
		t.Errorf("instance fields = %q %q %q %d", s.Block, s.Repeat, s.Key, s.Round)
	}
	if a, b := num(t, v.Stage(`ft["x"][2].tune`).Params, "learning_rate"), num(t, v.Stage(`ft["y"][2].tune`).Params, "learning_rate"); a != 1e-3 || b != 2e-3 {
		t.Errorf("each.key in a parameter: %v %v", a, b)
	}
	// Each instance with until is its own loop.
	g := v.Graph
	if len(g.Loops) != 2 || g.Loops[0].Name != `ft["x"]` || g.Loops[1].Name != `ft["y"]` {
		t.Fatalf("loops %+v", g.Loops)
	}
	if got := g.Loops[1].Rounds[2]; !slices.Equal(got, []string{`ft["y"][3].tune`, `ft["y"][3].score`}) {
		t.Errorf("loop rounds %v", got)
	}
	if err := g.Validate(); err != nil {
		t.Error(err)
	}
	if e := cfg.Expects[1]; e.Name != "best[y]" || e.Value.Stage != `ft["y"][4].score` {
		t.Errorf("expect %s reads %s", e.Name, e.Value.Stage)
	}
	// --target: a repeat, one instance (quoted or not), one stage instance.
	for name, want := range map[string]int{"idc": 10, `idc["b"]`: 4, "idc[b]": 4, `ft["x"][2].tune`: 1, "ft": 16} {
		if got := v.Instances(name); len(got) != want {
			t.Errorf("Instances(%s) = %v, want %d", name, got, want)
		}
	}
}

// Overrides reach every instance (repeat.R.rounds, stage.S.ATTR), or one
// (repeat.R["KEY"].rounds, stage.S["KEY"].ATTR), from --set as from a
// profile; an ablation axis over one instance's rounds names its cells.
func TestRepeatForEachOverrides(t *testing.T) {
	t.Parallel()
	mini := loadFile(t, "testdata/repeat_foreach/foreach.hcl", Options{Profile: "mini"}).Variants[0]
	if mini.Stage(`idc["a"][2].train`) == nil || mini.Stage(`idc["a"][3].train`) != nil || mini.Stage(`idc["b"][2].train`) != nil {
		t.Errorf("profile rounds: %v", stageNames(mini))
	}
	if lr := num(t, mini.Stage(`idc["b"][1].train`).Params, "learning_rate"); lr != 0.1 {
		t.Errorf("stage.train in a profile: every instance; got %v", lr)
	}
	if x, y := num(t, mini.Stage(`ft["x"][1].tune`).Params, "max_steps"), num(t, mini.Stage(`ft["y"][4].tune`).Params, "max_steps"); x != 0 || y != 5 {
		t.Errorf("stage \"tune[\\\"y\\\"]\": instance y only; got x %v, y %v", x, y)
	}
	cfg := loadFile(t, "testdata/repeat_foreach/foreach.hcl", Options{Sets: []string{
		`repeat.idc["b"].rounds=1,4`, `stage.annotate["a"].top_k=5`,
	}})
	if len(cfg.Variants) != 2 {
		t.Fatalf("variants %d", len(cfg.Variants))
	}
	one, four := cfg.Variants[0], cfg.Variants[1]
	if one.Stage(`idc["b"][2].train`) != nil || four.Stage(`idc["b"][4].train`) == nil || four.Stage(`idc["a"][3].train`) == nil || four.Stage(`idc["a"][4].train`) != nil {
		t.Errorf("rounds of one instance: %v / %v", stageNames(one), stageNames(four))
	}
	if four.Name != `idc["b"].rounds=4` {
		t.Errorf("variant name %q", four.Name)
	}
	if a, b := num(t, one.Stage(`idc["a"][2].annotate`).Params, "top_k"), num(t, one.Stage(`idc["b"][1].annotate`).Params, "top_k"); a != 5 || b != 2 {
		t.Errorf("stage.annotate[\"a\"]: a %v, b %v", a, b)
	}
}

// Config.Repeats lists each instance with its rounds.
func TestRepeatForEachConfig(t *testing.T) {
	t.Parallel()
	cfg := loadFile(t, "testdata/repeat_foreach/foreach.hcl", Options{Profile: "mini"})
	var got []string
	for _, r := range cfg.Repeats {
		got = append(got, fmt.Sprintf("%s:%d", r.Name, r.Rounds))
	}
	if want := `idc["a"]:2 idc["b"]:1 ft["x"]:4 ft["y"]:4`; strings.Join(got, " ") != want {
		t.Errorf("repeats %s, want %s", strings.Join(got, " "), want)
	}
}
