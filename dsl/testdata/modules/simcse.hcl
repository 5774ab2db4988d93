experiment "simcse" {
}

variable "seed" {
  default = 42
}

module "pre" {
  source = "./pretrained.hcl"
  size   = 256
}

stage "corpus" {
  uses = "data.sentences"
  path = "wiki.txt"
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

expect "avg" {
  value = stage.eval.metrics.avg
}

expect "pretrained" {
  value = module.pre.probe.metrics.avg
}

profile "ci" {
  stage "train" {
    init = module.pre.bert.model
  }
}

profile "mini" {
  stage "train" {
    init = module.pre.bert.model
  }
}
