experiment "x" {
}

stage "corpus" {
  uses = "data.sentences"
  path = "x"
}

stage "mask" {
  for_each = ["a", "b"]
  uses     = "text.mask"
  input    = stage.corpus.sentences
}

stage "missing" {
  uses = "train.encoder"
  data = stage.mask["c"].pairs # ERROR: Stage "mask" has no instance "c"; its instances: mask["a"], mask["b"].
}

stage "no_key" {
  uses = "train.encoder"
  data = stage.mask.pairs # ERROR: Missing instance key; Stage "mask" has for_each: name one instance, such as stage.mask["a"].OUTPUT; its instances: mask["a"], mask["b"].
}

stage "number_key" {
  uses = "train.encoder"
  data = stage.mask[0].pairs # ERROR: Missing instance key
}

stage "not_for_each" {
  uses = "text.mask"
  input = stage.corpus["a"].sentences # ERROR: Stage "corpus" has no for_each, so it has no instance "a"
}

stage "each_input" {
  uses = "train.encoder"
  data = each.value.pairs # ERROR: each outside for_each; each.key and each.value are only defined in a block with for_each
}

stage "computed_missing" {
  for_each = ["a", "z"]
  uses     = "train.encoder"
  data     = stage.mask[each.key].pairs # ERROR: In stage computed_missing["z"]: Stage "mask" has no instance "z"
}

stage "computed_number" {
  for_each = ["a"]
  uses     = "train.encoder"
  data     = stage.mask[length([each.key])].pairs # ERROR: length([each.key]) is number; an instance of a for_each stage is named by a string key
}

stage "computed_name" {
  for_each = ["mask"]
  uses     = "train.encoder"
  data     = stage[each.key]["a"].pairs # ERROR: Only the key of a for_each stage's instance can be computed
}

stage "computed_output" {
  for_each = ["pairs"]
  uses     = "train.encoder"
  data     = stage.mask["a"][each.key] # ERROR: Only the key of a for_each stage's instance can be computed
}

stage "not_ref" {
  for_each = ["a"]
  uses     = "train.encoder"
  data     = upper(each.key) # ERROR: Invalid reference; In stage not_ref["a"]: An input takes a reference to another stage's output: stage.NAME.OUTPUT
}

# A cycle through instances: p["x"] reads q["x"], which reads p["x"].
stage "p" {
  for_each = ["x", "y"]
  uses     = "train.encoder"
  data     = stage.mask["a"].pairs
  init     = stage.q[each.key].model
}

stage "q" {
  for_each = stage.p
  uses     = "train.encoder"
  data     = stage.mask["a"].pairs
  init     = each.value.model # ERROR: Dependency cycle; The stages depend on each other in a loop: q["x"] -> p["x"] -> q["x"]
}

# for_each loops: u iterates over v's instances and v over u's.
stage "u" {
  for_each = stage.v # ERROR: Circular for_each; The for_each expressions iterate over each other's instances in a loop: u -> v -> u.
  uses     = "data.sentences"
  path     = "x"
}

stage "v" {
  for_each = { for k, x in stage.u : k => x }
  uses     = "data.sentences"
  path     = "x"
}

stage "self" {
  for_each = stage.self # ERROR: self -> self
  uses     = "data.sentences"
  path     = "x"
}

stage "eval" {
  uses  = "evaluate.sts"
  model = stage.p["x"].model
}

stage "evals" {
  for_each = stage.p
  uses     = "evaluate.sts"
  model    = each.value.model
}

expect "missing" {
  value = stage.eval["a"].metrics.avg # ERROR: Stage "eval" has no for_each, so it has no instance "a"
}

expect "row" {
  for_each = { x = 1, w = 2 }
  value    = stage.eval.metrics[each.key]
}

expect "instance_row" {
  for_each = { x = 1, w = 2 }
  value    = stage.evals[each.key].metrics.avg # ERROR: In instance_row[w]: Stage "evals" has no instance "w"; its instances: evals["x"], evals["y"].
}

expect "kind" {
  value = stage.p["x"].model # ERROR: Not a metric
}
