experiment "x" {
}

stage "docs" {
  uses = "data.documents"
}

stage "init" {
  uses = "init.random"
}

stage "outer_score" {
  uses  = "evaluate.sts"
  model = stage.init.model
}

repeat "ok" {
  rounds = 3
  until  = { metric = stage.score.metrics.stsb }
  start  = { model = stage.init.model }
  stage "train" {
    uses = "train.encoder"
    init = previous.model
    data = stage.annotate.pairs
  }
  stage "annotate" {
    uses      = "annotate.idc"
    model     = previous.model
    documents = stage.docs.documents
  }
  stage "score" {
    uses  = "evaluate.sts"
    model = stage.train.model
  }
  next = { model = stage.train.model, metrics = stage.score.metrics }
}

repeat "outer" {
  rounds = 2
  until  = { metric = stage.outer_score.metrics.stsb } # ERROR: must be written by one of repeat "outer"'s own stages (a2)
  stage "a2" {
    uses  = "evaluate.sts"
    model = stage.init.model
  }
  next = { metrics = stage.a2.metrics }
}

repeat "patience" {
  rounds = 2
  until  = { metric = stage.a3.metrics.stsb, patience = 0 } # ERROR: The patience must be a whole number of at least 1; got 0.
  stage "a3" {
    uses  = "evaluate.sts"
    model = stage.init.model
  }
  next = { metrics = stage.a3.metrics }
}

repeat "keys" {
  rounds = 2
  until  = { metric = stage.a4.metrics.stsb, stop = 1 } # ERROR: not "stop"
  stage "a4" {
    uses  = "evaluate.sts"
    model = stage.init.model
  }
  next = { metrics = stage.a4.metrics }
}

repeat "nometric" {
  rounds = 2
  until  = { patience = 2 } # ERROR: `until` needs metric
  stage "a5" {
    uses  = "evaluate.sts"
    model = stage.init.model
  }
  next = { metrics = stage.a5.metrics }
}

repeat "kind" {
  rounds = 2
  until  = { metric = stage.t6.model } # ERROR: must be a number in a metrics output
  stage "t6" {
    uses = "init.random"
  }
  next = { model = stage.t6.model }
}

stage "reads_round" {
  uses  = "evaluate.sts"
  model = repeat.ok.round[2].model # ERROR: Repeat "ok" stops by `until`
}

stage "reads_last" {
  uses  = "evaluate.sts"
  model = repeat.ok.last.model
}
