package synth

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"repro/internal/gense"
	"repro/internal/model/lm"
	"repro/internal/prompt"
	"repro/internal/rows"
	"repro/registry"
)

// QualityParams are synth.quality_check's parameters.
type QualityParams struct {
	Template  string  `cty:"template" doc:"the discrimination prompt T_d: [X1] the unlabeled sentence, [X2] the generated one (GenSE's Table 1)"`
	Alpha     float64 `cty:"alpha" doc:"keep a triplet when P(true | u, u_entail) and P(false | u, u_contra) are both at least alpha, in [0, 1] (paper: 0.9)"`
	True      string  `cty:"true_label" doc:"the target text meaning entailment"`
	False     string  `cty:"false_label" doc:"the target text meaning contradiction"`
	BatchSize int     `cty:"batch_size" doc:"prompts scored together"`
	Show      int     `cty:"show" doc:"kept triplets shown in samples.md (a seeded sample: the first of a permutation drawn from seed), and as many dropped ones"`
	// RawLogprobs came after results were cached (key:"added"): at its
	// default (off) the outputs are byte for byte what they were.
	RawLogprobs bool `cty:"raw_logprobs" key:"added" doc:"also write the discriminator's raw log-probabilities: every scored candidate's row in scores.jsonl gets logprobs (for T_d(u, u_entail) and T_d(u, u_contra), each label's sum and per-token values, the sums being what P(true) is computed from), and options.json gives each label's token ids and says that no end token after the label is scored; off (the default) leaves the outputs as before. The paper profiles turn it on"`
}

// Validate checks the parameters at load time.
func (p *QualityParams) Validate() error {
	var c registry.Checks
	if err := gense.CheckAlpha(p.Alpha); err != nil {
		c.Add(false, "alpha", "%v", err)
	}
	checkLabelling(&c, p.Template, p.True, p.False, p.BatchSize, p.Show)
	return c.Result()
}

// checkLabelling validates what the stages that score pairs with a
// text-to-text labeller share: a template with [X1] and [X2], two distinct
// non-empty label sequences, the batch and the size of the excerpt.
func checkLabelling(c *registry.Checks, template, trueLabel, falseLabel string, batch, show int) {
	if _, err := prompt.Parse(template, 2); err != nil {
		c.Add(false, "template", "%v", err)
	}
	c.Add(strings.TrimSpace(trueLabel) != "", "true_label", "empty")
	c.Add(strings.TrimSpace(falseLabel) != "", "false_label", "empty")
	c.Add(trueLabel != falseLabel, "false_label", "equal to true_label")
	c.Positive("batch_size", batch)
	c.NonNegative("show", show)
}

// FileQuality is the quality check's tally beside its triplets; FileScores
// the per-candidate probabilities and decisions; FileOptions (raw_logprobs
// only) how the labels were scored.
const (
	FileQuality = "quality.json"
	FileScores  = "scores.jsonl"
	FileOptions = "options.json"
)

// OptionLogprob is one label's raw score after one prompt: the natural-log
// probability of each of its tokens and their sum (generate.Sum, the
// number the stage's probability is computed from).
type OptionLogprob struct {
	Sum    float64   `json:"sum"`
	Tokens []float64 `json:"tokens"`
}

// LabelLogprobs are both labels' raw scores after one prompt.
type LabelLogprobs struct {
	True  OptionLogprob `json:"true_label"`
	False OptionLogprob `json:"false_label"`
}

// labelLogprobs reads prompt i's scores of the options (true, false).
func labelLogprobs(sc *lm.OptionScores, i int) *LabelLogprobs {
	return &LabelLogprobs{True: OptionLogprob{Sum: sc.Sum(i, 0), Tokens: sc.Tokens[i][0]},
		False: OptionLogprob{Sum: sc.Sum(i, 1), Tokens: sc.Tokens[i][1]}}
}

