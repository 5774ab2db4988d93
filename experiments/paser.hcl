# PaSeR: Sentence Representation Learning with Generative Objective rather
# than Contrastive Objective (Wu & Zhao, 2022; ../shared/papers/paser.md).
#
# Unsupervised: the sentences of the seven STS sets (the paper's corpus, as
# ConSERT's), each duplicated with its top-5 RAKE phrases masked (the reading
# of deviation "default_top_k"), synonym replacement on both copies, a
# BERT-base encoder (the raw [CLS] token) and a 6-layer transformer decoder
# sharing its word embeddings that reconstructs the masked phrases from
# [Es, Es', 10|Es - Es'|, 10|Es * Es'|], plus MLM. Supervised: SimCSE's
# contrastive loss on NLI + alpha x the generative loss, starting from the
# best unsupervised checkpoint, lr 3e-5. STS-B dev selects checkpoints.
#
# The paper profile needs a local bert-base-uncased (-var bert=DIR), SimCSE's
# NLI training set (-var simcse_nli=nli_for_simcse.csv) and AskUbuntu's test
# set as MTEB publishes it (-var askubuntu=test.jsonl.gz). The mini
# profile fine-tunes the small BERT pretrained here (experiments/pretrained.hcl)
# with the paper's objective, at a smaller scale.

experiment "paser" {
  title = "PaSeR: Sentence Representation Learning with Generative Objective rather than Contrastive Objective"
  table = "Table 1: unsupervised STS; Table 2: supervised STS; Table 3: reranking"
  paper = "paser.md"
  # The paper's own resolution, for every ablation with paper values: two
  # cells no further apart than the copies of one cell are not an ordering
  # the paper shows; the report counts its orderings beyond it apart from
  # the near-ties (the plain count and min_agreement are unchanged). The
  # paper prints its default configuration (RAKE top-5 as deviation
  # "default_top_k" reads it, SR, m = n = 10, [CLS], 6-layer decoder) as
  # 77.7 / 79.3 / 65.4 in all four tables, 4, 5 (its top-5 row), 8 and 9,
  # and Table 1's row of the same model gives 77.72 / 79.19 / 65.31: the
  # copies agree to the tenth the tables print, so the resolution is that
  # tenth on every column. (Read as top-3, Table 5's copy would be 77.8 /
  # 79.4 / 64.4, and the resolution was [0.1, 0.1, 1.0].)
  paper_resolution = 0.1
}

variable "seed" {
  default = 42
}

# The paper's [CLS]: "directly using the [CLS] token" (section 3.2.1 and
# Appendix B), the raw first-token state, not BERT's pooler (dense + tanh)
# over it. Both training stages pool it, and Table 9's "[CLS]" row is it.
# The ci profile, recorded through the pooler, sets "cls".
variable "cls_pooling" {
  default = "cls_before_pooler"
}

variable "bert" {
  description = "local Hugging Face bert-base-uncased directory (config.json, model.safetensors, vocab.txt)"
  default     = ""
}

variable "simcse_nli" {
  description = "SimCSE's NLI training set: a local nli_for_simcse.csv (sent0,sent1,hard_neg; 275,601 SNLI+MNLI train triplets), the supervised stage's data"
  default     = ""
}

variable "askubuntu" {
  description = "AskUbuntu's test set as MTEB publishes it: a local askubuntudupquestions-reranking test.jsonl.gz (Table 3)"
  default     = ""
}

# The mini BERT, declared once for every experiment.
module "pretrained" {
  source = "./pretrained.hcl"
}

locals {
  sts_tasks = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"]
  sts = {
    STS12   = "sts12", STS13 = "sts13", STS14 = "sts14", STS15 = "sts15", STS16 = "sts16",
    "STS-B" = "stsb", "SICK-R" = "sickr", Avg = "avg"
  }
}

# ---- deviations from the paper (printed under the table) ---------------------

