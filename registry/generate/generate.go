// Package generate holds the generate.* stage types: text generation with
// a language-model artifact (registry.KindLanguageModel) through the one
// engine of repro/internal/generate.
//
// generate.complete builds one prompt per input sentence from a template
// ("[X]" stands for the sentence; without an input the template alone is
// the prompt), draws samples completions of each, and writes every
// completion as a row with its provenance (prompt index and text, sample
// index, seed, sampling parameters, stop reason): enough, with the model's
// digest in the stage key, to regenerate any row. samples.md beside the
// rows is a readable excerpt that the run's report shows.
package generate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	gen "repro/internal/generate"
	"repro/internal/model/lm"
	"repro/internal/prompt"
	"repro/internal/rows"
	"repro/registry"
)

// Register adds the generate.* stage types to r.
func Register(r *registry.Registry) { r.Add(completeType()) }

// Placeholder is what a template's input sentence replaces.
const Placeholder = prompt.X

// CompleteParams are generate.complete's parameters.
type CompleteParams struct {
	Template         string   `cty:"template" doc:"the prompt; [X] is replaced by each input sentence (required when data is connected)"`
	MaxNewTokens     int      `cty:"max_new_tokens" doc:"most tokens generated per completion"`
	Samples          int      `cty:"samples" doc:"completions per prompt"`
	Temperature      float64  `cty:"temperature" doc:"softmax temperature; 0 = greedy"`
	TopK             int      `cty:"top_k" doc:"keep the k most likely tokens (0: all); with top_p, top-p applies to the top-k distribution"`
	TopP             float64  `cty:"top_p" doc:"nucleus sampling: keep the most likely tokens up to this mass, in (0, 1]; 1: all"`
	PresencePenalty  float64  `cty:"presence_penalty" doc:"OpenAI presence penalty in [-2, 2]"`
	FrequencyPenalty float64  `cty:"frequency_penalty" doc:"OpenAI frequency penalty in [-2, 2]"`
	Stop             []string `cty:"stop" doc:"strings that end a completion when they appear in its decoded text (the text is cut before them)"`
	StopAtEOS        bool     `cty:"stop_at_eos" doc:"end a completion at <|endoftext|>"`
	BOS              string   `cty:"bos" doc:"auto | yes | no: start every prompt with <|endoftext|>; auto does so when the model was trained that way (repro's framing)"`
	BatchSize        int      `cty:"batch_size" doc:"sequences decoded together"`
	MaxPrompts       int      `cty:"max_prompts" doc:"use the first N input sentences; 0 = all"`
	Show             int      `cty:"show" doc:"completions shown in samples.md (and the report)"`
	// TokenIDs came after results were cached (key:"added"): at its
	// default (off) the rows are byte for byte what they were.
	TokenIDs bool `cty:"token_ids" key:"added" doc:"also write each completion's generated token ids (token_ids, EOS excluded) and its prompt's ids as the model read them (prompt_ids) in its row; off (the default) leaves the rows as before. The paper profiles turn it on"`
}

func (p *CompleteParams) sampling() gen.Sampling {
	return gen.Sampling{Temperature: p.Temperature, TopK: p.TopK, TopP: p.TopP,
		PresencePenalty: p.PresencePenalty, FrequencyPenalty: p.FrequencyPenalty}
}

// Validate checks the parameters alone (registry.Validator: at load
// time, each at its file:line), before any input is read.
func (p *CompleteParams) Validate() error {
	var c registry.Checks
	for _, e := range p.sampling().Check() {
		c.Err(registry.Paramf(e.Param, "%s", e.Msg))
	}
	c.Positive("max_new_tokens", p.MaxNewTokens)
	c.Positive("samples", p.Samples)
	c.Positive("batch_size", p.BatchSize)
	c.NonNegative("max_prompts", p.MaxPrompts)
	c.NonNegative("show", p.Show)
	c.OneOf("bos", p.BOS, "auto", "yes", "no")
	c.Add(strings.TrimSpace(p.Template) != "" || p.BOS != "no", "template", "empty, and bos = \"no\" leaves the model no token to start from")
	for i, s := range p.Stop {
		c.Add(s != "", "stop", "string %d is empty (it would end every completion at once)", i)
	}
	return c.Result()
}

func completeType() *registry.StageType {
	return &registry.StageType{
		Name:    "generate.complete",
		Version: 1,
		Doc: `Completions from a language model: one prompt per input sentence (the template with [X]
replaced by it; the template alone without input), samples completions each, decoded with
temperature, top-k, top-p (top-k first when both), presence/frequency penalties, and stopped at
<|endoftext|>, a stop string in the decoded text, max_new_tokens or the context window. Every
completion draws from its own random stream seeded from (seed, prompt index, sample index): the
same seed gives the same rows bit for bit. Rows carry their provenance; with token_ids (off by
default, so rows cached before it are unchanged; the paper profiles turn it on) also the generated
token ids and the prompt's: the text is their decoding, cut before the stop string that ended it.`,
		Params: CompleteParams{MaxNewTokens: 40, Samples: 1, Temperature: 1, TopP: 1, StopAtEOS: true, BOS: "auto",
			BatchSize: 32, Show: 10},
		Inputs: []registry.Port{
			{Name: "model", Kind: registry.KindLanguageModel, Doc: "the language model"},
			{Name: "data", Kind: registry.KindSentences, Optional: true, Doc: "input sentences, one prompt each"},
		},
		Outputs: []registry.Port{{Name: "completions", Kind: registry.KindCompletions, Doc: "completions.jsonl (one row per completion, with provenance) and samples.md"}},
		Seeded:  true,
		Tensor:  true,
		Run:     runComplete,
	}
}