// CandidateLogprobs are a candidate triplet's raw scores: T_d(u, u_entail)
// and T_d(u, u_contra).
type CandidateLogprobs struct {
	Entail *LabelLogprobs `json:"entail"`
	Contra *LabelLogprobs `json:"contra"`
}

// OptionsDoc is options.json: how the labels were scored.
type OptionsDoc struct {
	True  OptionText `json:"true_label"`
	False OptionText `json:"false_label"`
	// EndTokenScored: whether a label's log-probability includes an end
	// token after it (false: the label's own tokens only).
	EndTokenScored bool   `json:"end_token_scored"`
	Scoring        string `json:"scoring"`
}

// OptionText is one label: its text and token ids.
type OptionText struct {
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

// optionsDoc describes the scoring of the labels: their ids (what
// ScoreOptionTokens scores: the text encoded without special tokens) and
// prob, how the stage's probability is computed from the sums.
func optionsDoc(model *lm.LM, trueLabel, falseLabel, prob string) OptionsDoc {
	return OptionsDoc{True: OptionText{Text: trueLabel, IDs: model.Encode(trueLabel)}, False: OptionText{Text: falseLabel, IDs: model.Encode(falseLabel)},
		EndTokenScored: lm.EndTokenScored,
		Scoring: "each label is scored as the model's continuation of the filled template, framed as the model's input " +
			"(a T5 reads it in its encoder, the label in its decoder); the label is encoded without special tokens, " +
			"so no end token (</s>, <|endoftext|>) after it is scored; sum is the total natural-log probability of the label's tokens; " + prob}
}

// scoreRow is one line of scores.jsonl.
type scoreRow struct {
	Anchor       string   `json:"anchor"`
	Entail       string   `json:"entail"`
	Contra       string   `json:"contra"`
	PTrueEntail  *float64 `json:"p_true_entail"`
	PFalseContra *float64 `json:"p_false_contra"`
	Dropped      string   `json:"dropped,omitempty"`
	// Logprobs (raw_logprobs only) are the scores the probabilities come
	// from; absent for a candidate dropped unscored.
	Logprobs *CandidateLogprobs `json:"logprobs,omitempty"`
}

func qualityType() *registry.StageType {
	return &registry.StageType{
		Name:    "synth.quality_check",
		Version: 1,
		Doc: `GenSE's quality check (section 2.1): the entailment and contradiction generations of each unlabeled
sentence u (two generate.complete stages under T_e and T_c, same sentences and seed) are joined into
candidate triplets {u, u_entail, u_contra}; the discriminator scores T_d(u, u_entail) and T_d(u, u_contra)
with the log-probabilities of the label sequences true_label and false_label, normalised over the two
(P(true) = p_t / (p_t + p_f)); a triplet is kept when P(true) for the entailment and P(false) for the
contradiction both reach alpha. Empty generations and copies of u are dropped unscored. The triplets
output holds the kept ones (triplets.jsonl), every candidate's scores and reason (scores.jsonl), the
tally (quality.json), a seeded sample of kept and dropped triplets (samples.md) and, when nothing was
kept, why_empty.txt; metrics holds the counts, the pass rate at alpha and always at the paper's 0.9.
A label's score is the sum of its tokens' log-probabilities, the label encoded without special tokens:
no end token after it is scored. With raw_logprobs (off by default, so outputs cached before it are
unchanged; the paper profiles turn it on) scores.jsonl also holds each label's sum and per-token
log-probabilities and options.json the labels' token ids and that no end token is scored.`,
		Params: QualityParams{Template: `if "[X1]", does this mean that "[X2]"? true or false`, Alpha: gense.PaperAlpha,
			True: "true", False: "false", BatchSize: 32, Show: 10},
		Inputs: []registry.Port{
			{Name: "model", Kind: registry.KindLanguageModel, Doc: "the generator/discriminator (a T5 trained on T_e, T_c and T_d instances)"},
			{Name: "entail", Kind: registry.KindCompletions, Doc: "generations under T_e, one per unlabeled sentence and sample"},
			{Name: "contra", Kind: registry.KindCompletions, Doc: "generations under T_c of the same sentences and samples"},
		},
		Outputs: []registry.Port{
			{Name: "triplets", Kind: registry.KindTriplets, Doc: "triplets.jsonl (kept), scores.jsonl, quality.json, samples.md"},
			{Name: "metrics", Kind: registry.KindMetrics, Doc: "candidates, kept, dropped per reason, pass_rate, pass_rate_at_0.9, mean probabilities"},
		},
		Seeded: true,
		Tensor: true,
		Run:    runQuality,
	}
}

func readGenerations(env *registry.Env, name string) ([]gense.Generation, error) {
	a, err := env.Input(name)
	if err != nil {
		return nil, err
	}
	cs, err := rows.Read[rows.Completion](a.Path(registry.FileCompletions))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]gense.Generation, len(cs))
	for i, c := range cs {
		out[i] = gense.Generation{Prompt: c.PromptIndex, Sample: c.Sample, Input: c.Input, Text: c.Text}
	}
	return out, nil
}

