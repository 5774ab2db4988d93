# Ablation paths into module stages that name nothing (module_paths.go).
# OPTIONS: ablation=bad
experiment "module_paths" {
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
  source  = "../modules/inputs/chain.hcl"
  encoder = stage.base.model
}

module "outer" {
  source  = "../modules/paths/outer.hcl"
  encoder = stage.base.model
}

stage "use" {
  uses = "train.encoder"
  data = module.outer.x
}

expect "a" {
  value = module.a.scores.avg
}

ablation "bad" {
  vary = {
    "module.nope.train.learning_rate"       = [1]   # ERROR: declares no module "nope"
    "module.a.trian.learning_rate"          = [1]   # ERROR: has no top-level stage "trian". Did you mean "train"? Its stages: wiki, mask, train, eval.
    "module.a.train.lr"                     = [1]   # ERROR: Stage type train.encoder has no input or parameter named "lr"
    "module.a.train"                        = [1]   # ERROR: name an attribute of the stage
    "module.a"                              = [1]   # ERROR: name its stage and attribute
    "module.a.train.uses"                   = ["x"] # ERROR: a stage's type cannot be overridden
    "module.a.train[\"k\"].learning_rate"   = [1]   # ERROR: stage "train" has no for_each, so it has no instance "k"; write module.a.train.learning_rate.
    "module.outer.module.nope.train.epochs" = [1]   # ERROR: In module "outer" (testdata/modules/paths/outer.hcl): "module.outer.module.nope.train.epochs": testdata/modules/paths/outer.hcl declares no module "nope". Declared: inner.
    "module.outer.module.inner.tran.epochs" = [1]   # ERROR: has no top-level stage "tran"
    "module.outer.mask[\"z\"].top_k"        = [1]   # ERROR: module.outer.mask["z"].top_k: stage "mask" has no instance "z"; its instances: mask["x"], mask["y"].
  }
  report = [module.a.scores.avg]
}
