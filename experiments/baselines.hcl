# Non-neural baselines: the "Avg. GloVe embeddings" row that PaSeR (Table 1)
# and DINO (Table 1) print, and a TF-IDF bag of words, evaluated with the
# papers' protocols on the real STS, reranking and retrieval sets.
#
# The papers' GloVe row uses the 840B 300d vectors; the data here has the 6B
# 100d vectors (top 100k words), so our row is expected to fall short of the
# paper's: the difference is recorded, not hidden (docs/papers/baselines.md, results/).

experiment "baselines" {
  title = "Non-neural baselines: average GloVe embeddings and TF-IDF"
  table = "PaSeR Table 1 / DINO Table 1, row Avg. GloVe embeddings"
  paper = "paser.md, dino.md"
}

deviation "glove_vectors" {
  what   = "GloVe vectors of the Avg. GloVe row"
  paper  = "GloVe 840B, 300 dimensions"
  ours   = "GloVe 6B, 100 dimensions, the 100,000 most frequent words"
  why    = "the only GloVe vectors in the data directory"
  tables = ["PaSeR Table 1", "DINO Table 1"]
}

deviation "local_sets" {
  what      = "TF-IDF's fitting corpus and the reranking and retrieval rows"
  paper     = "no paper row (ours only)"
  ours      = "TF-IDF fitted on the local Wikipedia sentences; reranking on the SemEval-2016 CQA set; headline retrieval on BBC News"
  why       = "the rows show what a non-neural encoder scores on the sets the mini profiles use"
  tables    = ["reranking", "retrieval"]
  stand_ins = ["wiki", "semeval2016_cqa", "bbc"]
}

# Nothing here is random; the variable exists so `repro baseline` treats every
# experiment alike.
variable "seed" {
  default = 42
}

locals {
  sts_tasks = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"]
  # table column -> key of evaluate.sts's metrics.json
  sts_metric = {
    STS12   = "sts12", STS13 = "sts13", STS14 = "sts14", STS15 = "sts15", STS16 = "sts16",
    "STS-B" = "stsb", "SICK-R" = "sickr", Avg = "avg"
  }
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
  max_features = 20000
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
expect "glove" {
  for_each = {
    STS12   = 55.14, STS13 = 70.66, STS14 = 59.73, STS15 = 68.25, STS16 = 63.66,
    "STS-B" = 58.02, "SICK-R" = 53.76, Avg = 61.32
  }
  row       = "Avg. GloVe (ours: 6B 100d)"
  column    = each.key
  value     = stage.sts_glove.metrics[local.sts_metric[each.key]]
  paper     = each.value
  tolerance = 1.0
}

# No paper prints a TF-IDF row: ours only.
expect "tfidf" {
  for_each = local.sts_metric
  row      = "TF-IDF (wiki, 20k terms)"
  column   = each.key
  value    = stage.sts_tfidf.metrics[each.value]
}

expect "geometry_glove" {
  for_each        = { alignment = "alignment", uniformity = "uniformity" }
  row             = "Avg. GloVe (ours: 6B 100d)"
  column          = each.key
  value           = stage.sts_glove.metrics[each.value]
  lower_is_better = true
}

expect "geometry_tfidf" {
  for_each        = { alignment = "alignment", uniformity = "uniformity" }
  row             = "TF-IDF (wiki, 20k terms)"
  column          = each.key
  value           = stage.sts_tfidf.metrics[each.value]
  lower_is_better = true
}

# SemEval-2016 CQA question reranking stands in for AskUbuntu (not obtainable here).
expect "rerank_glove" {
  for_each = { "CQA MAP" = "map", "CQA MRR@10" = "mrr10" }
  row      = "Avg. GloVe (ours: 6B 100d)"
  column   = each.key
  value    = stage.rerank_glove.metrics[each.value]
}

expect "rerank_tfidf" {
  for_each = { "CQA MAP" = "map", "CQA MRR@10" = "mrr10" }
  row      = "TF-IDF (wiki, 20k terms)"
  column   = each.key
  value    = stage.rerank_tfidf.metrics[each.value]
}

# BBC News: retrieve each article's headline from its body (mean of sentence vectors).
expect "retrieval_glove" {
  for_each = { "BBC R@5" = "r5", "BBC R@10" = "r10", "BBC R@20" = "r20" }
  row      = "Avg. GloVe (ours: 6B 100d)"
  column   = each.key
  value    = stage.retrieval_glove.metrics[each.value]
}

expect "retrieval_tfidf" {
  for_each = { "BBC R@5" = "r5", "BBC R@10" = "r10", "BBC R@20" = "r20" }
  row      = "TF-IDF (wiki, 20k terms)"
  column   = each.key
  value    = stage.retrieval_tfidf.metrics[each.value]
}

# Nothing here trains, so the mini profile is the paper profile; it exists so
# that CI judges this file against its recorded baseline (results/) like the
# others.
profile "mini" {}

# Nothing trains here: CI's profile is the paper's settings too.
profile "ci" {}
