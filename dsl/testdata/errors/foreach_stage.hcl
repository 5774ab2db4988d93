experiment "x" {
}

locals {
  keys = ["a", "b"]
}

stage "corpus" {
  uses = "data.sentences"
  path = "x"
}

stage "number" {
  for_each = 3 # ERROR: for_each takes a list or set of strings
  uses     = "data.sentences"
  path     = "x"
}

stage "null" {
  for_each = null # ERROR: got null.
  uses     = "data.sentences"
  path     = "x"
}

stage "not_string" {
  for_each = ["a", 1] # ERROR: Element 1 of for_each is number: the elements of a list are the instance keys
  uses     = "data.sentences"
  path     = "x"
}

stage "null_key" {
  for_each = ["a", null] # ERROR: Element 1 of for_each is null
  uses     = "data.sentences"
  path     = "x"
}

stage "dup_list" {
  for_each = ["a", "b", "a"] # ERROR: Duplicate for_each key; for_each lists "a" twice (elements 0 and 2)
  uses     = "data.sentences"
  path     = "x"
}

stage "dup_map" {
  for_each = { a = 1, a = 2 } # ERROR: for_each sets key "a" twice.
  uses     = "data.sentences"
  path     = "x"
}

stage "empty_key" {
  for_each = { "" = 1 } # ERROR: it cannot be empty
  uses     = "data.sentences"
  path     = "x"
}

stage "from_output" {
  for_each = stage.corpus # ERROR: for_each cannot refer to stage outputs: the instances must be known when the file loads, and stage.corpus is written by a run
  uses     = "data.sentences"
  path     = "x"
}

stage "from_instance_output" {
  for_each = stage.mask.pairs # ERROR: and stage.mask.pairs is written by a run
  uses     = "data.sentences"
  path     = "x"
}

stage "keys_from_stage" {
  for_each = { for k, v in stage.corpus : k => v } # ERROR: and stage.corpus is written by a run
  uses     = "data.sentences"
  path     = "x"
}

stage "listed_repeat_stage" {
  for_each = { a = stage.inner } # ERROR: and stage.inner is written by a run
  uses     = "data.sentences"
  path     = "x"
}

stage "listed_param" {
  for_each = { a = stage.corpus }
  uses     = "text.mask"
  input    = each.value.sentences
  mode     = each.value # ERROR: each.value holds stage outputs (artifacts
}

stage "from_undeclared" {
  for_each = stage.nope # ERROR: There is no stage "nope".
  uses     = "data.sentences"
  path     = "x"
}

stage "from_repeat" {
  for_each = repeat.r.last.model # ERROR: for_each cannot refer to stage outputs
  uses     = "data.sentences"
  path     = "x"
}

stage "listed_no_repeat" {
  for_each = { a = repeat.nope.last.model } # ERROR: There is no repeat block "nope".
  uses     = "data.sentences"
  path     = "x"
}

stage "listed_repeat_no_value" {
  for_each = { a = repeat.r.last } # ERROR: Name a value of repeat "r": model.
  uses     = "data.sentences"
  path     = "x"
}

stage "listed_repeat_round" {
  for_each = { a = repeat.r.round[2].model } # ERROR: Repeat "r" has 1 rounds; round[2] does not exist.
  uses     = "data.sentences"
  path     = "x"
}

stage "keys_from_repeat" {
  for_each = { for k, v in { a = repeat.r.last.model } : v => k } # ERROR: string required, but have stage output
  uses     = "data.sentences"
  path     = "x"
}

stage "each_in_for_each" {
  for_each = [each.key] # ERROR: each outside for_each
  uses     = "data.sentences"
  path     = "x"
}

stage "mask" {
  for_each = local.keys
  uses     = "text.mask"
  input    = stage.corpus.sentences
  top_k    = each.value # ERROR: In stage mask["a"]: Parameter "top_k" of text.mask must be number
}

stage "param_from_output" {
  for_each = stage.mask
  uses     = "text.mask"
  input    = stage.corpus.sentences
  mode     = each.value # ERROR: each.value holds stage outputs (artifacts
}

stage "input_not_output" {
  for_each = { a = "x" }
  uses     = "text.mask"
  input    = each.value # ERROR: each.value is a string, not a stage output
}

stage "input_no_port" {
  for_each = stage.mask
  uses     = "train.encoder"
  data     = each.value.model # ERROR: each.value has no element "model"
}

stage "kind" {
  for_each = stage.mask
  uses     = "text.mask"
  input    = each.value.pairs # ERROR: Artifact kind mismatch
}

repeat "r" {
  rounds = 1
  next   = { model = stage.inner.model }
  stage "inner" {
    for_each = ["a"] # ERROR: for_each inside a repeat block
    uses     = "init.random"
  }
}

expect "bad_value" {
  for_each = stage.mask
  value    = stage.eval.metrics.avg # ERROR: There is no stage "eval"
  paper    = each.value # ERROR: each.value holds stage outputs
}
