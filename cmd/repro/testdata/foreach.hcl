# testdata/tfidf.hcl with for_each: the "big" TF-IDF is tfidf.hcl's tfidf
# (same parameters, so the same cache key), "small" a second one.
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
  for_each     = { big = 2000, small = 500 }
  uses         = "encode.tfidf"
  corpus       = stage.corpus.sentences
  max_features = each.value
}

stage "eval" {
  for_each      = stage.tfidf
  uses          = "evaluate.sts"
  encoder       = each.value.encoder
  data          = stage.sts.pairs
  align_uniform = false
}

expect "stsb" {
  for_each  = stage.eval
  row       = "TF-IDF (${each.key})"
  column    = "STS-B"
  value     = each.value.metrics.stsb
  paper     = 56.0
  tolerance = 5
}
