package generate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"repro/internal/dino"
	gen "repro/internal/generate"
	"repro/internal/model/lm"
	"repro/internal/rows"
	"repro/registry"
)

// RegisterDINO adds DINO's generation stages (generate.dino_pairs,
// generate.dino_x1).
func RegisterDINO(r *registry.Registry) {
	r.Add(dinoPairsType())
	r.Add(dinoX1Type())
}

// DINOInstructions are the parameters shared by DINO's stages: the
// template, the labels and where the generator comes from.
type DINOInstructions struct {
	Template     string    `cty:"template" doc:"instruction template I_y(x1): [I] is the label's instruction i_y, [X] the input sentence x1 (Figure 2)"`
	Labels       []float64 `cty:"labels" doc:"similarity labels y, one per instruction"`
	Instructions []string  `cty:"instructions" doc:"i_y for each label, in the order of labels"`
	Quote        string    `cty:"quote" doc:"the quotation mark that ends a generated sentence (found in the decoded text)"`
	HFCheckpoint string    `cty:"hf_checkpoint" path:"checkpoint" doc:"local Hugging Face GPT-2 directory (GPT2-XL in the paper) used when no model input is connected"`
	BOS          string    `cty:"bos" doc:"auto | yes | no: start every prompt with <|endoftext|>; auto does so when the model was trained that way"`
	MaxNewTokens int       `cty:"max_new_tokens" doc:"most tokens generated per sentence"`
	TopK         int       `cty:"top_k" doc:"keep the k most likely tokens (0: all); top-p then applies to them"`
	TopP         float64   `cty:"top_p" doc:"nucleus sampling mass, in (0, 1]"`
	BatchSize    int       `cty:"batch_size" doc:"sequences decoded together (a label prompt and its counterlabel prompts count one each)"`
	Show         int       `cty:"show" doc:"examples per label shown in samples.md (a seeded draw)"`
	// TokenIDs came after results were cached (key:"added"): at its
	// default (off) the outputs are byte for byte what they were.
	TokenIDs bool `cty:"token_ids" key:"added" doc:"also write the generated token ids: generate.dino_pairs puts x2_ids (what was generated for x2, the closing quote's token included) and prompt_ids (I_y(x1) as the model read it) in each generated row of pairs.jsonl; generate.dino_x1 writes tokens.jsonl beside sentences.jsonl (each kept sentence with its token_ids and prompt_ids); off (the default) leaves the outputs as before. The paper profiles turn it on"`
}

func defaultInstructions() DINOInstructions {
	d := DINOInstructions{Template: dino.Template, Quote: `"`, BOS: "auto", MaxNewTokens: 40, TopK: 5, TopP: 0.9, BatchSize: 48, Show: 5}
	for _, l := range dino.Labels {
		d.Labels = append(d.Labels, l.Value)
		d.Instructions = append(d.Instructions, l.Instruction)
	}
	return d
}

func (p *DINOInstructions) check(c *registry.Checks) {
	if err := dino.CheckTemplate(p.Template); err != nil {
		c.Err(registry.Paramf("template", "%v", err))
	}
	c.Add(len(p.Labels) > 0 && len(p.Labels) == len(p.Instructions), "instructions", "%d instructions for %d labels: give one per label", len(p.Instructions), len(p.Labels))
	seen := map[float64]bool{}
	for _, l := range p.Labels {
		c.Add(!seen[l], "labels", "%v appears twice", l)
		seen[l] = true
	}
	for i, s := range p.Instructions {
		c.Add(strings.TrimSpace(s) != "", "instructions", "instruction %d is empty", i+1)
	}
	c.Add(p.Quote != "", "quote", "empty: generated sentences would end at once")
	c.OneOf("bos", p.BOS, "auto", "yes", "no")
	c.Positive("max_new_tokens", p.MaxNewTokens)
	c.Positive("batch_size", p.BatchSize)
	c.NonNegative("show", p.Show)
	c.Add(p.TopK >= 0, "top_k", "%d must be at least 1 (or 0: no top-k filtering)", p.TopK)
	c.Add(p.TopP > 0 && p.TopP <= 1, "top_p", "%v must lie in (0, 1]", p.TopP)
}

func (p *DINOInstructions) labels() []dino.Label {
	ls := make([]dino.Label, len(p.Labels))
	for i := range ls {
		ls[i] = dino.Label{Value: p.Labels[i], Instruction: p.Instructions[i]}
	}
	return ls
}

