# foreach.hcl written out block by block (see there).
experiment "rf" {
  title = "for_each on repeat blocks"
}

stage "docs" {
  uses = "data.documents"
}

stage "sents" {
  uses = "data.sentences"
  path = "s.txt"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.sents.sentences
}

stage "init_a" {
  uses = "init.random"
  dim  = 64
}

stage "init_b" {
  uses = "init.random"
  dim  = 32
}

repeat "idc_a" {
  rounds = 3
  start  = { model = stage.init_a.model }
  stage "annotate_a" {
    uses      = "annotate.idc"
    model     = previous.model
    documents = stage.docs.documents
    top_k     = 1
  }
  stage "train_a" {
    uses = "train.encoder"
    init = previous.model
    data = stage.annotate_a.pairs
  }
  next = { model = stage.train_a.model }
}

repeat "idc_b" {
  rounds = 2
  start  = { model = stage.init_b.model }
  stage "annotate_b" {
    uses      = "annotate.idc"
    model     = previous.model
    documents = stage.docs.documents
    top_k     = 2
  }
  stage "train_b" {
    uses = "train.encoder"
    init = previous.model
    data = stage.annotate_b.pairs
  }
  next = { model = stage.train_b.model }
}

repeat "ft_x" {
  rounds = 4
  until  = { metric = stage.score_x.metrics.stsb, patience = 1 }
  start  = { model = repeat.idc_a.last.model }
  stage "tune_x" {
    uses          = "train.encoder"
    init          = previous.model
    data          = stage.mask.pairs
    learning_rate = 1e-3
  }
  stage "score_x" {
    uses  = "evaluate.sts"
    model = stage.tune_x.model
  }
  next = { model = stage.tune_x.model, metrics = stage.score_x.metrics }
}

repeat "ft_y" {
  rounds = 4
  until  = { metric = stage.score_y.metrics.stsb, patience = 1 }
  start  = { model = repeat.idc_b.last.model }
  stage "tune_y" {
    uses          = "train.encoder"
    init          = previous.model
    data          = stage.mask.pairs
    learning_rate = 2e-3
  }
  stage "score_y" {
    uses  = "evaluate.sts"
    model = stage.tune_y.model
  }
  next = { model = stage.tune_y.model, metrics = stage.score_y.metrics }
}

stage "eval_a" {
  uses  = "evaluate.sts"
  model = repeat.idc_a.last.model
}

stage "eval_b" {
  uses  = "evaluate.sts"
  model = repeat.idc_b.round[1].model
}

expect "best_x" {
  value = repeat.ft_x.last.metrics.stsb
  paper = 70
}

expect "best_y" {
  value = repeat.ft_y.last.metrics.stsb
  paper = 71
}

profile "mini" {
  repeat "idc_a" { rounds = 2 }
  repeat "idc_b" { rounds = 1 }
  stage "train_a" { learning_rate = 0.1 }
  stage "train_b" { learning_rate = 0.1 }
  stage "tune_y" { max_steps = 5 }
}