# The paper is ambiguous here; the reading chosen, with its evidence.
deviation "default_top_k" {
  what     = "the default number of masked RAKE phrases (a reading)"
  paper    = "not stated: section 3.1.2 speaks of masking the most important phrase, section 4.5.3 of the top three contributing the most and top 4-5 adding trivially; the default configuration printed in Tables 4, 8 and 9 (77.7 / 79.3 / 65.4) is Table 5's top-5 row, not its top-3 row (77.8 / 79.4 / 64.4)"
  ours     = "top_k = 5 in both masking stages; paper_resolution 0.1 on every column, the copies of the default agreeing to the tenth"
  why      = "the numbers decide where the words do not: every printed copy of the default configuration is the top-5 row, and Table 1's row of the same model (77.72 / 79.19 / 65.31 on STS12-16 / STS-B / SICK-R) lies within 0.11 of it and 0.9 from top-3's SICK-R"
  evidence = "paser.md Table 1 (PaSeR-BERT-base unsup), Table 4 (+ SR), Table 5 (RAKE top3 and top5), Table 8 (m = 10, n = 10), Table 9 ([CLS]); sections 3.1.2 and 4.5.3"
  tables   = ["Table 1", "Table 2", "Table 3", "Table 4", "Table 5", "Table 8", "Table 9"]
}

deviation "np_vp_masking" {
  what     = "which sub-tree NP+VP masks (Table 5; a reading)"
  paper    = "a random sub-tree of the parse is masked (section 3.1.1); for \"both NP and VP\" (section 4.5.3) it does not say whether one phrase of either kind or one of each"
  ours     = "one chunk per sentence drawn at random (one_chunk, draw_seed = var.seed); for NP+VP one drawn from the noun and verb phrases together"
  why      = "\"a random sub-tree\" is one phrase, whose kind NP+VP widens"
  evidence = "paser.md sections 3.1.1 and 4.5.3"
  tables   = ["Table 5"]
}

deviation "sup_pooling" {
  what     = "the supervised stage's sentence representation (a reading)"
  paper    = "not stated for the supervised stage: the paper's [CLS] is \"directly using the [CLS] token\" and is used \"if not specified\"; SimCSE, whose contrastive framework the stage combines with PaSeR, trains its supervised models with an MLP over [CLS]"
  ours     = "the raw [CLS] (pooling = cls_before_pooler) in training and evaluation, as in the unsupervised stage; no MLP or pooler"
  why      = "the paper names no MLP or pooler anywhere"
  evidence = "paser.md sections 3.2.1 and 4.2, Appendix B"
  tables   = ["Table 2", "Table 3"]
}

deviation "np_vp_phrases" {
  what   = "Table 5's noun and verb phrases"
  paper  = "phrases from NLTK's parser"
  ours   = "phrases from a part-of-speech tagger and chunker trained here on the Brown Corpus"
  why    = "no trained parser is in the data directory"
  tables = ["Table 5"]
}

# ---- data -------------------------------------------------------------------

stage "corpus" {
  uses  = "data.sts_sentences"
  tasks = local.sts_tasks
}

stage "sts" {
  uses  = "data.sts"
  tasks = local.sts_tasks
  split = "test"
}

stage "stsb_dev" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "dev"
}

stage "stsb_test" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "test"
}

stage "rerank" {
  uses   = "data.rerank"
  source = "askubuntu"
  path   = var.askubuntu
}

stage "nli" {
  uses   = "data.nli"
  source = "simcse_nli"
  path   = var.simcse_nli
}

# ---- unsupervised PaSeR -----------------------------------------------------

# RAKE's top 5 (deviation "default_top_k"). one_chunk and draw_seed apply
# where Table 5 sets method to np, vp or np+vp: one random chunk a
# sentence, the paper's "random sub-tree" (RAKE ignores them).
stage "mask" {
  uses      = "text.mask_phrases"
  input     = stage.corpus.sentences
  method    = "rake"
  top_k     = 5
  one_chunk = true
  draw_seed = var.seed
}

stage "eda" {
  uses                = "text.eda"
  input               = stage.mask.pairs
  synonym_replacement = 0.1
  random_deletion     = 0
  random_swap         = 0
  seed                = var.seed
}