func (p *DINOInstructions) externals() []registry.External {
	if p.HFCheckpoint == "" {
		return nil
	}
	return []registry.External{{Name: "hf_checkpoint", Path: p.HFCheckpoint}}
}

var errNoGenerator = errors.New("no generator: set hf_checkpoint to a local Hugging Face GPT-2 directory (experiments/dino.hcl takes GPT2-XL as -var gpt2=DIR) or connect a model (the mini and ci profiles connect the small GPT-2 of experiments/lm.hcl)")

// CheckStart refuses, before a run starts, a stage with neither a model
// input nor hf_checkpoint (registry.StartChecker).
func (p DINOInstructions) CheckStart(connected func(string) bool) error {
	if connected("model") || p.HFCheckpoint != "" {
		return nil
	}
	return errNoGenerator
}

// openGenerator opens the model input, else hf_checkpoint, and checks
// that its tokenizer can write the quote.
func (p *DINOInstructions) openGenerator(env *registry.Env) (dino.LM, error) {
	var dir string
	if a, ok := env.Inputs["model"]; ok {
		dir = a.Dir
	} else if p.HFCheckpoint != "" {
		if st, err := os.Stat(p.HFCheckpoint); err != nil || !st.IsDir() {
			return dino.LM{}, fmt.Errorf("hf_checkpoint: %s is not a directory (want a Hugging Face GPT-2 directory: config.json, model.safetensors, vocab.json, merges.txt)", p.HFCheckpoint)
		}
		dir = p.HFCheckpoint
	} else {
		return dino.LM{}, errNoGenerator
	}
	m, err := lm.Open(dir)
	if err != nil {
		return dino.LM{}, fmt.Errorf("model: %w", err)
	}
	bos := p.BOS == "yes" || (p.BOS == "auto" && m.BOS)
	g := dino.LM{Model: m.Model, Prompt: func(t string) []int { return m.Prompt(t, bos) }, Encode: m.Encode, Decode: m.Decode, EOS: m.EOS}
	if err := g.CheckQuote(p.Quote); err != nil {
		return dino.LM{}, fmt.Errorf("model: %w", err)
	}
	return g, nil
}

func (p *DINOInstructions) sampling() gen.Sampling {
	return gen.Sampling{Temperature: 1, TopK: p.TopK, TopP: p.TopP}
}

// DINOPairsParams are generate.dino_pairs's parameters.
type DINOPairsParams struct {
	DINOInstructions
	X2PerX1  int     `cty:"x2_per_x1" doc:"continuations x2 kept per (x1, y)"`
	MaxTries int     `cty:"max_tries" doc:"rounds of x2_per_x1 draws per (x1, y) to obtain them"`
	Lambda   float64 `cty:"lambda" doc:"self-debiasing decay constant (0: no self-debiasing, the counterlabel prompts are not run)"`
	Epsilon  float64 `cty:"epsilon" doc:"floor of the self-debiasing factor alpha (the released code's 0.01)"`
	MaxX1    int     `cty:"max_x1" doc:"use the first N input sentences; 0 = all"`
}

// Validate checks the parameters at load time.
func (p *DINOPairsParams) Validate() error {
	var c registry.Checks
	p.check(&c)
	c.Positive("x2_per_x1", p.X2PerX1)
	c.Positive("max_tries", p.MaxTries)
	c.Add(p.Lambda >= 0, "lambda", "%v must be >= 0 (the decay constant; 0 turns self-debiasing off)", p.Lambda)
	c.Add(p.Epsilon >= 0 && p.Epsilon <= 1, "epsilon", "%v must lie in [0, 1]", p.Epsilon)
	c.NonNegative("max_x1", p.MaxX1)
	return c.Result()
}

