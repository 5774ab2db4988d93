experiment "values" {
  title = "values that are well-typed but wrong: reported at validate time, at their line"
}

stage "sts" {
  uses  = "data.sts"
  tasks = ["stsx", "stsb"]
  split = "bogus"
}

stage "wiki" {
  uses  = "data.sentences"
  limit = -3
}

stage "tfidf" {
  uses         = "encode.tfidf"
  corpus       = stage.wiki.sentences
  max_features = -5
}

stage "vectors" {
  uses   = "encode.file"
  path   = "vectors.jsonl"
  sha256 = "not-hex"
}

stage "eval" {
  uses       = "evaluate.sts"
  encoder    = stage.tfidf.encoder
  data       = stage.sts.pairs
  batch_size = 0
}