stage "train" {
  uses            = "train.paser"
  data            = stage.eda.pairs
  dev             = stage.stsb_dev.pairs
  hf_checkpoint   = var.bert
  from_scratch    = false
  pooling         = var.cls_pooling
  decoder_layers  = 6
  m               = 10
  n               = 10
  mlm             = true
  mlm_probability = 0.15
  learning_rate   = 3e-5
  batch_size      = 64
  max_length      = 32
  epochs          = 5
  eval_every      = 250
  seed            = var.seed
}

stage "eval" {
  uses    = "evaluate.sts"
  encoder = stage.train.model
  data    = stage.sts.pairs
}

stage "rerank_unsup" {
  uses    = "evaluate.rerank"
  encoder = stage.train.model
  data    = stage.rerank.queries
}

stage "density" {
  uses    = "evaluate.cosine_density"
  encoder = stage.train.model
  data    = stage.stsb_test.pairs
}

# ---- supervised PaSeR -------------------------------------------------------

stage "nli_sentences" {
  uses     = "data.triplet_sentences"
  triplets = stage.nli.triplets
}

stage "nli_mask" {
  uses   = "text.mask_phrases"
  input  = stage.nli_sentences.sentences
  method = "rake"
  top_k  = 5
}

stage "nli_eda" {
  uses                = "text.eda"
  input               = stage.nli_mask.pairs
  synonym_replacement = 0.1
  seed                = var.seed
}

stage "train_sup" {
  uses          = "train.paser_sup"
  triplets      = stage.nli.triplets
  masked        = stage.nli_eda.pairs
  init          = stage.train.model
  dev           = stage.stsb_dev.pairs
  alpha         = 1.0
  temperature   = 0.05
  pooling       = var.cls_pooling
  learning_rate = 3e-5
  batch_size    = 64
  max_length    = 32
  epochs        = 3
  eval_every    = 250
  seed          = var.seed
}

stage "eval_sup" {
  uses    = "evaluate.sts"
  encoder = stage.train_sup.model
  data    = stage.sts.pairs
}

stage "rerank_sup" {
  uses    = "evaluate.rerank"
  encoder = stage.train_sup.model
  data    = stage.rerank.queries
}

# ---- Table 1 and Table 2 ----------------------------------------------------

