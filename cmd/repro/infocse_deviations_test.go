package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/experiment"
)

// infocseSetting is one setting of infocse.hcl that a mini or ci profile
// may change, read from the loaded graph, and the deviation of theirs that
// declares a change.
type infocseSetting struct {
	what, deviation string
	read            func(t *testing.T, x *experiment.Experiment) string
}

// paramOf reads parameter p of stage instance s (the same text for a
// parameter left out of the key at its default in both profiles).
func paramOf(s, p string) func(*testing.T, *experiment.Experiment) string {
	return func(t *testing.T, x *experiment.Experiment) string {
		v := param(node(t, x, 0, s), p)
		if v == cty.NilVal {
			return "(default)"
		}
		return v.GoString()
	}
}

// inputOf is the node that input port of stage instance s reads ("" when
// the port is not connected).
func inputOf(s, port string) func(*testing.T, *experiment.Experiment) string {
	return func(t *testing.T, x *experiment.Experiment) string {
		return node(t, x, 0, s).Inputs[port].Node
	}
}

// roundsOf is how many rounds repeat r runs: "at most N, until" for a
// repeat that stops by a metric, "N" for fixed rounds.
func roundsOf(r string) func(*testing.T, *experiment.Experiment) string {
	return func(t *testing.T, x *experiment.Experiment) string {
		if l := loop(x, r); l != nil {
			return fmt.Sprintf("at most %d, until", len(l.Rounds))
		}
		re := regexp.MustCompile(`^` + regexp.QuoteMeta(r) + `\[(\d+)\]\.`)
		n := map[string]bool{}
		for s := range x.IDMaps[0] {
			if m := re.FindStringSubmatch(s); m != nil {
				n[m[1]] = true
			}
		}
		if len(n) == 0 {
			t.Fatalf("%s: repeat %s has no rounds", x.File, r)
		}
		return fmt.Sprint(len(n))
	}
}

// plusStartsFineTuned: round 1 of InfoCSE++ (budget b) fine-tunes the
// selected InfoCSE as Table 2's InfoCSE row does, so that the fine-tuned
// InfoCSE is its first candidate.
func plusStartsFineTuned(b string) func(*testing.T, *experiment.Experiment) string {
	return func(t *testing.T, x *experiment.Experiment) string {
		first := node(t, x, 0, fmt.Sprintf(`pp["%s"][1].pp_ft`, b))
		return fmt.Sprint(sameNode(t, x, first, node(t, x, 0, fmt.Sprintf(`ft["infocse_%s"]`, b))))
	}
}

