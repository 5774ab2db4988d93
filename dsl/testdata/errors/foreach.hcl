experiment "x" {
}

locals {
  metric = { STS12 = "sts12" }
}

stage "corpus" {
  uses  = "data.sentences"
  path  = "x"
  limit = each.key # ERROR: each.key and each.value are only defined in a block with for_each (a stage or an expect block).
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
  uses  = "evaluate.sts"
  model = stage.train.model
}

expect "list" {
  for_each = ["a", "b"] # ERROR: for_each must be a map or object, such as
  value    = stage.eval.metrics.avg
}

expect "string" {
  for_each = "abc" # ERROR: got string.
  value    = stage.eval.metrics.avg
}

expect "null" {
  for_each = null # ERROR: got null.
  value    = stage.eval.metrics.avg
}

expect "outside" {
  value = stage.eval.metrics[each.key] # ERROR: each outside for_each; each.key and each.value are only defined
  paper = each.value # ERROR: each outside for_each
}

expect "missing_key" {
  for_each = { STS12 = 1, Avg = 2 }
  value    = stage.eval.metrics[local.metric[each.key]] # ERROR: In missing_key[Avg]: The given key does not identify an element
}

expect "null_key" {
  for_each = { a = null }
  value    = stage.eval.metrics[each.value] # ERROR: In null_key[a]: each.value does not resolve to a key: it is null
}

expect "bool_key" {
  for_each = { a = true }
  value    = stage.eval.metrics[each.value] # ERROR: does not resolve to a key: it is bool
}

expect "number_key" {
  for_each = { a = 1 }
  value    = stage.eval.metrics[each.value] # ERROR: Keys after an output are names
}

expect "dynamic_stage" {
  for_each = { eval = 1 }
  value    = stage[each.key].metrics.avg # ERROR: Only the metric keys after stage.NAME.OUTPUT (and N in round[N]) can be computed
}

expect "bad_attr" {
  for_each = { a = 1 }
  value    = stage.eval.metrics[each.name] # ERROR: Write each.key or each.value.
}

expect "dup_key" {
  for_each = { a = 1, a = 2 } # ERROR: for_each sets key "a" twice.
  value    = stage.eval.metrics[each.key]
}

expect "not_ref" {
  for_each = { a = 1 }
  value    = each.value # ERROR: each.value is a number, not a stage output
}

expect "from_stage" {
  for_each = stage.eval.metrics # ERROR: for_each cannot refer to stage outputs
  value    = stage.eval.metrics.avg
}

expect "paper_object" {
  for_each = { a = { paper = 1 } }
  value    = stage.eval.metrics[each.key]
  paper    = each.value # ERROR: In paper_object[a]: paper must be a number.
}

expect "missing_field" {
  for_each = { a = { paper = 1 }, b = { metric = "x" } }
  value    = stage.eval.metrics[each.key]
  paper    = each.value.paper # ERROR: In missing_field[b]: This object does not have an attribute named "paper".
}

expect "computed" {
  value = stage.eval.metrics[upper(1, 2)] # ERROR: Function "upper" expects only 1 argument(s)
}

expect "dup_gen[a]" {
  value = stage.eval.metrics.avg
}

expect "dup_gen" { # ERROR: An expectation named "dup_gen[a]" was already declared
  for_each = { a = 1 }
  value    = stage.eval.metrics[each.key]
}
