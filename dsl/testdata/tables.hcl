# Paper tables declared compactly: for_each expect rows, optional paper
# values, and ablations with the paper's numbers, column labels and a figure.
experiment "tables" {
  title = "Table rows"
}

variable "tol" {
  default = 1.0
}

locals {
  # Column label -> metric key, in the paper's column order.
  metric = { STS12 = "sts12", STS13 = "sts13", "STS-B" = "stsb", Avg = "avg" }
  unsup  = { STS12 = 68.40, STS13 = 82.41, "STS-B" = 76.85, Avg = 76.25 }
}

stage "corpus" {
  uses = "data.sentences"
  path = "wiki.txt"
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
  uses  = "evaluate.sts"
  model = stage.train.model
}

repeat "idc" {
  rounds = 3
  start  = { model = stage.train.model }
  stage "r_eval" {
    uses  = "evaluate.sts"
    model = previous.model
  }
  next = { model = previous.model, metrics = stage.r_eval.metrics }
}

# Keys written out of alphabetical order: the elements keep this order.
expect "simcse_unsup" {
  for_each  = { STS13 = 82.41, STS12 = 68.40, Avg = 76.25 }
  row       = "SimCSE-BERT-base (unsup)"
  column    = each.key
  value     = stage.eval.metrics[lower(each.key)]
  paper     = each.value
  tolerance = var.tol
}

# Through locals: order from the local's object constructor, keys through
# a lookup table, then a fixed key after the computed one.
expect "ours" {
  for_each = local.unsup
  row      = "ours"
  column   = each.key
  value    = stage.eval.metrics[local.metric[each.key]].spearman
}

# Object elements, a null paper value, and a computed round index.
expect "iter" {
  for_each = {
    "Iter-1" = { round = 1, paper = 71.5 }
    "Iter-3" = { round = 3, paper = null }
  }
  column = each.key
  value  = repeat.idc.round[each.value.round].metrics["avg"]
  paper  = each.value.paper
}

# A map built by a for expression: no source order, so sorted keys.
expect "geometry" {
  for_each        = { for k in ["uniformity", "alignment"] : k => k }
  value           = stage.eval.metrics[each.value]
  lower_is_better = true
}

expect "tfidf" {
  value = stage.eval.metrics.stsb
}

ablation "top_k" {
  vary    = { "stage.mask.top_k" = [1, 2, 3] }
  report  = [stage.eval.metrics.sts12_16, stage.eval.metrics.stsb, stage.eval.metrics.sickr]
  columns = ["STS12-16", "STS-B", "SICK-R"]
  paper = {
    "mask.top_k=1" = [77.7, 79.3, 65.4]
    "2"            = [78.0, null, 66.0]
    3              = [78.2, 80.1, 66.3]
  }
  figure = { file = "figure4.png", title = "RAKE top-k", x_label = "top k" }
}

ablation "eda" {
  variant "none" {
    set = {}
  }
  variant "SR" {
    set = { "stage.eda.synonym_replacement" = 0.1 }
  }
  report = [stage.eval.metrics.avg]
  paper  = { none = [73.8], "SR" = [77.7] }
}

ablation "grid" {
  vary = {
    "stage.mask.ratio"   = [0.10, 0.5]
    "var.tol"            = [2]
  }
  variant "a" {
    set = { "stage.mask.mode" = "np" }
  }
  report = [stage.eval.metrics.avg, repeat.idc.round[2].metrics.avg]
  paper  = { "mask.ratio=0.1, var.tol=2, a" = [1, 2] }
}

# A row only the paper reports: no value, the paper's numbers and why.
expect "dino" {
  for_each = { STS12 = 70.27, Avg = 75.20 }
  row      = "DINO (paper's value)"
  column   = each.key
  paper    = each.value
  pending  = "DINO makes scored pairs, not triplets"
}
