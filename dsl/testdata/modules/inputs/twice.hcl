# One module file used four times: two blocks with different inputs, one
# identical to the first, one chained onto the first's output.
experiment "twice" {
}

stage "corpus" {
  uses = "data.sentences"
  path = "corpus.txt"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}

stage "base" {
  uses = "train.encoder"
  data = stage.mask.pairs
}

stage "other" {
  uses   = "train.encoder"
  data   = stage.mask.pairs
  layers = 6
}

module "a" {
  source  = "./chain.hcl"
  encoder = stage.base.model
  lr      = 1e-4
}

module "b" {
  source  = "./chain.hcl"
  encoder = stage.other.model
  lr      = 1e-4
}

module "same_as_a" {
  source  = "./chain.hcl"
  encoder = stage.base.model
  lr      = 1e-4
}

# Declared before its input's module: blocks are evaluated in the order
# their outputs are needed.
module "d" {
  source  = "./chain.hcl"
  encoder = module.a.model
  corpus  = stage.corpus.sentences
}

stage "final" {
  uses  = "evaluate.sts"
  model = module.d.model
}

expect "a" {
  value = module.a.scores.avg
}

expect "b" {
  value = module.b.eval.metrics.avg
}

expect "same" {
  value = module.same_as_a.scores.avg
}

profile "ci" {}

# A profile changes module blocks' arguments: b gets a's encoder (so the
# same keys), d its default corpus back and another lr, same_as_a another lr.
profile "mini" {
  module "b" {
    encoder = stage.base.model
  }
  module "d" {
    corpus = null
    lr     = 5e-5
  }
  module "same_as_a" {
    lr = 2e-4
  }
}