func runComplete(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*CompleteParams)
	// Inputs: the prompts' texts.
	var inputs []string
	if a, ok := env.Inputs["data"]; ok {
		if !strings.Contains(p.Template, Placeholder) {
			return fmt.Errorf("template: %q has no %s placeholder for the input sentences (data is connected)", p.Template, Placeholder)
		}
		path := a.Path(registry.FileSentences)
		ss, err := rows.Read[rows.Sentence](path)
		if err != nil {
			return fmt.Errorf("data: %w", err)
		}
		for i, s := range ss {
			if strings.TrimSpace(s.Text) == "" {
				return fmt.Errorf("data: %s: row %d: empty sentence", path, i+1)
			}
			inputs = append(inputs, s.Text)
		}
		if len(inputs) == 0 {
			return fmt.Errorf("data: %s: no sentences", path)
		}
		if p.MaxPrompts > 0 && len(inputs) > p.MaxPrompts {
			inputs = inputs[:p.MaxPrompts]
		}
	} else if strings.Contains(p.Template, Placeholder) {
		return fmt.Errorf("template: %q has a %s placeholder but no data is connected", p.Template, Placeholder)
	}
	ma, err := env.Input("model")
	if err != nil {
		return err
	}
	model, err := lm.Open(ma.Dir)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	bos := p.BOS == "yes" || (p.BOS == "auto" && model.BOS)
	texts := []string{p.Template}
	if inputs != nil {
		texts = make([]string, len(inputs))
		for i, in := range inputs {
			texts[i] = strings.ReplaceAll(p.Template, Placeholder, in)
		}
	}
	prompts := make([][]int, len(texts))
	for i, t := range texts {
		prompts[i] = model.Prompt(t, bos)
		if len(prompts[i]) == 0 {
			return fmt.Errorf("prompt %d is empty: give a template or set bos = \"yes\"", i)
		}
		if max := model.Model.MaxLength(); max > 0 && len(prompts[i]) >= max {
			return fmt.Errorf("prompt %d (%q) has %d tokens: the model's context window of %d leaves no room to generate", i, clip(texts[i], 80), len(prompts[i]), max)
		}
	}
	o := gen.Options{Sampling: p.sampling(), MaxNewTokens: p.MaxNewTokens, Samples: p.Samples, EOS: -1,
		Stop: p.Stop, Decode: model.Decode, Seed: uint64(env.Seed), BatchSize: p.BatchSize,
		Progress: func(done, total int) { env.Report(done, total, "prompts") }}
	if p.StopAtEOS {
		o.EOS = model.EOS
	}
	var dev gen.DeviceReport
	o.Report = &dev
	outs, err := gen.Generate(ctx, model.Model, prompts, o)
	if err != nil {
		return err
	}
	if dev.Device != "" && env.Log != nil {
		// On a device (--backend emu, cuda): what crossed, per step and in
		// all; the rows are the CPU's either way.
		up, down := dev.StepBytes()
		tok := max(dev.Tokens(), 1)
		env.Log.Info("device copies", "device", dev.Device, "steps", len(dev.Steps), "tokens", dev.Tokens(),
			"step_up_bytes", up, "step_down_bytes", down,
			"per_token_up_bytes", float64(up)/float64(tok), "per_token_down_bytes", float64(down)/float64(tok),
			"total_up_bytes", dev.Total.UpBytes, "total_down_bytes", dev.Total.DownBytes)
		env.Log.Info("device copies in all", "copies", dev.Total.String())
	}
	rec := rows.Sampling{Temperature: p.Temperature, TopK: p.TopK, TopP: p.TopP, PresencePenalty: p.PresencePenalty,
		FrequencyPenalty: p.FrequencyPenalty, MaxNewTokens: p.MaxNewTokens, Stop: p.Stop, StopAtEOS: p.StopAtEOS}
	rs := make([]rows.Completion, len(outs))
	for i, out := range outs {
		r := rows.Completion{PromptIndex: out.Prompt, Prompt: texts[out.Prompt], Sample: out.Sample, Seed: env.Seed,
			Text: out.Text, StopReason: string(out.Stop), StopString: out.StopString, Tokens: len(out.Tokens), Sampling: rec}
		if p.TokenIDs {
			r.TokenIDs, r.PromptIDs = out.Tokens, prompts[out.Prompt]
		}
		if inputs != nil {
			r.Input = inputs[out.Prompt]
		}
		rs[i] = r
	}
	dir := env.Output("completions")
	if err := rows.Write(filepath.Join(dir, registry.FileCompletions), rs); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, registry.FileSamples), []byte(samplesMarkdown(rs, p, env.Seed, bos)), 0o644)
}

// samplesMarkdown is the readable excerpt: the first Show completions.
func samplesMarkdown(rs []rows.Completion, p *CompleteParams, seed int64, bos bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Completions (seed %d; temperature %g, top-k %d, top-p %g; at most %d new tokens; %d of %d shown)",
		seed, p.Temperature, p.TopK, p.TopP, p.MaxNewTokens, min(p.Show, len(rs)), len(rs))
	if bos {
		b.WriteString("; prompts start with <|endoftext|>")
	}
	b.WriteString(":\n\n| prompt | sample | completion | stop |\n|---|---|---|---|\n")
	for _, r := range rs[:min(p.Show, len(rs))] {
		fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", registry.MarkdownCell(r.Prompt), r.Sample, registry.MarkdownCell(r.Text), r.StopReason)
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
