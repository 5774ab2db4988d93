# A module: a TF-IDF encoder that two experiments share.
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

profile "ci" {
  stage "tfidf" {
    max_features = 1000
  }
}
