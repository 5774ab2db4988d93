# Override paths and --target into module stages (module_paths.go): one
# module file used twice (a, b), and a module with a module of its own.
experiment "paths" {
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

module "a" {
  source  = "../inputs/chain.hcl"
  encoder = stage.base.model
}

module "b" {
  source  = "../inputs/chain.hcl"
  encoder = stage.base.model
}

module "outer" {
  source  = "./outer.hcl"
  encoder = stage.base.model
}

locals {
  lr = 1e-3
}

stage "use_x" {
  uses = "train.encoder"
  data = module.outer.x
}

stage "use_y" {
  uses = "train.encoder"
  data = module.outer.y
}

expect "a" {
  value = module.a.scores.avg
}

expect "b" {
  value = module.b.scores.avg
}

expect "inner" {
  value = module.outer.scores.avg
}

ablation "lr" {
  vary   = { "module.a.train.learning_rate" = [1e-4, local.lr] }
  report = [module.a.scores.avg]
}

ablation "corpus" {
  variant "own" {
    set = { module.a.mask.top_k = 3 }
  }
  variant "includer's" {
    set = { module.a.mask.input = stage.corpus.sentences, module.outer.mask["x"].top_k = 5 }
  }
  report = [module.a.scores.avg]
}
