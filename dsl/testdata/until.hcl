experiment "until" {
  title = "rounds that stop when validation stops improving"
}

stage "docs" {
  uses = "data.documents"
}

stage "init" {
  uses = "init.random"
}

repeat "idc" {
  rounds = 4
  until  = { metric = stage.score.metrics.stsb, patience = 2 }
  start  = { model = stage.init.model }
  stage "annotate" {
    uses      = "annotate.idc"
    model     = previous.model
    documents = stage.docs.documents
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

expect "best" {
  value = repeat.idc.last.metrics.stsb
}
