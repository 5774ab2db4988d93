package text

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"repro/internal/prompt"
	"repro/internal/rows"
	"repro/registry"
)

// Seq2SeqParams are text.seq2seq's parameters.
type Seq2SeqParams struct {
	Source     string `cty:"source" doc:"source template: [X1] is the triplet's anchor, [X2] the chosen hypothesis ([X] alone when hypothesis = \"none\"); at least one of them"`
	Target     string `cty:"target" doc:"target template, same placeholders; a constant (e.g. \"true\") is allowed"`
	Hypothesis string `cty:"hypothesis" doc:"which sentence fills [X2]: \"positive\", \"negative\" (triplets without one are skipped) or \"none\" (templates of the anchor alone)"`
}

func (p *Seq2SeqParams) slots() int {
	if p.Hypothesis == "none" {
		return 1
	}
	return 2
}

// templates parses the two templates: the source must hold every
// placeholder; the target may be a constant.
func (p *Seq2SeqParams) templates() (src, tgt prompt.Template, err error) {
	if src, err = prompt.ParseOptional(p.Source, p.slots()); err != nil {
		return src, tgt, registry.Paramf("source", "%v", err)
	}
	if src.Constant() {
		return src, tgt, registry.Paramf("source", "template %q has no placeholder ([X1], [X2]; [X] with hypothesis = \"none\")", p.Source)
	}
	if strings.TrimSpace(p.Target) == "" {
		return src, tgt, registry.Paramf("target", "empty")
	}
	if tgt, err = prompt.ParseOptional(p.Target, p.slots()); err != nil {
		return src, tgt, registry.Paramf("target", "%v", err)
	}
	return src, tgt, nil
}

// Validate checks the templates against the hypothesis choice.
func (p *Seq2SeqParams) Validate() error {
	var c registry.Checks
	c.OneOf("hypothesis", p.Hypothesis, "positive", "negative", "none")
	if _, _, err := p.templates(); err != nil {
		c.Err(err)
	}
	return c.Result()
}

func seq2seqType() *registry.StageType {
	return &registry.StageType{
		Name:    "text.seq2seq",
		Version: 1,
		Doc: `Text-to-text instances from triplets through prompt templates (GenSE's Table 1): each triplet
gives one {source, target} row, [X1] being its anchor and [X2] its positive or negative (hypothesis);
triplets without the chosen sentence are skipped. With prepend connected, its instances come first,
so a chain of stages builds one mixed training set (GenSE's generation and discrimination tasks).`,
		Params: Seq2SeqParams{Hypothesis: "positive"},
		Inputs: []registry.Port{
			{Name: "data", Kind: registry.KindTriplets, Doc: "triplets {anchor, positive, negative}"},
			{Name: "prepend", Kind: registry.KindSeq2Seq, Optional: true, Doc: "instances written before the new ones"},
		},
		Outputs: []registry.Port{{Name: "instances", Kind: registry.KindSeq2Seq, Doc: "instances.jsonl"}},
		Run:     runSeq2Seq,
	}
}

func runSeq2Seq(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*Seq2SeqParams)
	src, tgt, err := p.templates()
	if err != nil {
		return err
	}
	in, err := env.Input("data")
	if err != nil {
		return err
	}
	path := in.Path(registry.FileTriplets)
	ts, err := rows.Read[rows.Triplet](path)
	if err != nil {
		return err
	}
	var out []rows.Seq2Seq
	if pre, ok := env.Inputs["prepend"]; ok {
		if out, err = rows.Read[rows.Seq2Seq](pre.Path(registry.FileInstances)); err != nil {
			return fmt.Errorf("prepend: %w", err)
		}
	}
	for i, t := range ts {
		if strings.TrimSpace(t.Anchor) == "" {
			return fmt.Errorf("%s:%d: empty anchor", path, i+1)
		}
		xs := []string{t.Anchor}
		switch p.Hypothesis {
		case "positive":
			xs = append(xs, t.Positive)
		case "negative":
			xs = append(xs, t.Negative)
		}
		if len(xs) == 2 && strings.TrimSpace(xs[1]) == "" {
			continue
		}
		out = append(out, rows.Seq2Seq{Source: src.Fill(xs...), Target: tgt.Fill(xs...)})
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return rows.Write(filepath.Join(env.Output("instances"), registry.FileInstances), out)
}
