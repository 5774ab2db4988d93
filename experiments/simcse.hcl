experiment "simcse" {
  title = "SimCSE: Simple Contrastive Learning of Sentence Embeddings"
  table = "STS test, Spearman x 100 (PaSeR Tables 1-2, SynCSE Table 2)"
  paper = "Gao et al. 2021; rows as printed in paser.md and syncse.md"
}

variable "seed" { default = 42 }

variable "bert" {
  description = "local Hugging Face bert-base-uncased directory (config.json, model.safetensors, vocab.txt)"
  default     = ""
}

variable "roberta" {
  description = "local Hugging Face roberta-base directory (config.json, model.safetensors, vocab.json, merges.txt)"
  default     = ""
}

variable "wiki1m" {
  description = "SimCSE's unsupervised sentences: a local wiki1m_for_simcse.txt (1,000,000 lines, one sentence each)"
  default     = ""
}

variable "simcse_nli" {
  description = "SimCSE's NLI training set: a local nli_for_simcse.csv (sent0,sent1,hard_neg; 275,601 SNLI+MNLI train triplets)"
  default     = ""
}

variable "released_unsup_bert" {
  description = "the authors' released unsup-SimCSE-BERT: a local princeton-nlp/unsup-simcse-bert-base-uncased directory (adds its row)"
  default     = ""
}

variable "released_unsup_roberta" {
  description = "the authors' released unsup-SimCSE-RoBERTa: a local princeton-nlp/unsup-simcse-roberta-base directory (adds its row)"
  default     = ""
}

variable "released_sup_bert" {
  description = "the authors' released sup-SimCSE-BERT: a local princeton-nlp/sup-simcse-bert-base-uncased directory (adds its row)"
  default     = ""
}

variable "released_sup_roberta" {
  description = "the authors' released sup-SimCSE-RoBERTa: a local princeton-nlp/sup-simcse-roberta-base directory (adds its row)"
  default     = ""
}

# The mini and ci profiles' pretrained BERT and RoBERTa.
module "pretrained" {
  source = "./pretrained.hcl"
}

locals {
  # table column -> key of evaluate.sts's metrics.json
  sts = {
    STS12   = "sts12", STS13 = "sts13", STS14 = "sts14", STS15 = "sts15", STS16 = "sts16",
    "STS-B" = "stsb", "SICK-R" = "sickr", Avg = "avg"
  }

  # The papers' rows (the table each is printed in), ours and, by -var, the
  # authors' released model's (read with pooling), with the same paper values.
  models = {
    # PaSeR Table 1.
    unsup_bert = {
      title    = "unsup SimCSE-BERT-base"
      released = var.released_unsup_bert
      pooling  = "cls_before_pooler"
      paper    = [68.40, 82.41, 74.38, 80.91, 78.56, 76.85, 72.23, 76.25]
    }
    # SynCSE Table 2 (marked there as reported by SimCSE).
    unsup_roberta = {
      title    = "unsup SimCSE-RoBERTa-base"
      released = var.released_unsup_roberta
      pooling  = "cls_before_pooler"
      paper    = [70.16, 81.77, 73.24, 81.36, 80.65, 80.22, 68.56, 76.57]
    }
    # PaSeR Table 2.
    sup_bert = {
      title    = "sup SimCSE-BERT-base"
      released = var.released_sup_bert
      pooling  = "cls"
      paper    = [75.30, 84.67, 80.19, 85.40, 80.82, 84.25, 80.39, 81.57]
    }
    # SynCSE Table 2 and GenSE Table 2.
    sup_roberta = {
      title    = "sup SimCSE-RoBERTa-base"
      released = var.released_sup_roberta
      pooling  = "cls"
      paper    = [76.53, 85.21, 80.95, 86.03, 82.57, 85.83, 80.50, 82.52]
    }
  }

  # The paper's unsupervised recipe (dropout views, one epoch; learning rate
  # and batch per encoder) ...
  unsup = {
    from_scratch   = false
    max_length     = 32
    temperature    = 0.05
    epochs         = 1
    eval_every     = 250
    pooling        = "cls"
    mlp_only_train = true
  }
  # ... and its supervised recipe (NLI, the contradiction as hard negative).
  sup = {
    from_scratch   = false
    learning_rate  = 5e-5
    batch_size     = 512
    max_length     = 32
    temperature    = 0.05
    hard_negatives = true
    epochs         = 3
    eval_every     = 250
    pooling        = "cls"
  }

  # The mini profile's deltas for both encoders (its comment says why) ...
  mini_unsup = {
    pooling        = "mean"
    mlp_only_train = false
    learning_rate  = 1e-4
    batch_size     = 64
    max_steps      = 600
    eval_every     = 100
    dropout        = 0.3
    temperature    = 0.1
  }
  mini_sup = { pooling = "mean", learning_rate = 1e-4, batch_size = 64, eval_every = 69 }
  # ... and the ci profile's.
  ci_unsup = { learning_rate = 1e-4, batch_size = 64, max_sentences = 3840, eval_every = 30 }
  ci_sup   = { learning_rate = 1e-4, batch_size = 64, max_triplets = 3840, epochs = 1, eval_every = 30 }
}

