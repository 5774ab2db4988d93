# A module with a for_each stage and a module of its own.
experiment "outer" {
}

input "encoder" {
  kind = "encoder"
}

stage "corpus" {
  uses = "data.sentences"
  path = "outer.txt"
}

stage "mask" {
  for_each = ["x", "y"]
  uses     = "text.mask"
  input    = stage.corpus.sentences
}

module "inner" {
  source  = "../inputs/chain.hcl"
  encoder = input.encoder
}

output "x" {
  value = stage.mask["x"].pairs
}

output "y" {
  value = stage.mask["y"].pairs
}

output "scores" {
  value = module.inner.scores
}