expect "unsup" {
  for_each = {
    STS12   = 70.21, STS13 = 83.88, STS14 = 73.06, STS15 = 83.87, STS16 = 77.60,
    "STS-B" = 79.19, "SICK-R" = 65.31, Avg = 76.16
  }
  row       = "PaSeR-BERT-base (unsup, Table 1)"
  column    = each.key
  value     = stage.eval.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

expect "sup" {
  for_each = {
    STS12   = 78.40, STS13 = 85.80, STS14 = 80.79, STS15 = 86.36, STS16 = 82.95,
    "STS-B" = 83.67, "SICK-R" = 80.31, Avg = 82.61
  }
  row       = "PaSeR-BERT-base (sup, Table 2)"
  column    = each.key
  value     = stage.eval_sup.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

# ---- Table 3 ----------------------------------------------------------------
# AskUbuntu comes by -var (QQP is not here). The mini and ci profiles
# read the SemEval-2016 CQA question reranking set in its place, so their
# cells carry no paper value: AskUbuntu's would be a different dataset's.

expect "rerank_unsup" {
  for_each  = { "CQA MAP (AskUbuntu)" = ["map", 50.51], "CQA MRR@10 (AskUbuntu)" = ["mrr10", 64.56] }
  row       = "PaSeR-BERT-base (unsup, Table 3)"
  column    = each.key
  value     = stage.rerank_unsup.metrics[each.value[0]]
  paper     = var.askubuntu != "" ? each.value[1] : null
  tolerance = 1.0
}

expect "rerank_sup" {
  for_each  = { "CQA MAP (AskUbuntu)" = ["map", 52.28], "CQA MRR@10 (AskUbuntu)" = ["mrr10", 67.31] }
  row       = "PaSeR-BERT-base (sup, Table 3)"
  column    = each.key
  value     = stage.rerank_sup.metrics[each.value[0]]
  paper     = var.askubuntu != "" ? each.value[1] : null
  tolerance = 1.0
}

# Appendix C, Table 10: mean cosine per STS-B similarity level (PaSeR column).
expect "density" {
  for_each  = { "0-1" = 0.55, "1-2" = 0.74, "2-3" = 0.81, "3-4" = 0.86, "4-5" = 0.92 }
  row       = "PaSeR mean cosine per STS-B level (Table 10)"
  column    = each.key
  value     = stage.density.metrics.levels[each.key].mean
  paper     = each.value
  tolerance = 0.05
}

expect "geometry" {
  for_each        = { alignment = "alignment", uniformity = "uniformity" }
  row             = "PaSeR-BERT-base (unsup) on STS-B"
  column          = each.key
  value           = stage.eval.metrics[each.value]
  lower_is_better = true
}

# ---- ablations (unsupervised; columns as the paper prints them) --------------

ablation "augmentation" {
  title   = "Table 4: data augmentation"
  report  = [stage.eval.metrics.sts12_16, stage.eval.metrics.stsb, stage.eval.metrics.sickr]
  columns = ["STS12-16", "STS-B", "SICK-R"]
  variant "no aug" {
    set = { "stage.eda.synonym_replacement" = 0, "stage.eda.random_deletion" = 0, "stage.eda.random_swap" = 0 }
  }
  variant "+ RS" {
    set = { "stage.eda.synonym_replacement" = 0, "stage.eda.random_deletion" = 0, "stage.eda.random_swap" = 0.1 }
  }
  variant "+ RD" {
    set = { "stage.eda.synonym_replacement" = 0, "stage.eda.random_deletion" = 0.1, "stage.eda.random_swap" = 0 }
  }
  variant "+ SR" {
    set = { "stage.eda.synonym_replacement" = 0.1, "stage.eda.random_deletion" = 0, "stage.eda.random_swap" = 0 }
  }
  variant "+ SR + RD" {
    set = { "stage.eda.synonym_replacement" = 0.1, "stage.eda.random_deletion" = 0.1, "stage.eda.random_swap" = 0 }
  }
  variant "+ SR + RS" {
    set = { "stage.eda.synonym_replacement" = 0.1, "stage.eda.random_deletion" = 0, "stage.eda.random_swap" = 0.1 }
  }
  paper = {
    "no aug" = [73.8, 74.5, 62.5], "+ RS" = [74.2, 75.0, 63.5], "+ RD" = [74.2, 75.5, 63.8],
    "+ SR"   = [77.7, 79.3, 65.4], "+ SR + RD" = [77.2, 77.5, 64.5], "+ SR + RS" = [77.3, 77.6, 63.1]
  }
  # The mini profile (fourth phase, mean pooling) keeps 33 of these 44
  # orderings at seed 42 (75%), 32 on the means of seeds 42, 1 and 2
  # (docs/papers/paser.md); below 65% is a regression.
  min_agreement = 0.65
}

ablation "phrases" {
  title   = "Table 5: phrases to mask (NP/VP from a Brown-trained tagger and chunker, not NLTK's parser)"
  report  = [stage.eval.metrics.sts12_16, stage.eval.metrics.stsb, stage.eval.metrics.sickr]
  columns = ["STS12-16", "STS-B", "SICK-R"]
  variant "NP only" {
    set = { "stage.mask.method" = "np" }
  }
  variant "VP only" {
    set = { "stage.mask.method" = "vp" }
  }
  variant "NP+VP" {
    set = { "stage.mask.method" = "np+vp" }
  }
  variant "RAKE (top1)" {
    set = { "stage.mask.method" = "rake", "stage.mask.top_k" = 1 }
  }
  variant "RAKE (top2)" {
    set = { "stage.mask.method" = "rake", "stage.mask.top_k" = 2 }
  }
  variant "RAKE (top3)" {
    set = { "stage.mask.method" = "rake", "stage.mask.top_k" = 3 }
  }
  variant "RAKE (top4)" {
    set = { "stage.mask.method" = "rake", "stage.mask.top_k" = 4 }
  }
  variant "RAKE (top5)" {
    set = { "stage.mask.method" = "rake", "stage.mask.top_k" = 5 }
  }
  paper = {
    "NP only"     = [68.5, 68.2, 62.0], "VP only" = [63.8, 64.1, 58.3], "NP+VP" = [69.5, 70.4, 64.3],
    "RAKE (top1)" = [73.5, 73.9, 62.4], "RAKE (top2)" = [76.8, 77.6, 63.6], "RAKE (top3)" = [77.8, 79.4, 64.4],
    "RAKE (top4)" = [77.6, 79.3, 64.6], "RAKE (top5)" = [77.7, 79.3, 65.4]
  }
  # The mini profile (fourth phase, mean pooling) keeps 66 of these 83
  # orderings at seed 42 (80%), 67 on the means of seeds 42, 1 and 2
  # (docs/papers/paser.md); below 60% is a regression.
  min_agreement = 0.60
}

ablation "signal" {
  title   = "Table 8 (Appendix A): m and n of the decoding signal"
  report  = [stage.eval.metrics.sts12_16, stage.eval.metrics.stsb, stage.eval.metrics.sickr]
  columns = ["STS12-16", "STS-B", "SICK-R"]
  variant "m = 0.1, n = 1.0" {
    set = { "stage.train.m" = 0.1, "stage.train.n" = 1.0 }
  }
  variant "m = 1.0, n = 1.0" {
    set = { "stage.train.m" = 1.0, "stage.train.n" = 1.0 }
  }
  variant "m = 10, n = 1.0" {
    set = { "stage.train.m" = 10, "stage.train.n" = 1.0 }
  }
  variant "m = 10, n = 0.1" {
    set = { "stage.train.m" = 10, "stage.train.n" = 0.1 }
  }
  variant "m = 10, n = 10" {
    set = { "stage.train.m" = 10, "stage.train.n" = 10 }
  }
  paper = {
    "m = 0.1, n = 1.0" = [77.2, 78.5, 64.6], "m = 1.0, n = 1.0" = [77.6, 78.7, 64.8],
    "m = 10, n = 1.0"  = [77.7, 79.0, 65.1], "m = 10, n = 0.1" = [77.6, 79.0, 65.1],
    "m = 10, n = 10"   = [77.7, 79.3, 65.4]
  }
}

ablation "pooling" {
  title   = "Table 9 (Appendix B): pooling"
  report  = [stage.eval.metrics.sts12_16, stage.eval.metrics.stsb, stage.eval.metrics.sickr]
  columns = ["STS12-16", "STS-B", "SICK-R"]
  variant "Top1 avg." {
    set = { "stage.train.pooling" = "mean" }
  }
  variant "Top2 avg." {
    set = { "stage.train.pooling" = "top2_avg" }
  }
  variant "First-last avg." {
    set = { "stage.train.pooling" = "first_last_avg" }
  }
  variant "[CLS]" {
    set = { "stage.train.pooling" = var.cls_pooling }
  }
  paper = {
    "Top1 avg."       = [76.2, 78.3, 65.7], "Top2 avg." = [75.6, 78.0, 66.1],
    "First-last avg." = [76.2, 78.4, 65.8], "[CLS]" = [77.7, 79.3, 65.4]
  }
}

ablation "decoder_layers" {
  title   = "Figure 4: layers of the generative decoder"
  vary    = { "stage.train.decoder_layers" = [1, 2, 3, 4, 5, 6, 7, 8] }
  report  = [stage.eval.metrics.avg, stage.eval.metrics.stsb]
  columns = ["Avg (7 STS)", "STS-B"]
  figure = {
    file    = "figure4.png"
    title   = "PaSeR: decoder layers (Figure 4)"
    x_label = "decoder layers"
    y_label = "avg. Spearman of the 7 STS tasks"
  }
}

# ---- mini: the pretrained mini BERT, fine-tuned with the paper's objective ----
#
# The encoder is experiments/pretrained.hcl's masked-LM-pretrained BERT after
# its fourth phase (bert_4: 4 layers, width 128, bert-base-uncased's
# WordPiece vocabulary, GloVe 100d in its word embeddings before
# pretraining), declared once in that module. The paper's objective and
# settings otherwise -- [CLS] pooling, a 6-layer decoder sharing the word
# embeddings, m = 10, MLM at 15%, RAKE masks, synonym replacement 0.1,
# lr 3e-5, batch 64 -- with these deltas, each measured on STS-B dev
# (docs/papers/paser.md): mean pooling instead of [CLS] (from the fourth phase, best dev
# at seeds 42 / 1 / 2: mean 66.17 / 64.16 / 65.47, first-last 64.92 /
# 62.98 / 64.31, top-2 64.83 / 62.64 / 64.18, the raw [CLS] token 57.10 /
# 53.57 / 54.03; the pooling is
# re-selected with every change of the encoder, and it has moved: mean from
# the first phase, the raw [CLS] from the second (66.58 against mean's
# 63.11), a tie from the third (65.98 against 65.88). The mini BERT's pooler
# was never trained -- masked-LM only -- so Table 9's "[CLS]" row is the raw
# token, var.cls_pooling. The fifth phase, with next-sentence
# prediction, was measured and not adopted: docs/papers/paser.md);
# n = 1 instead of 10 (on the first phase, with n = 10 dev was best at the
# first evaluation and fell after, at every lr tried: the weight on the
# decoder's reconstruction eroded the pretrained encoder; with n = 1 it
# rose; Table 8's grid still runs n = 10); 100 updates with STS-B dev every
# 25 (the paper: 5 epochs, every 250; a 300-update run with n = 1 peaked at
# update 100). The supervised stage takes 150 updates of 64 NLI triplets at
# lr 1e-4 (about one pass over the 8,816 triplets), pooling [CLS] through a
# pooler (dense + tanh, made fresh: the mini BERT has none, as SimCSE's
# MLP is), which the contrastive objective trains.
#
# Kept as recorded (results/paser.mini.json and the grids in
# docs/papers/paser.md), where the paper profile now follows the paper
# (issue 35): RAKE top-3 masks (the paper profile reads top-5: deviation
# "default_top_k"), every chunk masked in Table 5's NP/VP rows (the paper
# profile: one random chunk), the supervised stage through the pooler (the
# paper profile: the raw [CLS]).
profile "mini" {
  variables = { cls_pooling = "cls_before_pooler" }
  stage "mask" {
    top_k     = 3
    one_chunk = false
    draw_seed = 0
  }
  stage "nli_mask" {
    top_k = 3
  }
  # The data directory's stand-ins: the dev/test-derived NLI triplets for
  # SimCSE's training set, the SemEval-2016 CQA set for AskUbuntu.
  stage "nli" {
    source = "nli"
  }
  stage "rerank" {
    source = "semeval2016_cqa"
    split  = "dev"
  }
  stage "train" {
    init          = module.pretrained.bert_4.model
    pooling       = "mean"
    n             = 1
    learning_rate = 3e-5
    max_steps     = 100
    warmup        = 10
    eval_every    = 25
  }
  stage "train_sup" {
    pooling       = "cls"
    learning_rate = 1e-4
    max_steps     = 150
    eval_every    = 50
  }
}

# ---- ci: the same pipeline on the module's ci pretraining, in minutes --------
#
# The ci BERT (2 layers, 200 masked-LM updates on the Wikipedia sentences), a
# 2-layer decoder, 30 unsupervised and 20 supervised updates, on the mini
# profile's stand-in data. As recorded (results/paser.ci.json): RAKE top-3,
# every NP/VP chunk masked, and [CLS] through the pooler in both stages and
# in Table 9's row (cls_pooling = "cls").
profile "ci" {
  variables = { cls_pooling = "cls" }
  stage "mask" {
    top_k     = 3
    one_chunk = false
    draw_seed = 0
  }
  stage "nli_mask" {
    top_k = 3
  }
  stage "nli" {
    source = "nli"
  }
  stage "rerank" {
    source = "semeval2016_cqa"
    split  = "dev"
  }
  stage "train" {
    init           = module.pretrained.bert.model
    decoder_layers = 2
    learning_rate  = 1e-4
    max_steps      = 30
    warmup         = 3
    eval_every     = 15
  }
  stage "train_sup" {
    decoder_layers = 2
    learning_rate  = 1e-4
    max_steps      = 20
    eval_every     = 10
  }
}
