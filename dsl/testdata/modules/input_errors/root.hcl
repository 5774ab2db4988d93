experiment "root" {
}

stage "corpus" {
  uses = "data.sentences"
  path = "x"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}

stage "base" {
  uses = "train.encoder"
  data = stage.mask.pairs
}

module "unset" { # ERROR: Module "unset" (testdata/modules/input_errors/mod.hcl) needs input "encoder" (kind encoder), which has no default
  source = "./mod.hcl"
}

module "kind" {
  source  = "./mod.hcl"
  encoder = stage.mask.pairs # ERROR: Input "encoder" of module "kind" takes artifacts of kind encoder, but stage.mask.pairs is of kind pairs.
}

module "typo" {
  source  = "./mod.hcl"
  encoder = stage.base.model
  encodr  = stage.base.model # ERROR: declares no variable or input "encodr". Did you mean "encoder"?
}

module "value" {
  source  = "./mod.hcl"
  encoder = "base" # ERROR: Input "encoder" of module "value" takes a reference to an artifact of kind encoder, such as stage.NAME.OUTPUT or module.M.OUTPUT; "base" is a value.
}

module "p" {
  source  = "./mod.hcl"
  encoder = module.q.model
}

module "q" {
  source  = "./mod.hcl"
  encoder = module.p.model # ERROR: module.p.model cannot be read here: module "p" is still resolving its own inputs
}

module "nostage" {
  source  = "./mod.hcl"
  encoder = module.p.nope.model # ERROR: has no top-level stage "nope". Its stages: corpus, mask, train, other, third. Its outputs: model, broken.
}

# A cycle through a module: t feeds the module, whose output feeds t.
stage "t" {
  uses = "train.encoder"
  data = stage.mask.pairs
  init = module.w.model
}

module "w" {
  source  = "./mod.hcl"
  encoder = stage.t.model
}

stage "reads" {
  uses  = "evaluate.sts"
  model = module.p.model
}

profile "mini" {
  module "nope" { # ERROR: Profile "mini" changes module "nope", which is not declared.
    encoder = stage.base.model
  }
  module "p" {
    source  = "./other.hcl" # ERROR: A profile cannot change a module's source
    encodr  = stage.base.model # ERROR: declares no variable or input "encodr". Did you mean "encoder"?
    encoder = stage.base.model
  }
}