func runQuality(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*QualityParams)
	if err := p.Validate(); err != nil {
		return err
	}
	td := prompt.MustParse(p.Template, 2)
	entail, err := readGenerations(env, "entail")
	if err != nil {
		return err
	}
	contra, err := readGenerations(env, "contra")
	if err != nil {
		return err
	}
	cands, err := gense.Pair(entail, contra)
	if err != nil {
		return err
	}
	ma, err := env.Input("model")
	if err != nil {
		return err
	}
	model, err := lm.Open(ma.Dir)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	reasons := make([]gense.Reason, len(cands))
	pe, pc := make([]float64, len(cands)), make([]float64, len(cands))
	var prompts []string
	var idx []int
	for i, c := range cands {
		pe[i], pc[i] = math.NaN(), math.NaN()
		if reasons[i] = gense.Precheck(c); reasons[i] == gense.Kept {
			prompts = append(prompts, td.Fill(c.Anchor, c.Entail), td.Fill(c.Anchor, c.Contra))
			idx = append(idx, i)
		}
	}
	raw := make([]*CandidateLogprobs, len(cands))
	if len(prompts) > 0 {
		sc, err := model.ScoreOptionTokens(ctx, prompts, []string{p.True, p.False}, false, p.BatchSize)
		if err != nil {
			return fmt.Errorf("discriminator: %w", err)
		}
		for k, i := range idx {
			e, c := 2*k, 2*k+1
			pe[i] = gense.Normalised(sc.Sum(e, 0), sc.Sum(e, 1))
			pc[i] = gense.Normalised(sc.Sum(c, 1), sc.Sum(c, 0))
			reasons[i] = gense.Decide(pe[i], pc[i], p.Alpha)
			if p.RawLogprobs {
				raw[i] = &CandidateLogprobs{Entail: labelLogprobs(sc, e), Contra: labelLogprobs(sc, c)}
			}
		}
	}
	counts := gense.Tally(p.Alpha, reasons, pe, pc)
	var kept []rows.Triplet
	scores := make([]scoreRow, len(cands))
	for i, c := range cands {
		r := scoreRow{Anchor: c.Anchor, Entail: c.Entail, Contra: c.Contra, Dropped: string(reasons[i]), Logprobs: raw[i]}
		if !math.IsNaN(pe[i]) {
			r.PTrueEntail, r.PFalseContra = &pe[i], &pc[i]
		}
		scores[i] = r
		if reasons[i] == gense.Kept {
			kept = append(kept, rows.Triplet{Anchor: c.Anchor, Positive: c.Entail, Negative: c.Contra})
		}
	}
	log := env.Logger()
	log.Info("quality check", "candidates", counts.Candidates, "kept", counts.Kept, "alpha", p.Alpha,
		"pass_rate", fmt.Sprintf("%.3f", counts.PassRate), "pass_rate_at_0.9", fmt.Sprintf("%.3f", counts.PassRatePaper))
	for _, r := range []gense.Reason{gense.EmptyEntail, gense.EmptyContra, gense.Copy, gense.EntailFails, gense.ContraFails, gense.BothFail} {
		log.Info("quality check dropped", "reason", string(r), "count", counts.Dropped[r])
	}
	dir := env.Output("triplets")
	if err := rows.Write(filepath.Join(dir, registry.FileTriplets), kept); err != nil {
		return err
	}
	if err := rows.Write(filepath.Join(dir, FileScores), scores); err != nil {
		return err
	}
	if err := registry.WriteJSON(filepath.Join(dir, FileQuality), counts); err != nil {
		return err
	}
	if p.RawLogprobs {
		d := optionsDoc(model, p.True, p.False, "p_true_entail = 1 / (1 + exp(entail.false_label.sum - entail.true_label.sum)), "+
			"p_false_contra = 1 / (1 + exp(contra.true_label.sum - contra.false_label.sum))")
		if err := registry.WriteJSON(filepath.Join(dir, FileOptions), d); err != nil {
			return err
		}
	}
	if len(kept) == 0 {
		if err := os.WriteFile(filepath.Join(dir, registry.FileWhyEmpty), []byte(counts.EmptyReason()+"\n"), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, registry.FileSamples), []byte(qualitySamples(scores, counts, p.Show, env.Seed)), 0o644); err != nil {
		return err
	}
	dropped := map[string]int{}
	for r, n := range counts.Dropped {
		dropped[string(r)] = n
	}
	return registry.WriteJSON(filepath.Join(env.Output("metrics"), registry.FileMetrics), map[string]any{
		"candidates": counts.Candidates, "scored": counts.Scored, "kept": counts.Kept, "dropped": dropped,
		"alpha": p.Alpha, "pass_rate": counts.PassRate, "kept_at_0.9": counts.KeptPaper, "pass_rate_at_0.9": counts.PassRatePaper,
		"mean_p_true_entail": counts.MeanPTrueEntail, "mean_p_false_contra": counts.MeanPFalseContra,
	})
}

