# The CLI test pipeline with a figure: each report's figures are its own.
experiment "figtest" {
  title = "figures per report"
  table = "STS-B test"
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
  uses    = "evaluate.sts"
  encoder = stage.tfidf.encoder
  data    = stage.sts.pairs
}

stage "figure" {
  uses   = "figure.scatter"
  m1     = stage.eval.metrics
  labels = ["TF-IDF"]
  x      = "alignment"
  y      = "uniformity"
  file   = "geometry.png"
}

expect "stsb" {
  row    = "TF-IDF"
  column = "STS-B"
  value  = stage.eval.metrics.stsb
}

profile "mini" {
  stage "tfidf" {
    max_features = 1000
  }
}
