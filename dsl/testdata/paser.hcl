# A small PaSeR-shaped pipeline: every language feature the dsl offers.
experiment "paser" {
  title = "Sentence Representation Learning with Generative Objective"
  table = "Table 1: unsupervised STS"
  paper = "paser.md"
  seed  = var.seed
}

variable "seed" {
  default = 42
  type    = number
}

variable "corpus" {
  default     = "wiki1m"
  description = "which sentence file to read"
}

locals {
  base_lr = 3e-5
  lr      = local.base_lr * 1
  path    = "${var.corpus}.txt"
}

stage "corpus" {
  uses  = "data.sentences"
  path  = local.path
}

stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
  top_k = 3
}

stage "eda" {
  uses  = "text.eda"
  input = stage.corpus.sentences
}

stage "train" {
  uses          = "train.encoder"
  data          = stage.mask.pairs
  learning_rate = local.lr
  batch_size    = 64
  tasks         = ["stsb", "sickr"]
}

stage "eval" {
  uses  = "evaluate.sts"
  model = stage.train.model
  seed  = 7
}

expect "stsb" {
  value     = stage.eval.metrics.stsb.spearman
  paper     = 76.25
  tolerance = 1.5
  row       = "PaSeR-BERT-base"
  column    = "STS-B"
}

expect "avg" {
  value   = stage.eval.metrics.avg
  paper   = 76.16
  profile = "mini"
}

profile "mini" {
  variables = { corpus = "mini" }
  stage "train" {
    layers    = 2
    hidden    = 128
    max_steps = 300
  }
}

ablation "top_k" {
  title  = "Table 5: masked phrases"
  vary   = { "stage.mask.top_k" = [1, 2, 3] }
  report = [stage.eval.metrics.stsb, stage.eval.metrics.avg]
}

ablation "eda" {
  title = "Table 4: augmentation"
  variant "none" {
    set = {}
  }
  variant "SR+RD" {
    set = { "stage.eda.synonym_replacement" = 0.1, stage.eda.random_deletion = 0.1 }
  }
  variant "RS" {
    set = { "stage.eda.random_swap" = 0.1 }
  }
  report = [stage.eval.metrics.avg]
}
