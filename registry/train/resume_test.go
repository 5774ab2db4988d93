package train

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"repro/internal/text/mask"
	"repro/internal/text/rake"
	"repro/internal/trainer"
	"repro/registry"
)

// resumeCase is one training configuration interrupted after update k.
type resumeCase struct {
	name   string // case name
	typ    string // stage type
	set    map[string]cty.Value
	inputs func(t *testing.T) map[string]registry.Artifact
	k      int
}

// resumeCases covers every train.* type (TestResumeEveryType checks that
// none is missing), each with a dev set so that the evaluation history and
// the best weights cross the interruption too.
func resumeCases() []resumeCase {
	real := func(nSent, nTrip int, port string) func(t *testing.T) map[string]registry.Artifact {
		return func(t *testing.T) map[string]registry.Artifact {
			d := loadReal(t, nSent, nTrip, 100)
			data := d.wiki
			if nTrip > 0 {
				data = d.nli
			}
			return map[string]registry.Artifact{port: data, "dev": d.dev}
		}
	}
	headlines := func(docs bool) func(t *testing.T) map[string]registry.Artifact {
		return func(t *testing.T) map[string]registry.Artifact {
			train, val := bbc(t, 40)
			data := artifact(t, registry.KindDocPairs, registry.FilePairs, neighbourPairs(train))
			if docs {
				data = artifact(t, registry.KindDocuments, registry.FileDocuments, train)
			}
			return map[string]registry.Artifact{"data": data, "validation": artifact(t, registry.KindDocuments, registry.FileDocuments, val)}
		}
	}
	wikiDev := func(nTrain, nDev int) func(t *testing.T) map[string]registry.Artifact {
		return func(t *testing.T) map[string]registry.Artifact {
			d := loadReal(t, nTrain, 0, 0)
			wiki, _ := d.c.Wiki()
			return map[string]registry.Artifact{"data": d.wiki, "dev": sentencesArtifact(t, wiki[nTrain:nTrain+nDev])}
		}
	}
	paserIn := func(t *testing.T) map[string]registry.Artifact {
		data, dev, _ := paserData(t, 200)
		return map[string]registry.Artifact{"data": data, "dev": dev}
	}
	paserSupIn := func(t *testing.T) map[string]registry.Artifact {
		data, dev, _ := paserData(t, 200)
		unsup, _, err := stageRun{name: "train.paser", set: tinyPaSeR(), seed: 3, inputs: map[string]registry.Artifact{"data": data}}.run(t)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := useData(t).NLI("snli_dev")
		if err != nil {
			t.Fatal(err)
		}
		ts = ts[:96]
		var masked []mask.MaskedPair
		for _, tr := range ts[:50] {
			mp, err := rake.MaskTopK(tr.Anchor, 3)
			if err != nil {
				t.Fatal(err)
			}
			masked = append(masked, mp)
		}
		return map[string]registry.Artifact{
			"triplets": artifact(t, registry.KindTriplets, registry.FileTriplets, ts),
			"masked":   artifact(t, registry.KindMaskedPairs, registry.FilePairs, masked),
			"init":     {Kind: registry.KindEncoder, Dir: unsup},
			"dev":      dev,
		}
	}
	lm := func(t *testing.T) map[string]registry.Artifact {
		train, dev := lmTexts(t)
		return map[string]registry.Artifact{"data": train, "dev": dev}
	}
	seq := func(t *testing.T) map[string]registry.Artifact {
		train, dev := headTask(t)
		return map[string]registry.Artifact{"data": train, "dev": dev}
	}
	genDisc := func(t *testing.T) map[string]registry.Artifact {
		train, dev, _ := genDiscTask(t)
		return map[string]registry.Artifact{"data": train, "dev": dev}
	}
	cosine := func(t *testing.T) map[string]registry.Artifact {
		ps, dev := cosinePairs()
		return cosineRun(t, ps, dev).inputs
	}
	span := tinyT5(map[string]cty.Value{"max_length": cty.NumberIntVal(24), "max_steps": cty.NumberIntVal(8), "eval_every": cty.NumberIntVal(4),
		"dropout": cty.NumberFloatVal(0.1)})
	delete(span, "max_source_length")
	delete(span, "max_target_length")
	steps := func(n, every int) map[string]cty.Value {
		return map[string]cty.Value{"max_steps": cty.NumberIntVal(int64(n)), "eval_every": cty.NumberIntVal(int64(every))}
	}
	return []resumeCase{
		{"simcse_unsup", "train.simcse_unsup", tiny(nil), real(200, 0, "data"), 3},
		{"simcse_sup", "train.simcse_sup", tiny(nil), real(0, 200, "data"), 3},
		{"infonce", "train.infonce", contrastTiny(nil), headlines(false), 3},
		{"headline", "train.headline", contrastTiny(map[string]cty.Value{"batch_size": cty.NumberIntVal(8), "max_sentences": cty.NumberIntVal(3)}), headlines(true), 4},
		{"mlm", "train.mlm", tinyMLM(steps(12, 4)), wikiDev(300, 40), 7},
		{"mlm_next_sentence", "train.mlm", tinyMLM(map[string]cty.Value{"next_sentence": cty.True, "max_steps": cty.NumberIntVal(12), "eval_every": cty.NumberIntVal(4)}), wikiDev(300, 40), 6},
		{"causal_lm", "train.causal_lm", tinyLM(map[string]cty.Value{"max_steps": cty.NumberIntVal(8), "eval_every": cty.NumberIntVal(4), "dropout": cty.NumberFloatVal(0.1)}), lm, 5},
		{"cosine_mse", "train.cosine_mse", cosineSet(), cosine, 4},
		{"seq2seq", "train.seq2seq", tinyT5(map[string]cty.Value{"max_steps": cty.NumberIntVal(8), "eval_every": cty.NumberIntVal(4), "dropout": cty.NumberFloatVal(0.1)}), seq, 5},
		{"seq2seq_acc_minus_ppl", "train.seq2seq", tinyT5(map[string]cty.Value{"select": cty.StringVal("acc_minus_ppl"), "ppl_weight": cty.NumberFloatVal(2.5),
			"max_steps": cty.NumberIntVal(9), "eval_every": cty.NumberIntVal(3)}), genDisc, 4},
		{"span_corruption", "train.span_corruption", span, lm, 5},
		{"t5_contrastive", "train.t5_contrastive", tinyT5Enc(steps(8, 4)), real(0, 200, "data"), 5},
		{"paser", "train.paser", tinyPaSeR(), paserIn, 5},
		{"paser_sup", "train.paser_sup", map[string]cty.Value{"decoder_layers": cty.NumberIntVal(1), "batch_size": cty.NumberIntVal(16),
			"max_steps": cty.NumberIntVal(4), "eval_every": cty.NumberIntVal(2), "alpha": cty.NumberFloatVal(0.5)}, paserSupIn, 3},
	}
}

