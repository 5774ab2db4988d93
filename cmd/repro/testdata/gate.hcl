# The CLI test pipeline (tfidf.hcl) with a count and a pending cell, for
# the gate's tests (check_test.go).
experiment "clitest" {
  title = "CLI test"
  table = "STS-B test"
}

variable "seed" {
  default = 42
}

stage "corpus" {
  uses   = "data.sts_sentences"
  tasks  = ["stsb"]
  splits = ["train"]
}

stage "sts" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "test"
}

stage "tfidf" {
  uses         = "encode.tfidf"
  corpus       = stage.corpus.sentences
  max_features = 2000
}

stage "eval" {
  uses          = "evaluate.sts"
  encoder       = stage.tfidf.encoder
  data          = stage.sts.pairs
  align_uniform = false
}

expect "pairs" {
  row    = "TF-IDF"
  column = "pairs"
  value  = stage.eval.metrics.n.stsb
  count  = true
}

expect "bert" {
  row     = "BERT (the paper's row)"
  column  = "STS-B"
  paper   = 47.29
  pending = "copied from the paper"
}

expect "stsb" {
  row       = "TF-IDF"
  column    = "STS-B"
  value     = stage.eval.metrics.stsb
  paper     = 56.0
  tolerance = 5
}

profile "mini" {
  stage "tfidf" {
    max_features = 1000
  }
}
