# Local values holding stage references, used wrongly (local_refs.go).
experiment "local_refs" {
}

stage "corpus" {
  uses = "data.sentences"
  path = "corpus.txt"
}

stage "m" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}

locals {
  pairs   = { a = stage.m.pairs }
  a       = { x = local.b.x }                    # ERROR: local.a depends on itself (through: local.a -> local.b -> local.a)
  b       = { x = stage.m.pairs, y = local.a.x } # ERROR: local.b depends on itself
  loop    = { a = stage.t["a"].model }           # ERROR: local.loop depends on itself (through: local.loop -> the for_each of stage "t" -> local.loop)
  missing = stage.nope.pairs                     # ERROR: There is no stage "nope"
  self    = stage.self.model
}

stage "t" {
  for_each = local.loop
  uses     = "train.encoder"
  data     = stage.m.pairs
}

stage "param" {
  uses  = "text.mask"
  input = stage.corpus.sentences
  mode  = local.pairs.a # ERROR: Stage output in a value; local.pairs.a holds stage outputs
}

stage "not_output" {
  uses = "train.encoder"
  data = local.pairs # ERROR: Not a stage output; local.pairs is not a stage output but a value of type object
}

stage "no_element" {
  uses = "train.encoder"
  data = local.pairs.b # ERROR: local.pairs has no element "b"
}

stage "self" {
  uses = "train.encoder"
  data = stage.m.pairs
  init = local.self # ERROR: Dependency cycle; The stages depend on each other in a loop: self -> self
}

module "x" {
  source  = "../modules/inputs/chain.hcl"
  encoder = stage.self.model
  lr      = local.pairs # ERROR: Stage output in a value
}
