# PaSeR (Wu & Zhao, 2022): BERT-base reconstructs the RAKE phrases masked out
# of the STS sentences through a 6-layer decoder, plus MLM; the supervised
# stage adds SimCSE's loss on NLI. The stage blocks are the paper profile (data
# and weights by -var); mini and ci hold deltas. Notes: docs/papers/paser.md.

experiment "paser" {
  title            = "PaSeR: Sentence Representation Learning with Generative Objective rather than Contrastive Objective"
  table            = "Table 1: unsupervised STS; Table 2: supervised STS; Table 3: reranking"
  paper            = "paser.md"
  paper_resolution = 0.1 # the printed copies of the default agree to the tenth (default_top_k)
}

variable "seed" { default = 42 }

# The paper's [CLS], "directly using the [CLS] token": no pooler.
variable "cls_pooling" { default = "cls_before_pooler" }

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

module "pretrained" { source = "./pretrained.hcl" }

locals {
  sts_tasks = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"]
  sts = {
    STS12   = "sts12", STS13 = "sts13", STS14 = "sts14", STS15 = "sts15", STS16 = "sts16",
    "STS-B" = "stsb", "SICK-R" = "sickr", Avg = "avg"
  }
  # Tables 4, 5, 8 and 9 print these three columns of the unsupervised model.
  ablation_columns = ["STS12-16", "STS-B", "SICK-R"]
  ablation_report  = [stage.eval["unsup"].metrics.sts12_16, stage.eval["unsup"].metrics.stsb, stage.eval["unsup"].metrics.sickr]
  # What both training stages share (section 4.2).
  training = { pooling = var.cls_pooling, learning_rate = 3e-5, batch_size = 64, max_length = 32, eval_every = 250 }
  # Every table trains PaSeR (a deviation of the training touches them all).
  tables = ["Table 1", "Table 2", "Table 3", "Table 4", "Table 5", "Table 8", "Table 9", "Table 10", "Figure 4"]
}

# ---- deviations from the paper (printed under the table) ---------------------

deviation "default_top_k" {
  what     = "the default number of masked RAKE phrases (a reading)"
  paper    = "not stated: section 3.1.2 speaks of masking the most important phrase, section 4.5.3 of the top three contributing the most and top 4-5 adding trivially; the default configuration printed in Tables 4, 8 and 9 (77.7 / 79.3 / 65.4) is Table 5's top-5 row, not its top-3 row (77.8 / 79.4 / 64.4)"
  ours     = "top_k = 5 in both masking stages; paper_resolution 0.1 on every column, the copies of the default agreeing to the tenth"
  why      = "the numbers decide where the words do not: every printed copy of the default configuration is the top-5 row, and Table 1's row of the same model (77.72 / 79.19 / 65.31 on STS12-16 / STS-B / SICK-R) lies within 0.11 of it and 0.9 from top-3's SICK-R"
  evidence = "paser.md Table 1 (PaSeR-BERT-base unsup), Table 4 (+ SR), Table 5 (RAKE top3 and top5), Table 8 (m = 10, n = 10), Table 9 ([CLS]); sections 3.1.2 and 4.5.3"
  tables   = ["Table 1", "Table 2", "Table 3", "Table 4", "Table 5", "Table 8", "Table 9"]
  profiles = ["paper"]
}

deviation "np_vp_masking" {
  what     = "which sub-tree NP+VP masks (Table 5; a reading)"
  paper    = "a random sub-tree of the parse is masked (section 3.1.1); for \"both NP and VP\" (section 4.5.3) it does not say whether one phrase of either kind or one of each"
  ours     = "one chunk per sentence drawn at random (one_chunk, draw_seed = var.seed); for NP+VP one drawn from the noun and verb phrases together"
  why      = "\"a random sub-tree\" is one phrase, whose kind NP+VP widens"
  evidence = "paser.md sections 3.1.1 and 4.5.3"
  tables   = ["Table 5"]
  profiles = ["paper"]
}

deviation "sup_pooling" {
  what     = "the supervised stage's sentence representation (a reading)"
  paper    = "not stated for the supervised stage: the paper's [CLS] is \"directly using the [CLS] token\" and is used \"if not specified\"; SimCSE, whose contrastive framework the stage combines with PaSeR, trains its supervised models with an MLP over [CLS]"
  ours     = "the raw [CLS] (pooling = cls_before_pooler) in training and evaluation, as in the unsupervised stage; no MLP or pooler"
  why      = "the paper names no MLP or pooler anywhere"
  evidence = "paser.md sections 3.2.1 and 4.2, Appendix B"
  tables   = ["Table 2", "Table 3"]
  profiles = ["paper"]
}

