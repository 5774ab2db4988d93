# Text-to-text models (T5 family) as GenSE builds on them (Chen et al. 2022,
# section 2): one T5 trained jointly as generator (entailment / contradiction
# generation, prompts T_e and T_c) and discriminator (prompt T_d, target
# "true" / "false"), then a prompt-based contrastive sentence encoder (T_s,
# the decoder's first output with the pad token fed to the decoder) trained
# on NLI triplets with hard negatives (GenSE eq. 2), evaluated on STS.
#
# This file exercises the model family end to end; the GenSE experiment adds
# the synthesis (generation + discrimination filtering of unlabeled
# sentences) on top of these stages. The stage blocks carry the usual T5
# fine-tuning settings from a local Hugging Face checkpoint (-var t5=DIR:
# t5-base or flan-t5-base, say); none can be had here.
#
# What the ci profile shows: the whole chain trains and evaluates for real on
# this machine in minutes -- a tiny T5 from scratch (2+2 layers, width 64,
# a WordPiece vocabulary learned from the NLI sentences, since no
# SentencePiece model is shipped) learns the mixed generation/discrimination
# task, generates with the trained model under T_e, and its T_s embeddings
# are trained contrastively and scored on STS. What it cannot show: anything
# about pretrained T5 quality; the STS numbers of a model this size trained
# for a few hundred updates are far below the paper's (and below SimCSE's
# mini encoders). Span-corruption pretraining (train.span_corruption) joins
# the mini/ci chain once the SentencePiece branch wires its span-corruption
# function in (train.SpanCorrupt).

experiment "t5" {
  title = "T5 text-to-text models: generator/discriminator and prompt-based sentence embeddings (GenSE's model family)"
  table = "STS test, Spearman x 100, of the T_s encoder"
  paper = "none for this chain (GenSE's full tables are experiments/gense.hcl's)"
}

variable "seed" {
  default = 42
}

variable "t5" {
  description = "local Hugging Face T5 directory (config.json, model.safetensors, tokenizer files)"
  default     = ""
}

locals {
  sts = {
    STS12   = "sts12", STS13 = "sts13", STS14 = "sts14", STS15 = "sts15", STS16 = "sts16",
    "STS-B" = "stsb", "SICK-R" = "sickr", Avg = "avg"
  }
  t_e = "Write two sentences that are entailment. Sentence 1: \"[X1]\" Sentence 2:"
  t_c = "Write two sentences that are contradictory. Sentence 1: \"[X1]\" Sentence 2:"
  t_d = "if \"[X1]\", does this mean that \"[X2]\"? true or false"
  t_s = "[X] Question: what can we draw from the above sentence?"
}

# ---- data -------------------------------------------------------------------

stage "nli" {
  uses = "data.nli"
}

stage "stsb_dev" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "dev"
}

stage "dev_sentences" {
  uses   = "data.sts_sentences"
  tasks  = ["stsb"]
  splits = ["dev"]
}

stage "sts" {
  uses  = "data.sts"
  tasks = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"]
  split = "test"
}

# GenSE's generation and discrimination instances, mixed equally: each NLI
# triplet gives T_e(x) -> x_entail, T_c(x) -> x_contra,
# T_d(x, x_entail) -> true, T_d(x, x_contra) -> false.
stage "gen_entail" {
  uses       = "text.seq2seq"
  data       = stage.nli.triplets
  source     = local.t_e
  target     = "[X2]"
  hypothesis = "positive"
}

stage "gen_contra" {
  uses       = "text.seq2seq"
  data       = stage.nli.triplets
  prepend    = stage.gen_entail.instances
  source     = local.t_c
  target     = "[X2]"
  hypothesis = "negative"
}

stage "disc_true" {
  uses       = "text.seq2seq"
  data       = stage.nli.triplets
  prepend    = stage.gen_contra.instances
  source     = local.t_d
  target     = "true"
  hypothesis = "positive"
}

stage "gen_disc" {
  uses       = "text.seq2seq"
  data       = stage.nli.triplets
  prepend    = stage.disc_true.instances
  source     = local.t_d
  target     = "false"
  hypothesis = "negative"
}

# ---- the generator/discriminator ---------------------------------------------

stage "gen" {
  uses              = "train.seq2seq"
  data              = stage.gen_disc.instances
  hf_checkpoint     = var.t5
  from_scratch      = false
  learning_rate     = 1e-4
  batch_size        = 32
  epochs            = 3
  max_source_length = 128
  max_target_length = 64
  seed              = var.seed
}

stage "samples" {
  uses           = "generate.complete"
  model          = stage.gen.model
  data           = stage.dev_sentences.sentences
  template       = "Write two sentences that are entailment. Sentence 1: \"[X]\" Sentence 2:"
  max_prompts    = 8
  samples        = 1
  max_new_tokens = 24
  top_k          = 5
  top_p          = 0.9
  show           = 8
  seed           = var.seed
}

# ---- the prompt-based sentence encoder (T_s, GenSE eq. 2) --------------------

stage "embed" {
  uses           = "train.t5_contrastive"
  data           = stage.nli.triplets
  dev            = stage.stsb_dev.pairs
  init           = stage.gen.model
  mode           = "encdec"
  template       = local.t_s
  temperature    = 0.05
  hard_negatives = true
  learning_rate  = 5e-5
  batch_size     = 64
  epochs         = 1
  max_length     = 64
  seed           = var.seed
}

stage "eval" {
  uses    = "evaluate.sts"
  encoder = stage.embed.model
  data    = stage.sts.pairs
}

expect "embed" {
  for_each = local.sts
  row      = "T5 T_s encoder (encdec), NLI eq. 2"
  column   = each.key
  value    = stage.eval.metrics[each.value]
}

# ---- mini: a small T5 from scratch (4+4 layers, width 128) --------------------
# The same chain, longer: what it shows is whether a larger text-to-text model
# trained longer on the NLI tasks gives better T_s embeddings than the ci one;
# what it cannot show is anything about pretrained T5 (no checkpoint here).
profile "mini" {
  stage "gen" {
    from_scratch      = true
    layers            = 4
    hidden            = 128
    heads             = 4
    ff                = 512
    vocab_size        = 4000
    sentinels         = 10
    max_source_length = 64
    max_target_length = 32
    batch_size        = 32
    learning_rate     = 1e-3
    warmup            = 100
    dropout           = 0.1
    max_steps         = 800
  }
  stage "embed" {
    max_length    = 48
    batch_size    = 64
    learning_rate = 5e-4
    dropout       = 0.1
    max_steps     = 400
    eval_every    = 100
  }
}

# ---- ci: a tiny T5 from scratch, every stage for real -------------------------
profile "ci" {
  stage "gen" {
    from_scratch      = true
    layers            = 2
    hidden            = 64
    heads             = 4
    ff                = 128
    vocab_size        = 2000
    sentinels         = 10
    max_source_length = 48
    max_target_length = 24
    batch_size        = 32
    learning_rate     = 2e-3
    warmup            = 20
    dropout           = 0
    max_steps         = 600
  }
  stage "embed" {
    max_length    = 32
    batch_size    = 32
    learning_rate = 1e-3
    dropout       = 0.1
    max_steps     = 400
    eval_every    = 100
  }
}
