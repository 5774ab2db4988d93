# Non-neural baselines: the "Avg. GloVe embeddings" row that PaSeR (Table 1)
# and DINO (Table 1) print, and a TF-IDF bag of words, evaluated with the
# papers' protocols on the real STS, reranking and retrieval sets.
#
# The papers' GloVe row uses the 840B 300d vectors; the data here has the 6B
# 100d vectors (top 100k words), so our row is expected to fall short of the
# paper's: the difference is recorded, not hidden (README, results/).

experiment "baselines" {
  title = "Non-neural baselines: average GloVe embeddings and TF-IDF"
  table = "PaSeR Table 1 / DINO Table 1, row Avg. GloVe embeddings"
  paper = "paser.md, dino.md"
}

locals {
  sts_tasks = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"]
}

stage "sts" {
  uses  = "data.sts"
  tasks = local.sts_tasks
  split = "test"
}

stage "wiki" {
  uses   = "data.sentences"
  source = "wiki"
}

stage "rerank" {
  uses  = "data.rerank"
  split = "dev"
}

stage "news" {
  uses   = "data.documents"
  source = "bbc"
}

stage "glove" {
  uses    = "encode.glove_avg"
  vectors = "glove.6B.100d"
}

stage "tfidf" {
  uses         = "encode.tfidf"
  corpus       = stage.wiki.sentences
  max_features = 8192 # dense vectors: 20000 terms cost 3 GB and minutes in retrieval
}

stage "sts_glove" {
  uses    = "evaluate.sts"
  encoder = stage.glove.encoder
  data    = stage.sts.pairs
}

stage "sts_tfidf" {
  uses       = "evaluate.sts"
  encoder    = stage.tfidf.encoder
  data       = stage.sts.pairs
  batch_size = 256
}

stage "rerank_glove" {
  uses    = "evaluate.rerank"
  encoder = stage.glove.encoder
  data    = stage.rerank.queries
}

stage "rerank_tfidf" {
  uses    = "evaluate.rerank"
  encoder = stage.tfidf.encoder
  data    = stage.rerank.queries
}

stage "retrieval_glove" {
  uses    = "evaluate.retrieval"
  encoder = stage.glove.encoder
  data    = stage.news.documents
}

stage "retrieval_tfidf" {
  uses    = "evaluate.retrieval"
  encoder = stage.tfidf.encoder
  data    = stage.news.documents
}

# The paper's row (PaSeR Table 1 = DINO Table 1: 840B 300d GloVe).
expect "glove_sts12" {
  row       = "Avg. GloVe (ours: 6B 100d)"
  column    = "STS12"
  value     = stage.sts_glove.metrics.sts12
  paper     = 55.14
  tolerance = 1.0
}

# Nothing here trains, so the mini profile is the paper profile; it exists so
# that CI judges this file against its recorded baseline (results/) like the
# others.
profile "mini" {}