deviation "np_vp_phrases" {
  what   = "Table 5's noun and verb phrases"
  paper  = "phrases from NLTK's parser"
  ours   = "phrases from a part-of-speech tagger and chunker trained here on the Brown Corpus"
  why    = "no trained parser is in the data directory"
  tables = ["Table 5"]
}

# The mini and ci profiles' own: what they keep that the paper profile's
# readings above changed, and their scale.

deviation "recorded_top_k" {
  what     = "the number of masked RAKE phrases"
  paper    = "not stated; the default configuration printed in Tables 4, 8 and 9 is Table 5's top-5 row, which the paper profile masks"
  ours     = "RAKE's top 3 in both masking stages"
  why      = "the profiles' results were recorded with top 3; another top_k re-runs every stage after the masks"
  tables   = [for t in local.tables : t if t != "Table 5"] # its RAKE rows set top_k
  profiles = ["mini", "ci"]
}

deviation "recorded_np_vp" {
  what     = "which chunks Table 5's NP, VP and NP+VP rows mask"
  paper    = "a random sub-tree of the parse: one phrase a sentence (section 3.1.1), as the paper profile masks"
  ours     = "every noun (verb; noun and verb) chunk of the sentence"
  why      = "as recorded; one random chunk re-runs the three rows"
  tables   = ["Table 5"]
  profiles = ["mini", "ci"]
}

deviation "pooling" {
  what     = "the sentence representation"
  paper    = "[CLS], \"directly using the [CLS] token\" (section 3.2.1), no pooler"
  ours     = "mini: mean pooling in the unsupervised stage, [CLS] through a fresh pooler (dense + tanh) in the supervised one, the raw [CLS] in Table 9's row; ci: [CLS] through the ci BERT's pooler in both stages and Table 9's row"
  why      = "mini: chosen on STS-B dev, the mini BERT's [CLS] being trained by nothing (docs/papers/paser.md); ci: as recorded"
  tables   = local.tables
  profiles = ["mini", "ci"]
}

deviation "signal_n" {
  what     = "n, the weight of |Es * Es'| in the decoding signal"
  paper    = "n = 10 (Table 8's default configuration)"
  ours     = "n = 1"
  why      = "with n = 10 STS-B dev fell from the first evaluation at every setting tried; with n = 1 it rose"
  tables   = [for t in local.tables : t if t != "Table 8"] # its rows set n
  profiles = ["mini"]
}

deviation "scale" {
  what     = "the encoder, the decoder and the training length"
  paper    = "BERT-base, a 6-layer decoder, 5 epochs (Figure 4) at lr 3e-5 (section 4.2); the supervised stage from that checkpoint"
  ours     = "pretrained.hcl's mini BERTs (its deviations follow); mini: 100 unsupervised updates at lr 3e-5 and 150 supervised at lr 1e-4; ci: a 2-layer decoder, 30 and 20 updates at lr 1e-4"
  why      = "a CPU runs mini in minutes and ci within a CI budget; mini's counts are where STS-B dev peaked"
  tables   = local.tables
  profiles = ["mini", "ci"]
}

deviation "stand_in_data" {
  what     = "the supervised stage's NLI and Table 3's reranking set"
  paper    = "SimCSE's 275,601 SNLI+MNLI training triplets; AskUbuntu's test set"
  ours     = "the data directory's SNLI/MNLI dev and test triplets; SemEval-2016 CQA's dev set, its cells without AskUbuntu's paper values"
  why      = "neither is in the data directory; the paper profile reads both by -var"
  tables   = ["Table 2", "Table 3"]
  profiles = ["mini", "ci"]
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

# STS-B dev selects checkpoints; Table 10 reads its test split.
stage "stsb" {
  for_each = ["dev", "test"]
  uses     = "data.sts"
  tasks    = ["stsb"]
  split    = each.key
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

# RAKE's top 5 (default_top_k); Table 5's NP/VP rows mask one random chunk.
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
  synonym_replacement = 0.1 # Table 4's + SR; no deletion or swap
  seed                = var.seed
}

stage "train" {
  uses            = "train.paser"
  data            = stage.eda.pairs
  dev             = stage.stsb["dev"].pairs
  hf_checkpoint   = var.bert
  params          = local.training
  from_scratch    = false
  decoder_layers  = 6
  m               = 10
  n               = 10
  mlm             = true
  mlm_probability = 0.15
  epochs          = 5
  seed            = var.seed
}

# ---- supervised PaSeR: SimCSE's loss + the generative loss on NLI ----------

stage "nli_sentences" {
  uses     = "data.triplet_sentences"
  triplets = stage.nli.triplets
}

# The NLI sentences masked and augmented as the unsupervised corpus is.
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
  uses        = "train.paser_sup"
  triplets    = stage.nli.triplets
  masked      = stage.nli_eda.pairs
  init        = stage.train.model
  dev         = stage.stsb["dev"].pairs
  params      = local.training
  alpha       = 1.0
  temperature = 0.05
  epochs      = 3
  seed        = var.seed
}