func dinoPairsType() *registry.StageType {
	return &registry.StageType{
		Name:    "generate.dino_pairs",
		Version: 1,
		Doc: `DINO's dataset generation (Schick and Schütze 2021): for every input sentence x1 and label y,
the instruction I_y(x1) (template with [I] = i_y, [X] = x1) is continued until the closing quotation
mark, found in the decoded text; x2_per_x1 continuations are kept per (x1, y), from up to max_tries
rounds of draws; outputs without the quote are dropped and counted (stats.json). With lambda > 0
the prompts of y's counterlabels {y' > y} advance in lockstep with I_y(x1) and debias it
(alpha = max(exp(lambda * delta), epsilon)). Sampling: top-k then top-p. Rows carry provenance
(with token_ids, off by default so outputs cached before it are unchanged and on in the paper
profile, also x2's generated ids and the prompt's); samples.md shows the counts and a seeded sample of
pairs per label.`,
		Params: DINOPairsParams{DINOInstructions: defaultInstructions(), X2PerX1: 2, MaxTries: 5, Lambda: 100, Epsilon: 0.01},
		Inputs: []registry.Port{
			{Name: "model", Kind: registry.KindLanguageModel, Optional: true, Doc: "the generator (else hf_checkpoint)"},
			{Name: "data", Kind: registry.KindSentences, Doc: "the input sentences X1"},
		},
		Outputs:   []registry.Port{{Name: "pairs", Kind: registry.KindPairs, Doc: "pairs.jsonl (rows.GeneratedPair), stats.json (counts per label), samples.md"}},
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*DINOPairsParams).externals(), nil },
		Run:       runDINOPairs,
	}
}

func runDINOPairs(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*DINOPairsParams)
	a, err := env.Input("data")
	if err != nil {
		return err
	}
	path := a.Path(registry.FileSentences)
	ss, err := rows.Read[rows.Sentence](path)
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	var x1s []string
	for i, s := range ss {
		if strings.TrimSpace(s.Text) == "" {
			return fmt.Errorf("data: %s: row %d: empty sentence", path, i+1)
		}
		x1s = append(x1s, s.Text)
	}
	if len(x1s) == 0 {
		return fmt.Errorf("data: %s: no input sentences (X1 is empty)", path)
	}
	if p.MaxX1 > 0 && len(x1s) > p.MaxX1 {
		x1s = x1s[:p.MaxX1]
	}
	g, err := p.openGenerator(env)
	if err != nil {
		return err
	}
	c := dino.Config{Template: p.Template, Labels: p.labels(), X2PerX1: p.X2PerX1, MaxTries: p.MaxTries,
		Sampling: p.sampling(), MaxNewTokens: p.MaxNewTokens, Quote: p.Quote, Lambda: p.Lambda, Epsilon: p.Epsilon,
		Seed: uint64(env.Seed), BatchSize: p.BatchSize, Progress: func(d, n int) { env.Report(d, n, "(x1, y)") }, TokenIDs: p.TokenIDs}
	ps, stats, err := dino.GeneratePairs(ctx, g, x1s, c)
	if err != nil {
		return err
	}
	for i := range ps {
		ps[i].Seed = env.Seed
	}
	env.Logger().Info("generated", "x1", len(x1s), "pairs", len(ps))
	dir := env.Output("pairs")
	if err := rows.Write(filepath.Join(dir, registry.FilePairs), ps); err != nil {
		return err
	}
	if err := registry.WriteJSON(filepath.Join(dir, registry.FileStats), map[string]any{"x1": len(x1s), "pairs": len(ps), "labels": stats}); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "DINO pairs from %d x1 (seed %d, lambda %g, top-k %d, top-p %g, %d x2 per (x1, y), up to %d tries):\n\n",
		len(x1s), env.Seed, p.Lambda, p.TopK, p.TopP, p.X2PerX1, p.MaxTries)
	b.WriteString("| label | drawn | kept | no closing quote | empty | surplus | (x1, y) short |\n|---|---|---|---|---|---|---|\n")
	for _, s := range stats {
		fmt.Fprintf(&b, "| %g | %d | %d | %d | %d | %d | %d |\n", s.Label, s.Drawn, s.Kept, s.NoQuote, s.Empty, s.Surplus, s.Short)
	}
	b.WriteString("\n")
	registry.WritePairSample(&b, ps, p.Show, uint64(env.Seed))
	return os.WriteFile(filepath.Join(dir, registry.FileSamples), []byte(b.String()), 0o644)
}

// FileTokens is generate.dino_x1's tokens.jsonl (token_ids only): a row
// per sentence of sentences.jsonl, in its order.
const FileTokens = "tokens.jsonl"

// X1Tokens is a row of tokens.jsonl: a generated sentence x1 (as in
// sentences.jsonl), the token ids generated for it (decoded: the sentence
// before trimming, then the closing quote and whatever else the token
// that completed it held) and its prompt's ids as the model read them.
type X1Tokens struct {
	Text      string `json:"text"`
	TokenIDs  []int  `json:"token_ids"`
	PromptIDs []int  `json:"prompt_ids"`
}

