experiment "broken" {
  title = "every kind of mistake at once"
}

stage "sts" {
  uses  = "data.sts"
  tasks = ["stsb"]
  splt  = "test"
}

stage "enc" {
  uses = "encode.tfidff"
}

stage "eval" {
  uses    = "evaluate.sts"
  encoder = stage.nothere.encoder
  data    = stage.sts.pairs
}