// qualitySamples is the readable excerpt: up to show kept and show dropped
// candidates, drawn by a permutation seeded from seed.
func qualitySamples(scores []scoreRow, c gense.Counts, show int, seed int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Quality check at alpha = %g: %d of %d candidate triplets kept (pass rate %.3f; at the paper's 0.9: %d, %.3f). ",
		c.Alpha, c.Kept, c.Candidates, c.PassRate, c.KeptPaper, c.PassRatePaper)
	fmt.Fprintf(&b, "Dropped: %s. A seeded sample (seed %d):\n\n", droppedList(c), seed)
	b.WriteString("| kept | sentence u | T_e(u) (positive) | P(true) | T_c(u) (negative) | P(false) |\n|---|---|---|---|---|---|\n")
	perm := permutation(len(scores), seed)
	nk, nd := 0, 0
	for _, i := range perm {
		r := scores[i]
		kept := r.Dropped == ""
		if (kept && nk >= show) || (!kept && nd >= show) {
			continue
		}
		if kept {
			nk++
		} else {
			nd++
		}
		mark := "yes"
		if !kept {
			mark = "no: " + r.Dropped
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mark, cell(r.Anchor), cell(r.Entail), prob(r.PTrueEntail), cell(r.Contra), prob(r.PFalseContra))
	}
	return b.String()
}

func droppedList(c gense.Counts) string {
	var parts []string
	for _, r := range []gense.Reason{gense.EmptyEntail, gense.EmptyContra, gense.Copy, gense.EntailFails, gense.ContraFails, gense.BothFail} {
		parts = append(parts, fmt.Sprintf("%s %d", r, c.Dropped[r]))
	}
	return strings.Join(parts, ", ")
}

func prob(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *p)
}

func cell(s string) string {
	s = strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
	if strings.TrimSpace(s) == "" {
		return "(empty)"
	}
	return s
}
