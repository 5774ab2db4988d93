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

ablation "v" { # ERROR: its variant blocks' for_each give no element
  report = [stage.eval["a"].metrics.avg]
  variant "none" {
    for_each = {}
    set      = { stage.mask.top_k = each.value }
  }
}
