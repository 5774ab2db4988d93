experiment "dino_format" {
  title = "DINO's offline generator: a small GPT-2 fine-tuned on DINO's instruction format"
  table = "none (a module of dino.hcl)"
  paper = "dino.md (a departure: the paper's GPT2-XL needed no format teaching)"
}

deviation "local_text" {
  what      = "the generator and its fine-tuning data"
  paper     = "GPT2-XL as it is, following the instructions zero-shot"
  ours      = "lm.hcl's small GPT-2 on the local text (its deviations follow), fine-tuned on texts rendered in DINO's instruction format from the data directory's dev/test-derived NLI triplets: 250 updates of 16 on all 26,448 texts (ci: 150 on 3,000)"
  why       = "no GPT2-XL here, and a model this small does not follow an instruction it has never seen (it almost never closes the quote)"
  tables    = ["DINO Table 1", "DINO Table 2"]
  stand_ins = ["nli", "wiki", "bbc", "brown"]
}

module "lm" { source = "../lm.hcl" }

# SNLI/MNLI dev and test triplets here, never STS data.
stage "nli" { uses = "data.nli" }

# I_1(premise) + entailment, I_0.5(premise) + contradiction, I_0(premise) +
# another premise's entailment, each closed by the quote.
stage "render" {
  uses = "pairs.render_instructions"
  data = stage.nli.triplets
  seed = 42
}

# Each text framed by <|endoftext|>, not packed; fixed seeds, so `repro
# baseline --seeds` on dino.hcl varies generation and training, not this.
stage "format" {
  uses          = "train.causal_lm"
  data          = stage.render.sentences
  init          = module.lm.lm.model
  pack          = false
  learning_rate = 5e-4
  batch_size    = 16
  max_length    = 96
  max_steps     = 250
  warmup        = 30
  dropout       = 0
  seed          = 42
}

profile "ci" {
  stage "render" { max_triplets = 1000 }
  stage "format" { max_steps = 150 }
}
