# Two IDC chains (from two initialisations, with their own rounds and top_k)
# and two fine-tuning loops that stop by `until`, written with for_each on
# repeat blocks; longhand.hcl is the same pipeline block by block.
# TestRepeatForEachLonghand loads both and compares their stage identities.
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

repeat "idc" {
  for_each = {
    a = { model = stage.init_a.model, top_k = 1 }
    b = { model = stage.init_b.model, top_k = 2 }
  }
  rounds = each.key == "a" ? 3 : 2
  start  = { model = each.value.model }
  stage "annotate" {
    uses      = "annotate.idc"
    model     = previous.model
    documents = stage.docs.documents
    top_k     = each.value.top_k
  }
  stage "train" {
    uses = "train.encoder"
    init = previous.model
    data = stage.annotate.pairs
  }
  next = { model = stage.train.model }
}

repeat "ft" {
  for_each = toset(["x", "y"])
  rounds   = 4
  until    = { metric = stage.score.metrics.stsb, patience = 1 }
  start    = { model = repeat.idc[each.key == "x" ? "a" : "b"].last.model }
  stage "tune" {
    uses          = "train.encoder"
    init          = previous.model
    data          = stage.mask.pairs
    learning_rate = each.key == "x" ? 1e-3 : 2e-3
  }
  stage "score" {
    uses  = "evaluate.sts"
    model = stage.tune.model
  }
  next = { model = stage.tune.model, metrics = stage.score.metrics }
}

stage "eval" {
  for_each = { a = repeat.idc["a"].last.model, b = repeat.idc["b"].round[1].model }
  uses     = "evaluate.sts"
  model    = each.value
}

expect "best" {
  for_each = { x = 70, y = 71 }
  value    = repeat.ft[each.key].last.metrics.stsb
  paper    = each.value
}

profile "mini" {
  repeat "idc" { rounds = 1 }
  repeat "idc[\"a\"]" { rounds = 2 } # the instance's own wins
  stage "train" { learning_rate = 0.1 }
  stage "tune[\"y\"]" { max_steps = 5 }
}