// DINOX1Params are generate.dino_x1's parameters.
type DINOX1Params struct {
	DINOInstructions
	Count     int `cty:"count" doc:"distinct sentences x1 to generate (the paper: 15,000)"`
	MaxRounds int `cty:"max_rounds" doc:"rounds of draws (each draws as many as are still missing)"`
}

// Validate checks the parameters at load time.
func (p *DINOX1Params) Validate() error {
	var c registry.Checks
	p.check(&c)
	c.Positive("count", p.Count)
	c.Positive("max_rounds", p.MaxRounds)
	return c.Result()
}

func dinoX1Type() *registry.StageType {
	d := defaultInstructions()
	d.TopK = 0 // the paper: top-p only for x1, for diversity
	return &registry.StageType{
		Name:    "generate.dino_x1",
		Version: 1,
		Doc: `DINO's input sentences for STS-L-x1x2: the instruction template cut right after x1's opening
quotation mark (prompts cycling through the labels' instructions) is continued until the closing
quote; distinct non-empty sentences are kept until count are found, in rounds of as many draws as
are missing (up to max_rounds). Top-p only (no top-k) by default, as in the paper. With token_ids
(off by default, so outputs cached before it are unchanged; on in the paper profile) tokens.jsonl
beside the sentences gives each one's generated token ids and its prompt's.`,
		Params:    DINOX1Params{DINOInstructions: d, Count: 15000, MaxRounds: 5},
		Inputs:    []registry.Port{{Name: "model", Kind: registry.KindLanguageModel, Optional: true, Doc: "the generator (else hf_checkpoint)"}},
		Outputs:   []registry.Port{{Name: "sentences", Kind: registry.KindSentences, Doc: "sentences.jsonl, stats.json, samples.md (tokens.jsonl with token_ids)"}},
		Seeded:    true,
		Tensor:    true,
		Externals: func(p any) ([]registry.External, error) { return p.(*DINOX1Params).externals(), nil },
		Run:       runDINOX1,
	}
}

func runDINOX1(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*DINOX1Params)
	g, err := p.openGenerator(env)
	if err != nil {
		return err
	}
	c := dino.X1Config{Template: p.Template, Labels: p.labels(), Count: p.Count, MaxRounds: p.MaxRounds,
		Sampling: p.sampling(), MaxNewTokens: p.MaxNewTokens, Quote: p.Quote, Seed: uint64(env.Seed), BatchSize: p.BatchSize,
		Progress: func(d, n int) { env.Report(d, n, "x1") }}
	gs, st, err := dino.GenerateX1Tokens(ctx, g, c)
	if err != nil {
		return err
	}
	xs := make([]string, len(gs))
	for i, x := range gs {
		xs[i] = x.Text
	}
	if len(xs) == 0 {
		return fmt.Errorf("no sentence x1 was generated in %d draws (%d without a closing quote): the generator does not follow the template", st.Drawn, st.NoQuote)
	}
	dir := env.Output("sentences")
	rs := make([]rows.Sentence, len(xs))
	for i, x := range xs {
		rs[i] = rows.Sentence{Text: x}
	}
	if err := rows.Write(filepath.Join(dir, registry.FileSentences), rs); err != nil {
		return err
	}
	if err := registry.WriteJSON(filepath.Join(dir, registry.FileStats), st); err != nil {
		return err
	}
	if p.TokenIDs {
		ts := make([]X1Tokens, len(gs))
		for i, x := range gs {
			ts[i] = X1Tokens{Text: x.Text, TokenIDs: x.IDs, PromptIDs: x.Prompt}
		}
		if err := rows.Write(filepath.Join(dir, FileTokens), ts); err != nil {
			return err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Generated x1 (seed %d, top-k %d, top-p %g): %d kept of %d drawn (%d without a closing quote, %d empty, %d duplicates, %d rounds). First %d:\n\n",
		env.Seed, p.TopK, p.TopP, st.Kept, st.Drawn, st.NoQuote, st.Empty, st.Duplicate, st.Rounds, min(p.Show*3, len(xs)))
	for _, x := range xs[:min(p.Show*3, len(xs))] {
		fmt.Fprintf(&b, "- %s\n", registry.MarkdownCell(x))
	}
	return os.WriteFile(filepath.Join(dir, registry.FileSamples), []byte(b.String()), 0o644)
}
