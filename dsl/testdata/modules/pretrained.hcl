# A module file: also a runnable experiment on its own.
experiment "pretrained" {
  title = "shared pretraining"
}

variable "seed" {
  default = 7
}

variable "size" {
  default = 768
}

stage "corpus" {
  uses = "data.sentences"
  path = "wiki.txt"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}

stage "bert" {
  uses   = "train.encoder"
  data   = stage.mask.pairs
  hidden = var.size
  seed   = var.seed
}

stage "roberta" {
  uses   = "train.encoder"
  data   = stage.mask.pairs
  layers = 6
}

stage "probe" {
  uses  = "evaluate.sts"
  model = stage.bert.model
}

expect "probe" {
  value = stage.probe.metrics.avg
}

profile "ci" {
  stage "bert" {
    layers    = 2
    max_steps = 10
  }
}
