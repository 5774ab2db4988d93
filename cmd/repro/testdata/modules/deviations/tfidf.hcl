# A module: a TF-IDF encoder on STS-B train, with its deviations.
experiment "tfidf_module" {
  title = "TF-IDF: an encoder fitted on STS-B train"
}

variable "features" {
  default = 2000
}

stage "corpus" {
  uses   = "data.sts_sentences"
  tasks  = ["stsb"]
  splits = ["train"]
}

stage "tfidf" {
  uses         = "encode.tfidf"
  corpus       = stage.corpus.sentences
  max_features = var.features
}

deviation "encoder" {
  what   = "the encoder"
  paper  = "BERT-base"
  ours   = "TF-IDF fitted on STS-B train"
  why    = "a row every machine computes"
  tables = ["Table 1", "STS-B test", "Parent Table 2"]
}

deviation "vocabulary" {
  what  = "the vocabulary"
  paper = "BERT's 30,522 word pieces"
  ours  = "the ${var.features} most frequent words"
  why   = "TF-IDF's features are words"
}

deviation "paper_reading" {
  what     = "the paper profile's reading"
  paper    = "unstated"
  ours     = "sublinear term frequency"
  why      = "a fixture's paper-only deviation"
  profiles = ["paper"]
}

profile "ci" {
  deviation "ci_corpus" {
    what   = "the corpus in ci"
    paper  = "STS-B train"
    ours   = "STS-B train (the test data directory's)"
    why    = "a fixture's profile deviation"
    tables = ["Table 3"]
  }
}
