experiment "broken" {
}

module "pre" {
  source = "./pre.hcl"
  sizes  = 3 # ERROR: Module "pre" (testdata/modules/errors/pre.hcl) declares no variable or input "sizes". Did you mean "size"?
}

module "gone" {
  source = "./nope.hcl" # ERROR: Cannot read module
}

module "loop" {
  source = "./loop_a.hcl"
}

module "bad" {
  source = 3 # ERROR: `source` must be a literal string
}

module "pre" { # ERROR: Duplicate module "pre"
  source = "./pre.hcl"
}

module "nosource" { # ERROR: Missing required argument
}

stage "corpus" {
  uses = "data.sentences"
  path = "x"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}

stage "a" {
  uses = "train.encoder"
  data = stage.mask.pairs
  init = module.pree.bert.model # ERROR: There is no module "pree". Did you mean "pre"?
}

stage "b" {
  uses = "train.encoder"
  data = stage.mask.pairs
  init = module.pre.bret.model # ERROR: Module "pre" (testdata/modules/errors/pre.hcl) has no top-level stage "bret". Did you mean "bert"?
}

stage "c" {
  uses = "train.encoder"
  data = stage.mask.pairs
  init = module.pre.bert.modl # ERROR: Module stage pre.bert (train.encoder) has no output "modl". Did you mean "model"?
}

stage "d" {
  uses = "train.encoder"
  data = module.pre.bert.model # ERROR: Input "data" of train.encoder takes artifacts of kind pairs, but module.pre.bert.model is of kind encoder.
}

stage "e" {
  uses   = "train.encoder"
  data   = stage.mask.pairs
  hidden = module.pre.bert.model # ERROR: A parameter cannot refer to stage outputs
}

stage "f" {
  uses = "train.encoder"
  data = stage.mask.pairs
  init = module.pre # ERROR: Write module.NAME.STAGE.OUTPUT or module.NAME.OUTPUT.
}
