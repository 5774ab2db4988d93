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
  keys = ["a", "a"]
}

ablation "v" {
  report = [stage.eval["a"].metrics.avg]
  variant "x" { set = { stage.mask.top_k = 1 } }
  variant "numbers" {
    for_each = [1, 2] # ERROR: Element 0 of for_each is number
    set      = { stage.mask.top_k = each.value }
  }
  variant "twice" {
    for_each = local.keys # ERROR: for_each lists "a" twice
    set      = { stage.mask.mode = each.key }
  }
  variant "taken" {
    for_each = { x = 2, y = 3 } # ERROR: Ablation "v" has two variants named "x"
    set      = { stage.mask.top_k = each.value }
  }
  variant "y" { set = { stage.mask.top_k = 4 } } # ERROR: Ablation "v" has two variants named "y"
  variant "plain" {
    set = { stage.mask.top_k = each.value } # ERROR: variant "plain" has none
  }
  variant "input" {
    for_each = { z = "z" }
    set      = { stage.train.data = each.value, stage.mask.mode = each.key } # ERROR: stage.train.data is an input
  }
  variant "outputs" {
    for_each = stage.eval # ERROR: holds stage outputs
    set      = { stage.mask.top_k = 1 }
  }
  variant "unknown" {
    for_each = { w = 1 }
    set      = { stage.mask.top_k = each.nope } # ERROR: Unsupported attribute
  }
  variant "bad value" {
    for_each = { u = "three" }
    set      = { stage.mask.top_k = each.value } # ERROR: Parameter "top_k" of text.mask must be number
  }
  variant "papers" {
    for_each = { p1 = [1], p2 = [1, 2], p3 = "many" }
    set      = { stage.mask.top_k = 2 }
    paper    = each.value # ERROR: The paper values of variant "p2" are 2 but report has 1 columns # ERROR: The paper values of variant "p3" must be a list of numbers
  }
  variant "given twice" {
    set   = { stage.mask.top_k = 3 }
    paper = [1] # ERROR: Variant "given twice" is given paper values here and at
  }
  paper = { "given twice" = [2] }
}

ablation "other" {
  report = [stage.eval["a"].metrics.avg]
  variant "z" {
    set   = { stage.mask.mode = each.key } # ERROR: each outside for_each
    paper = [each.value]                   # ERROR: variant "z" has none); write the paper values
  }
}
