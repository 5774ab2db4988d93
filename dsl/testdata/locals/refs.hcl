# Local values that hold stage references (local_refs.go); refs_explicit.hcl
# is the same pipeline with the references written out.
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

locals {
  encoders = { base = stage.base.model, other = stage.other.model }
  models   = { base = stage.base, other = stage.other }
  layers   = length(keys(local.encoders)) + 1
  masked   = stage.mask
  inputs   = { data = stage.mask["a"].pairs }
  scores   = stage.probe.metrics
}

stage "eval" {
  for_each = local.encoders
  uses     = "evaluate.sts"
  model    = each.value
}

stage "eval_whole" {
  for_each = local.models
  uses     = "evaluate.sts"
  model    = each.value.model
}

stage "probe" {
  uses  = "evaluate.sts"
  model = local.encoders.other
}

stage "probe_key" {
  for_each = ["base"]
  uses     = "evaluate.sts"
  model    = local.encoders[each.key]
}

stage "retrain" {
  for_each = local.masked
  uses     = "train.encoder"
  data     = each.value.pairs
  layers   = local.layers
}

stage "spread" {
  uses   = "train.encoder"
  params = [local.inputs, { layers = 2 }]
}

expect "probe" {
  value = local.scores.avg
}

expect "eval" {
  value = stage.eval["base"].metrics.avg
}