# ---- evaluation of both models ----------------------------------------------

stage "eval" {
  for_each = { unsup = stage.train, sup = stage.train_sup }
  uses     = "evaluate.sts"
  encoder  = each.value.model
  data     = stage.sts.pairs
}

stage "reranking" {
  for_each = { unsup = stage.train, sup = stage.train_sup }
  uses     = "evaluate.rerank"
  encoder  = each.value.model
  data     = stage.rerank.queries
}

stage "density" {
  uses    = "evaluate.cosine_density"
  encoder = stage.train.model
  data    = stage.stsb["test"].pairs
}

# ---- Tables 1, 2, 3 and 10 --------------------------------------------------

table "Tables 1 and 2" {
  columns   = local.sts
  tolerance = 1.0
  row "unsup" {
    title = "PaSeR-BERT-base (unsup, Table 1)"
    stage = stage.eval["unsup"]
    paper = [70.21, 83.88, 73.06, 83.87, 77.60, 79.19, 65.31, 76.16]
  }
  row "sup" {
    title = "PaSeR-BERT-base (sup, Table 2)"
    stage = stage.eval["sup"]
    paper = [78.40, 85.80, 80.79, 86.36, 82.95, 83.67, 80.31, 82.61]
  }
}

# AskUbuntu by -var; no paper value on the mini and ci profiles' CQA stand-in.
table "Table 3" {
  columns   = { "CQA MAP (AskUbuntu)" = "map", "CQA MRR@10 (AskUbuntu)" = "mrr10" }
  tolerance = 1.0
  row "rerank_unsup" {
    title = "PaSeR-BERT-base (unsup, Table 3)"
    stage = stage.reranking["unsup"]
    paper = var.askubuntu != "" ? [50.51, 64.56] : null
  }
  row "rerank_sup" {
    title = "PaSeR-BERT-base (sup, Table 3)"
    stage = stage.reranking["sup"]
    paper = var.askubuntu != "" ? [52.28, 67.31] : null
  }
}

# Appendix C, Table 10: mean cosine per STS-B similarity level (PaSeR column).
table "Table 10" {
  columns   = { for level in ["0-1", "1-2", "2-3", "3-4", "4-5"] : level => ["levels", level, "mean"] }
  tolerance = 0.05
  row "density" {
    title = "PaSeR mean cosine per STS-B level (Table 10)"
    stage = stage.density
    paper = [0.55, 0.74, 0.81, 0.86, 0.92]
  }
}

table "geometry" {
  columns         = ["alignment", "uniformity"]
  lower_is_better = true
  row "geometry" {
    title = "PaSeR-BERT-base (unsup) on STS-B"
    stage = stage.eval["unsup"]
  }
}

# ---- ablations (unsupervised; columns as the paper prints them) --------------

ablation "augmentation" {
  title   = "Table 4: data augmentation"
  report  = local.ablation_report
  columns = local.ablation_columns
  variant "eda" {
    for_each = { # synonym replacement, random deletion, random swap
      "no aug"    = { eda = [0, 0, 0], paper = [73.8, 74.5, 62.5] }
      "+ RS"      = { eda = [0, 0, 0.1], paper = [74.2, 75.0, 63.5] }
      "+ RD"      = { eda = [0, 0.1, 0], paper = [74.2, 75.5, 63.8] }
      "+ SR"      = { eda = [0.1, 0, 0], paper = [77.7, 79.3, 65.4] }
      "+ SR + RD" = { eda = [0.1, 0.1, 0], paper = [77.2, 77.5, 64.5] }
      "+ SR + RS" = { eda = [0.1, 0, 0.1], paper = [77.3, 77.6, 63.1] }
    }
    set   = { stage.eda.synonym_replacement = each.value.eda[0], stage.eda.random_deletion = each.value.eda[1], stage.eda.random_swap = each.value.eda[2] }
    paper = each.value.paper
  }
  min_agreement = 0.65 # the mini profile's regression gate (docs/papers/paser.md)
}

