experiment "x" {
}

stage "corpus" {
  uses  = "data.sentences"
  path  = "x"
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

expect "paper_only" {
  for_each = { STS12 = 70.27, Avg = 75.20 }
  row      = "DINO"
  column   = each.key
  paper    = each.value
  pending  = "the paper's value"
}

expect "both" {
  value   = stage.eval.metrics.avg
  pending = "waits" # ERROR: Pending cell with a value
}

expect "neither" { # ERROR: Missing value; An expect block needs value = stage.NAME.metrics..., or pending
  paper = 1
}