// TestResumeEveryType: for every training type, a run cancelled after
// update k (as Ctrl-C or a time limit's SIGTERM cancels it) and run again
// with the same work directory continues from update k+1 -- it does not
// start over -- and writes every output byte for byte as an uninterrupted
// run does.
func TestResumeEveryType(t *testing.T) {
	cases := resumeCases()
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.typ] = true
	}
	var missing []string
	for _, n := range allTypes().Names() {
		if strings.HasPrefix(n, "train.") && !covered[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("no resume case for %v", missing)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.inputs(t)
			run := func(work string) (string, error) {
				out, _, err := stageRun{name: c.typ, set: c.set, seed: 5, work: work, inputs: in}.run(t)
				return filepath.Dir(out), err // every output port's directory
			}
			want, err := run("")
			if err != nil {
				t.Fatal(err)
			}
			work := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			err = stageRun{name: c.typ, set: c.set, seed: 5, work: work, inputs: in}.runCtx(t, ctx, func(done int) {
				if done == c.k {
					cancel()
				}
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: %v", err)
			}
			if _, err := os.Stat(filepath.Join(work, trainer.StateFile)); err != nil {
				t.Fatalf("no saved state after the interruption: %v", err)
			}
			first := 0
			out, _, err := stageRun{name: c.typ, set: c.set, seed: 5, work: work, inputs: in}.exec(t, context.Background(), func(done int) {
				if first == 0 {
					first = done
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if first != c.k+1 {
				t.Errorf("the resumed run's first update is %d, want %d", first, c.k+1)
			}
			if got, want := dirDigest(t, filepath.Dir(out)), dirDigest(t, want); got != want {
				t.Error("resumed run's outputs differ from the uninterrupted run's")
			}
		})
	}
}