ablation "phrases" {
  title   = "Table 5: phrases to mask (NP/VP from a Brown-trained tagger and chunker, not NLTK's parser)"
  report  = local.ablation_report
  columns = local.ablation_columns
  variant "chunks" {
    for_each = {
      "NP only" = { method = "np", paper = [68.5, 68.2, 62.0] }
      "VP only" = { method = "vp", paper = [63.8, 64.1, 58.3] }
      "NP+VP"   = { method = "np+vp", paper = [69.5, 70.4, 64.3] }
    }
    set   = { stage.mask.method = each.value.method }
    paper = each.value.paper
  }
  variant "rake" {
    for_each = {
      "RAKE (top1)" = { top_k = 1, paper = [73.5, 73.9, 62.4] }
      "RAKE (top2)" = { top_k = 2, paper = [76.8, 77.6, 63.6] }
      "RAKE (top3)" = { top_k = 3, paper = [77.8, 79.4, 64.4] }
      "RAKE (top4)" = { top_k = 4, paper = [77.6, 79.3, 64.6] }
      "RAKE (top5)" = { top_k = 5, paper = [77.7, 79.3, 65.4] }
    }
    set   = { stage.mask.method = "rake", stage.mask.top_k = each.value.top_k }
    paper = each.value.paper
  }
  min_agreement = 0.60 # the mini profile's regression gate (docs/papers/paser.md)
}

ablation "signal" {
  title   = "Table 8 (Appendix A): m and n of the decoding signal"
  report  = local.ablation_report
  columns = local.ablation_columns
  variant "m, n" {
    for_each = {
      "m = 0.1, n = 1.0" = { m = 0.1, n = 1.0, paper = [77.2, 78.5, 64.6] }
      "m = 1.0, n = 1.0" = { m = 1.0, n = 1.0, paper = [77.6, 78.7, 64.8] }
      "m = 10, n = 1.0"  = { m = 10, n = 1.0, paper = [77.7, 79.0, 65.1] }
      "m = 10, n = 0.1"  = { m = 10, n = 0.1, paper = [77.6, 79.0, 65.1] }
      "m = 10, n = 10"   = { m = 10, n = 10, paper = [77.7, 79.3, 65.4] }
    }
    set   = { stage.train.m = each.value.m, stage.train.n = each.value.n }
    paper = each.value.paper
  }
}

ablation "pooling" {
  title   = "Table 9 (Appendix B): pooling"
  report  = local.ablation_report
  columns = local.ablation_columns
  variant "pooling" {
    for_each = {
      "Top1 avg."       = { pooling = "mean", paper = [76.2, 78.3, 65.7] }
      "Top2 avg."       = { pooling = "top2_avg", paper = [75.6, 78.0, 66.1] }
      "First-last avg." = { pooling = "first_last_avg", paper = [76.2, 78.4, 65.8] }
      "[CLS]"           = { pooling = var.cls_pooling, paper = [77.7, 79.3, 65.4] }
    }
    set   = { stage.train.pooling = each.value.pooling }
    paper = each.value.paper
  }
}

ablation "decoder_layers" {
  title   = "Figure 4: layers of the generative decoder"
  vary    = { stage.train.decoder_layers = [1, 2, 3, 4, 5, 6, 7, 8] }
  report  = [stage.eval["unsup"].metrics.avg, stage.eval["unsup"].metrics.stsb]
  columns = ["Avg (7 STS)", "STS-B"]
  figure = {
    file    = "figure4.png"
    title   = "PaSeR: decoder layers (Figure 4)"
    x_label = "decoder layers"
    y_label = "avg. Spearman of the 7 STS tasks"
  }
}

# ---- mini: pretrained.hcl's bert_4 (deviations above) -----------------------
profile "mini" {
  stage "mask" { params = { top_k = 3, one_chunk = false, draw_seed = 0 } }
  stage "nli_mask" { top_k = 3 }
  stage "nli" { source = "nli" }
  stage "rerank" { params = { source = "semeval2016_cqa", split = "dev" } }
  stage "train" {
    init       = module.pretrained.bert_4.model
    pooling    = "mean"
    n          = 1
    max_steps  = 100
    warmup     = 10
    eval_every = 25
  }
  stage "train_sup" {
    pooling       = "cls"
    learning_rate = 1e-4
    max_steps     = 150
    eval_every    = 50
  }
}

# ---- ci: mini on pretrained.hcl's ci BERT, in minutes ------------------------
profile "ci" {
  extends   = "mini"
  variables = { cls_pooling = "cls" }
  stage "train" {
    init           = module.pretrained.bert.model
    pooling        = var.cls_pooling
    n              = 10
    decoder_layers = 2
    learning_rate  = 1e-4
    max_steps      = 30
    warmup         = 3
    eval_every     = 15
  }
  stage "train_sup" {
    decoder_layers = 2
    max_steps      = 20
    eval_every     = 10
  }
}
