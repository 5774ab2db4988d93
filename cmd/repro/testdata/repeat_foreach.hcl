# infocse_rounds.hcl with for_each on its repeat block: instance "a" is that
# file's repeat (the same stages, so the same cache keys), instance "b" one
# round with another max_steps (TestRepeatForEachRealStages).
experiment "rounds" {
  title = "InfoCSE rounds with the real stage types"
}

variable "seed" {
  default = 1
}

variable "rounds" {
  default = 2
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
  for_each = ["a", "b"]
  rounds   = each.key == "a" ? var.rounds : 1
  start    = { model = stage.init.model }
  stage "idc_pairs" {
    uses      = "annotate.idc"
    model     = previous.model
    documents = stage.news.documents
  }
  stage "idc_train" {
    uses        = "train.infonce"
    init        = previous.model
    data        = stage.idc_pairs.pairs
    validation  = stage.split.validation
    batch_size  = 8
    max_steps   = each.key == "a" ? 2 : 3
    eval_every  = 1
    pooling     = "mean"
    similarity  = "cosine"
    temperature = 0.05
  }
  stage "idc_eval" {
    uses    = "evaluate.retrieval"
    encoder = stage.idc_train.model
    data    = stage.split.zero_shot
  }
  next = { model = stage.idc_train.model, metrics = stage.idc_eval.metrics }
}

expect "last" {
  row    = "InfoCSE"
  column = "R@5"
  value  = repeat.idc["a"].last.metrics.r5
}

deviation "news" {
  what      = "news documents"
  paper     = "MIND"
  ours      = "BBC News"
  why       = "a test of repeat rounds"
  stand_ins = ["bbc"]
}
