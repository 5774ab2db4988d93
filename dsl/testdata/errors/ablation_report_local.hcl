# OPTIONS: ablation=v
experiment "x" {
}

stage "corpus" {
  uses = "data.sentences"
  path = "x"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}

stage "train" {
  uses = "train.encoder"
  data = stage.mask.pairs
}

stage "eval" {
  for_each = toset(["a", "b"])
  uses     = "evaluate.sts"
  model    = stage.train.model
}

locals {
  good    = [stage.eval["a"].metrics.avg, stage.eval["b"].metrics.stsb]
  models  = [stage.train.model]
  whole   = [stage.eval["a"].metrics]
  numbers = [1]
}

ablation "v" {
  report  = local.good
  columns = ["one"] # ERROR: columns has 1 labels but report has 2 columns
  variant "x" { set = { stage.mask.top_k = 1 } }
  paper = { x = [1, 2, 3] } # ERROR: paper["x"] has 3 values but report has 2 columns
}

ablation "models" {
  report = local.models
  vary   = { stage.mask.top_k = [1] }
}

ablation "whole" {
  report = local.whole
  vary   = { stage.mask.top_k = [1] }
}

ablation "numbers" {
  report = local.numbers
  vary   = { stage.mask.top_k = [1] }
}
