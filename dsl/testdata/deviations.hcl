experiment "x" {}

variable "docs" {
  default = ""
}

locals {
  why = "the data directory has no MIND"
}

stage "docs" {
  uses  = "data.documents"
  split = "bbc"
}

deviation "news" {
  what      = "news corpus"
  paper     = "MIND"
  ours      = "BBC News"
  why       = local.why
  tables    = ["Table 1", "Table 3"]
  evidence  = "infocse.md section 4"
  stand_ins = ["bbc"]
}

profile "mini" {
  deviation "small" {
    what  = "model size"
    paper = "BERT-base"
    ours  = "2 layers"
    why   = "CPU"
  }
}

profile "ci" {}
