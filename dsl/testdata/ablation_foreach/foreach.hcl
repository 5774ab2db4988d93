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

locals {
  columns = ["STS-B", "avg"]
  pairs   = { mask = stage.mask.pairs }
  report  = [stage.eval["a"].metrics.stsb, stage.eval["a"].metrics.avg]
  eda = {
    "no aug" = { sr = 0, rd = 0, paper = [1, 2, null] }
    "+ SR"   = { sr = 0.1, rd = 0, paper = [3, 4, 5] }
    "+ RD"   = { sr = 0, rd = 0.1, paper = [6, 7, 8] }
  }
}

ablation "phrases" {
  report  = local.report
  columns = local.columns
  variant "NP only" { set = { stage.mask.mode = "np" } }
  variant "rake" {
    for_each = { for k in [1, 2, 3] : "RAKE (top${k})" => k }
    set      = { stage.mask.mode = "rake", stage.mask.top_k = each.value }
  }
  variant "last" {
    set   = { stage.mask.mode = "vp" }
    paper = [5, 6]
  }
  paper = { "NP only" = [1, 2], "RAKE (top2)" = [3, 4] }
}

ablation "eda" {
  report = concat(local.report, [stage.eval["b"].metrics.sickr])
  variant "eda" {
    for_each = local.eda
    set      = { stage.eda.synonym_replacement = each.value.sr, stage.eda.random_deletion = each.value.rd, stage.eda.random_swap = 0 }
    paper    = each.value.paper
  }
}

ablation "pooling" {
  report = [local.report[0]]
  variant "pool" {
    for_each = { "Top1 avg." = "mean", "[CLS]" = var.pooling }
    set      = { stage.train.pooling = each.value, stage.eval["a"].tasks = [each.key] }
  }
}

ablation "grid" {
  vary   = { stage.train.layers = [2, 4], stage.other.data = [stage.eda.pairs, local.pairs.mask] }
  report = local.report
  variant "k" {
    for_each = toset(["1", "2"])
    set      = { stage.mask.top_k = tonumber(each.key) }
  }
}

ablation "inputs" {
  report = local.report
  variant "inputs" {
    for_each = toset(["x", "y"])
    set      = { stage.other.learning_rate = each.key == "x" ? 1e-4 : 2e-4, stage.other.data = local.pairs.mask }
  }
}
