# refs.hcl with every reference written out.
experiment "locals" {
}

stage "corpus" {
  uses = "data.sentences"
  path = "corpus.txt"
}

stage "mask" {
  for_each = ["a", "b"]
  uses     = "text.mask"
  input    = stage.corpus.sentences
}

stage "base" {
  uses = "train.encoder"
  data = stage.mask["a"].pairs
}

stage "other" {
  uses   = "train.encoder"
  data   = stage.mask["b"].pairs
  layers = 6
}

stage "eval" {
  for_each = { base = stage.base.model, other = stage.other.model }
  uses     = "evaluate.sts"
  model    = each.value
}

stage "eval_whole" {
  for_each = { base = stage.base, other = stage.other }
  uses     = "evaluate.sts"
  model    = each.value.model
}

stage "probe" {
  uses  = "evaluate.sts"
  model = stage.other.model
}

stage "probe_key" {
  for_each = ["base"]
  uses     = "evaluate.sts"
  model    = stage.base.model
}

stage "retrain" {
  for_each = stage.mask
  uses     = "train.encoder"
  data     = each.value.pairs
  layers   = 3
}

stage "spread" {
  uses   = "train.encoder"
  data   = stage.mask["a"].pairs
  layers = 2
}

expect "probe" {
  value = stage.probe.metrics.avg
}

expect "eval" {
  value = stage.eval["base"].metrics.avg
}
