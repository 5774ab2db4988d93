# A small real pipeline for the CLI's tests: TF-IDF fitted on STS-B train
# sentences, evaluated on STS-B test.
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
