# InfoCSE's rounds with the real stage types, small enough for a test: a
# tiny encoder trained on CONPONO pairs of 40 BBC articles, then IDC rounds
# that stop when validation R@5 stops improving.
experiment "rounds" {
  title = "InfoCSE rounds with the real stage types"
}

variable "seed" {
  default = 1
}

stage "news" {
  uses   = "data.documents"
  source = "bbc"
  limit  = 40
}

stage "split" {
  uses       = "data.fewshot_split"
  documents  = stage.news.documents
  validation = 10
  test       = 10
  labels     = 10
}

stage "pairs" {
  uses      = "annotate.conpono"
  documents = stage.news.documents
  window    = 1
}

stage "init" {
  uses         = "train.infonce"
  data         = stage.pairs.pairs
  from_scratch = true
  layers       = 1
  hidden       = 16
  heads        = 2
  intermediate = 32
  max_position = 64
  vocab        = "train"
  vocab_size   = 300
  batch_size   = 8
  max_steps    = 2
  pooling      = "mean"
  similarity   = "cosine"
  temperature  = 0.05
}

repeat "idc" {
  rounds = 4
  until  = { metric = stage.idc_val.metrics.r5, patience = 1 }
  start  = { model = stage.init.model }
  stage "idc_pairs" {
    uses      = "annotate.idc"
    model     = previous.model
    documents = stage.news.documents
  }
  stage "idc_train" {
    uses          = "train.infonce"
    init          = previous.model
    data          = stage.idc_pairs.pairs
    validation    = stage.split.validation
    batch_size    = 8
    max_steps     = 2
    eval_every    = 1
    learning_rate = 1e-3
    pooling       = "mean"
    similarity    = "cosine"
    temperature   = 0.05
  }
  stage "idc_val" {
    uses    = "evaluate.retrieval"
    encoder = stage.idc_train.model
    data    = stage.split.validation
  }
  next = { model = stage.idc_train.model, metrics = stage.idc_val.metrics }
}

stage "test" {
  uses    = "evaluate.retrieval"
  encoder = repeat.idc.last.model
  data    = stage.split.test
}

expect "selected" {
  row    = "InfoCSE"
  column = "validation R@5"
  value  = repeat.idc.last.metrics.r5
}

deviation "news" {
  what      = "news documents"
  paper     = "MIND"
  ours      = "BBC News"
  why       = "a test of until"
  stand_ins = ["bbc"]
}