# ---- data -------------------------------------------------------------------

stage "wiki" {
  uses   = "data.sentences"
  source = "wiki1m"
  path   = var.wiki1m
}

stage "nli" {
  uses   = "data.nli"
  source = "simcse_nli"
  path   = var.simcse_nli
}

stage "stsb_dev" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "dev"
}

stage "sts" {
  uses  = "data.sts"
  tasks = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"]
  split = "test"
}

# ---- training and evaluation (paper settings) -------------------------------

# Unsupervised: dropout views of Wikipedia sentences.
stage "unsup" {
  for_each = {
    bert    = { checkpoint = var.bert, learning_rate = 3e-5, batch_size = 64 }
    roberta = { checkpoint = var.roberta, learning_rate = 1e-5, batch_size = 512 }
  }
  uses          = "train.simcse_unsup"
  data          = stage.wiki.sentences
  dev           = stage.stsb_dev.pairs
  hf_checkpoint = each.value.checkpoint
  params        = local.unsup
  learning_rate = each.value.learning_rate
  batch_size    = each.value.batch_size
  seed          = var.seed
}

# Supervised: NLI triplets, the contradiction as hard negative.
stage "sup" {
  for_each      = { bert = var.bert, roberta = var.roberta }
  uses          = "train.simcse_sup"
  data          = stage.nli.triplets
  dev           = stage.stsb_dev.pairs
  hf_checkpoint = each.value
  params        = local.sup
  seed          = var.seed
}

stage "eval" {
  for_each = {
    unsup_bert = stage.unsup["bert"], unsup_roberta = stage.unsup["roberta"],
    sup_bert   = stage.sup["bert"], sup_roberta = stage.sup["roberta"]
  }
  uses    = "evaluate.sts"
  encoder = each.value.model
  data    = stage.sts.pairs
}

# ---- the authors' released models (paper profile, by -var) --------------------
# Each loaded as it is, pooled as SimCSE evaluates them: the unsupervised
# models' [CLS] before the pooler, the supervised ones' through it.
stage "released" {
  for_each   = { for k, m in local.models : k => m if m.released != "" }
  uses       = "model.hf_encoder"
  checkpoint = each.value.released
  pooling    = each.value.pooling
}

stage "eval_released" {
  for_each = stage.released
  uses     = "evaluate.sts"
  encoder  = each.value.model
  data     = stage.sts.pairs
}

# ---- the papers' rows -------------------------------------------------------

table "STS" {
  columns = local.sts

  row "ours" {
    for_each = local.models
    name     = each.key
    title    = each.value.title
    stage    = stage.eval[each.key]
    paper    = each.value.paper
  }
  row "released" {
    for_each = local.models
    enabled  = each.value.released != ""
    name     = "released_${each.key}"
    title    = "${each.value.title} (released)"
    stage    = stage.eval_released[each.key]
    paper    = each.value.paper
  }
}

# Alignment and uniformity on STS-B test (SimCSE Figure 2; no paper here
# prints them as table values).
table "geometry" {
  columns         = ["alignment", "uniformity"]
  lower_is_better = true

  row "geometry" {
    for_each = ["unsup_bert", "sup_bert"]
    name     = "geometry_${each.key}"
    title    = local.models[each.key].title
    stage    = stage.eval[each.key]
  }
}

# The unsupervised rows read pretrained.hcl's corpus, a stand-in for the
# paper's 1M Wikipedia sentences; the recipe's deltas (local.mini_unsup,
# local.mini_sup) suit a 4-layer, 128-wide model, each selected on STS-B dev.
profile "mini" {
  # The data directory's stand-ins for SimCSE's data: the first 11,914
  # wiki1m lines and the 8,816 dev/test-derived NLI triplets.
  stage "wiki" { source = "wiki" }
  stage "nli" { source = "nli" }
  stage "unsup" {
    data   = module.pretrained.corpus.sentences
    params = local.mini_unsup
  }
  stage "sup" { params = local.mini_sup }
  stage "unsup[\"bert\"]" "sup[\"bert\"]" { init = module.pretrained.bert_4.model }
  stage "unsup[\"roberta\"]" "sup[\"roberta\"]" { init = module.pretrained.roberta.model }
}

# The same pipeline on pretrained.hcl's ci models and the data directory's
# stand-ins, cut to minutes.
profile "ci" {
  stage "wiki" { source = "wiki" }
  stage "nli" { source = "nli" }
  stage "unsup" { params = local.ci_unsup }
  stage "sup" { params = local.ci_sup }
  stage "unsup[\"bert\"]" "sup[\"bert\"]" { init = module.pretrained.bert.model }
  stage "unsup[\"roberta\"]" "sup[\"roberta\"]" { init = module.pretrained.roberta.model }
}

# The temperature of the unsupervised loss, as SimCSE's appendix Table D.1 varies it.
ablation "temperature" {
  title   = "unsup SimCSE-BERT: temperature"
  vary    = { "stage.unsup[\"bert\"].temperature" = [0.01, 0.05, 0.1, 1.0] }
  report  = [stage.eval["unsup_bert"].metrics.stsb, stage.eval["unsup_bert"].metrics.avg]
  columns = ["STS-B", "Avg"]
}