// TestInfoCSEProfilesDeclareWhatTheyKeep: infocse.hcl's paper-only
// deviations (retrieval_similarity, mind_bodies, idc_rounds; profiles =
// ["paper"]) do not print for mini and ci, so each setting of theirs that
// differs from the paper profile's is declared by a deviation of their
// own (one the paper profile does not print), and a deviation whose
// settings are all the paper profile's is not: BBC News for MIND, cosine /
// 0.05 with mean pooling, the sizes, the fixed IDC rounds (ci's single
// round for the SC and ICT rows among them), and InfoCSE++'s alternations.
// (TestPaperOnlyDeviations checks that the paper-only ones stay out.)
func TestInfoCSEProfilesDeclareWhatTheyKeep(t *testing.T) {
	settings := []infocseSetting{
		{"news.source", "bbc_news", paramOf("news", "source")},
		{"news_sentences.source", "bbc_news", paramOf("news_sentences", "source")},

		{"conpono.similarity", "cosine", paramOf("conpono", "similarity")},
		{"conpono.temperature", "cosine", paramOf("conpono", "temperature")},
		{"conpono.pooling", "cosine", paramOf("conpono", "pooling")},
		{"conpono.validation_similarity", "cosine", paramOf("conpono", "validation_similarity")},
		{`ft["ict_1k"].similarity`, "cosine", paramOf(`ft["ict_1k"]`, "similarity")},
		{`idc["ict"][1].idc_pairs.similarity`, "cosine", paramOf(`idc["ict"][1].idc_pairs`, "similarity")},
		{`kmeans[1].km_pairs.similarity`, "cosine", paramOf(`kmeans[1].km_pairs`, "similarity")},
		{`eval["conpono"].similarity`, "cosine", paramOf(`eval["conpono"]`, "similarity")},
		{`test["bert_1k"].similarity`, "cosine", paramOf(`test["bert_1k"]`, "similarity")},
		{"simcse.pooling", "cosine", paramOf("simcse", "pooling")},
		{"simcse.mlp_only_train", "cosine", paramOf("simcse", "mlp_only_train")},

		{"conpono's start", "scale", inputOf("conpono", "init")},
		{"ft_bert's start", "scale", inputOf(`ft_bert["bert_1k"]`, "init")},
		{"conpono.max_steps", "scale", paramOf("conpono", "max_steps")},
		{"conpono.batch_size", "scale", paramOf("conpono", "batch_size")},
		{"conpono.learning_rate", "scale", paramOf("conpono", "learning_rate")},
		{"ict.positive_max_length", "scale", paramOf("ict", "positive_max_length")},
		{"simcse.max_steps", "scale", paramOf("simcse", "max_steps")},
		{`ft["conpono_1k"].epochs`, "scale", paramOf(`ft["conpono_1k"]`, "epochs")},
		{`ft["conpono_1k"].max_sentences`, "scale", paramOf(`ft["conpono_1k"]`, "max_sentences")},
		{"news.limit", "scale", paramOf("news", "limit")},
		{"news_sentences.limit", "scale", paramOf("news_sentences", "limit")},
		{"unlabeled.size", "scale", paramOf("unlabeled", "size")},
		{"zero_shot.size", "scale", paramOf("zero_shot", "size")},

		{"Table 1's InfoCSE", "fixed_rounds", inputOf(`eval["infocse"]`, "encoder")},
		{"Table 2's InfoCSE start", "fixed_rounds", inputOf(`ft["infocse_1k"]`, "init")},
		{`repeat idc["conpono"]`, "fixed_rounds", roundsOf(`idc["conpono"]`)},
		{"repeat kmeans", "fixed_rounds", roundsOf("kmeans")},

		{`repeat idc["simcse"]`, "fixed_rounds", roundsOf(`idc["simcse"]`)},
		{`repeat idc["ict"]`, "fixed_rounds", roundsOf(`idc["ict"]`)},

		{`repeat pp["1k"]`, "plus_rounds", roundsOf(`pp["1k"]`)},
		{`repeat pp["all"]`, "plus_rounds", roundsOf(`pp["all"]`)},
		{`pp["1k"]'s first candidate is the fine-tuned InfoCSE`, "plus_rounds", plusStartsFineTuned("1k")},
		{`pp["all"]'s first candidate is the fine-tuned InfoCSE`, "plus_rounds", plusStartsFineTuned("all")},
	}
	paper := loadShipped(t, "infocse", "", "", nil)
	paperDevs := deviationNames(paper)
	for _, profile := range []string{"mini", "ci"} {
		x := loadShipped(t, "infocse", profile, "", nil)
		devs := deviationNames(x)
		differs := map[string][]string{} // deviation -> the settings that differ
		var names []string
		for _, s := range settings {
			if !slices.Contains(names, s.deviation) {
				names = append(names, s.deviation)
			}
			ours, theirs := s.read(t, x), s.read(t, paper)
			if ours != theirs {
				differs[s.deviation] = append(differs[s.deviation], fmt.Sprintf("%s = %s (paper profile %s)", s.what, ours, theirs))
			}
		}
		for _, d := range names {
			if declared := slices.Contains(devs, d); declared != (len(differs[d]) > 0) {
				t.Errorf("%s: deviation %q declared %v, but its settings that differ from the paper profile's are [%s]: want it declared exactly when one does",
					profile, d, declared, strings.Join(differs[d], "; "))
			}
			if slices.Contains(paperDevs, d) {
				t.Errorf("%s: deviation %q also prints for the paper profile; it must be the small profiles' own", profile, d)
			}
		}
	}
}
