# A module whose stages read BBC News, a stand-in, and declare it.
experiment "docs" { title = "Docs: a module that reads BBC News" }

variable "count" {
  default = 100
}

module "inner" {
  source = "./inner.hcl"
}

stage "docs" {
  uses  = "data.documents"
  split = "bbc"
}

stage "pairs" {
  uses      = "annotate.idc"
  model     = module.inner.model.model
  documents = stage.docs.documents
}

deviation "news" {
  what      = "news corpus"
  paper     = "MIND"
  ours      = "BBC News"
  why       = "the data directory has no MIND"
  tables    = ["Table 1", "news recall", "Parent Table 3", "Docs Table 4"]
  stand_ins = ["bbc"]
}

deviation "size" {
  what  = "documents read"
  paper = "every document"
  ours  = "the first ${var.count}"
  why   = "time"
}

deviation "paper_only" {
  what     = "the paper profile's reading"
  paper    = "ambiguous"
  ours     = "one reading"
  why      = "the paper profile's stage blocks"
  profiles = ["paper"]
}

deviation "mini_only" {
  what     = "mini's setting"
  paper    = "the paper's"
  ours     = "mini's"
  why      = "listed for mini"
  profiles = ["mini"]
}

profile "mini" {
  deviation "small" {
    what   = "model size"
    paper  = "BERT-base"
    ours   = "2 layers"
    tables = ["Tables 1-2"]
    why    = "CPU"
  }
}
