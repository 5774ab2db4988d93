experiment "x" {
  title = "variants with for_each"
}

variable "pooling" { default = "cls" }

stage "corpus" {
  uses = "data.sentences"
  path = "x"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}

stage "eda" {
  uses  = "text.eda"
  input = stage.corpus.sentences
}

stage "train" {
  uses = "train.encoder"
  data = stage.mask.pairs
}

stage "eval" {
  for_each = { a = "stsb", b = "sickr" }
  uses     = "evaluate.sts"
  model    = stage.train.model
  tasks    = [each.value]
}

stage "other" {
  uses = "train.encoder"
  data = stage.eda.pairs
}

profile "mini" {
  variables = { pooling = "mean" }
}

ablation "phrases" {
  report  = [stage.eval["a"].metrics.stsb, stage.eval["a"].metrics.avg]
  columns = ["STS-B", "avg"]
  variant "NP only" { set = { stage.mask.mode = "np" } }
  variant "RAKE (top1)" { set = { stage.mask.mode = "rake", stage.mask.top_k = 1 } }
  variant "RAKE (top2)" { set = { stage.mask.mode = "rake", stage.mask.top_k = 2 } }
  variant "RAKE (top3)" { set = { stage.mask.mode = "rake", stage.mask.top_k = 3 } }
  variant "last" { set = { stage.mask.mode = "vp" } }
  paper = { "NP only" = [1, 2], "RAKE (top2)" = [3, 4], "last" = [5, 6] }
}

ablation "eda" {
  report = [stage.eval["a"].metrics.stsb, stage.eval["a"].metrics.avg, stage.eval["b"].metrics.sickr]
  variant "no aug" { set = { stage.eda.synonym_replacement = 0, stage.eda.random_deletion = 0, stage.eda.random_swap = 0 } }
  variant "+ SR" { set = { stage.eda.synonym_replacement = 0.1, stage.eda.random_deletion = 0, stage.eda.random_swap = 0 } }
  variant "+ RD" { set = { stage.eda.synonym_replacement = 0, stage.eda.random_deletion = 0.1, stage.eda.random_swap = 0 } }
  paper = { "no aug" = [1, 2, null], "+ SR" = [3, 4, 5], "+ RD" = [6, 7, 8] }
}

ablation "pooling" {
  report = [stage.eval["a"].metrics.stsb]
  variant "Top1 avg." { set = { stage.train.pooling = "mean", stage.eval["a"].tasks = ["Top1 avg."] } }
  variant "[CLS]" { set = { stage.train.pooling = var.pooling, stage.eval["a"].tasks = ["[CLS]"] } }
}

ablation "grid" {
  vary   = { stage.train.layers = [2, 4], stage.other.data = [stage.eda.pairs, stage.mask.pairs] }
  report = [stage.eval["a"].metrics.stsb, stage.eval["a"].metrics.avg]
  variant "1" { set = { stage.mask.top_k = 1 } }
  variant "2" { set = { stage.mask.top_k = 2 } }
}

ablation "inputs" {
  report = [stage.eval["a"].metrics.stsb, stage.eval["a"].metrics.avg]
  variant "x" { set = { stage.other.learning_rate = 1e-4, stage.other.data = stage.mask.pairs } }
  variant "y" { set = { stage.other.learning_rate = 2e-4, stage.other.data = stage.mask.pairs } }
}
