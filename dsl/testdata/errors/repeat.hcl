experiment "x" {
}

stage "docs" {
  uses = "data.documents"
}

stage "init" {
  uses = "init.random"
}

repeat "r" {
  rounds = 2
  start  = { model = stage.init.model, extra = stage.docs.documents } # ERROR: start.extra has no counterpart in next
  stage "annotate" {
    uses      = "annotate.idc"
    model     = previous.model
    documents = previous.docs # ERROR: Repeat "r" carries no value "docs" from round to round.
  }
  stage "train" {
    uses = "train.encoder"
    data = stage.annotate.pairs
    init = previous.metrics # ERROR: previous.metrics in round 1 needs start = { metrics = ... } # ERROR: takes artifacts of kind encoder, but previous.metrics is of kind metrics
  }
  stage "score" {
    uses  = "evaluate.sts"
    model = stage.train.model
  }
  next = { model = stage.train.model, metrics = stage.score.metrics }
}

repeat "bad_kind" {
  rounds = 0 # ERROR: The number of rounds must be a whole number of at least 1; got 0.
  next   = {}
}

repeat "kinds" {
  rounds = 1
  start  = { model = stage.init.model }
  stage "t2" {
    uses = "train.encoder"
    data = stage.annotate.pairs # ERROR: Stage "annotate" runs once per round of repeat "r"
    init = repeat.kinds.last.model # ERROR: refer to the previous round with previous.NAME
  }
  next = { model = stage.docs.documents } # ERROR: next.model is of kind documents but start.model is of kind encoder
}

repeat "norounds" { # ERROR: Missing rounds
  next = {}
}

stage "outside" {
  uses = "evaluate.sts"
  model = previous.model # ERROR: previous.NAME is only defined inside a repeat block
}

stage "o2" {
  uses = "evaluate.sts"
  model = repeat.r.round[3].model # ERROR: Repeat "r" has 2 rounds; round[3] does not exist.
}

stage "o3" {
  uses = "evaluate.sts"
  model = repeat.r.last.modle # ERROR: Repeat "r"'s next has no value "modle". Did you mean "model"?
}

stage "o4" {
  uses = "evaluate.sts"
  model = repeat.q.last.model # ERROR: There is no repeat block "q".
}

stage "o5" {
  uses = "evaluate.sts"
  model = repeat.r.first.model # ERROR: After repeat.r comes last or round[N], not "first".
}

expect "e" {
  value = stage.score.metrics.stsb # ERROR: Reference into a repeat block
  paper = 1
}
