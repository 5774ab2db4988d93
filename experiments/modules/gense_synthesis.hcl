experiment "gense_synthesis" {
  title = "GenSE's synthesis: T_e(u) and T_c(u) sampled for unlabeled sentences u, quality-checked by the discriminator under T_d"
  table = "none (a module of gense.hcl)"
  paper = "gense.md"
}

input "generator" {
  kind        = "language_model"
  description = "the T5 trained as generator and discriminator"
}

input "sentences" {
  kind        = "sentences"
  description = "the unlabeled sentences u"
}

variable "settings" {
  description = "gense.hcl's local.synthesis: seed, Table 1's t_e and t_c (placeholder [X]) and t_d, alpha, max_new_tokens, keep_ids"
}

stage "generate" {
  for_each       = { entail = var.settings.t_e, contra = var.settings.t_c }
  uses           = "generate.complete"
  model          = input.generator
  data           = input.sentences
  template       = each.value
  samples        = 1
  top_p          = 0.9
  max_new_tokens = var.settings.max_new_tokens
  batch_size     = 64
  token_ids      = var.settings.keep_ids
  seed           = var.settings.seed
}

# A triplet is kept when P(true | T_d(u, u_entail)) and P(false | T_d(u,
# u_contra)), each normalised over the two labels, both reach alpha.
stage "filter" {
  uses         = "synth.quality_check"
  model        = input.generator
  entail       = stage.generate["entail"].completions
  contra       = stage.generate["contra"].completions
  template     = var.settings.t_d
  alpha        = var.settings.alpha
  batch_size   = 64
  raw_logprobs = var.settings.keep_ids
  seed         = var.settings.seed
}

output "triplets" {
  value = stage.filter.triplets
}

output "metrics" {
  value = stage.filter.metrics
}
