experiment "infocse" {
  title = "InfoCSE-shaped rounds"
}

variable "rounds" {
  default = 2
}

stage "docs" {
  uses = "data.documents"
}

stage "init" {
  uses = "init.random"
  dim  = 64
}

repeat "idc" {
  rounds = var.rounds
  start  = { model = stage.init.model }
  stage "annotate" {
    uses      = "annotate.idc"
    model     = previous.model
    documents = stage.docs.documents
    top_k     = 1
  }
  stage "train" {
    uses = "train.encoder"
    init = previous.model
    data = stage.annotate.pairs
  }
  stage "score" {
    uses  = "evaluate.sts"
    model = stage.train.model
  }
  next = { model = stage.train.model, metrics = stage.score.metrics }
}

stage "eval" {
  uses  = "evaluate.sts"
  model = repeat.idc.last.model
}

stage "eval_first" {
  uses  = "evaluate.sts"
  model = repeat.idc.round[1].model
}

expect "iter1" {
  value = repeat.idc.round[1].metrics.stsb
  paper = 70
}

profile "long" {
  repeat "idc" {
    rounds = 4
  }
}
