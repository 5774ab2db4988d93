experiment "x" {}

stage "docs" {
  uses  = "data.documents"
  split = "bbc"
}

deviation "everywhere" {
  what  = "tokenizer"
  paper = "WordPiece"
  ours  = "a word list"
  why   = "no vocabulary file"
}

deviation "paper_only" {
  what      = "news corpus"
  paper     = "MIND"
  ours      = "BBC News"
  why       = "the data directory has no MIND"
  stand_ins = ["bbc"]
  profiles  = ["paper"]
}

deviation "paper_and_mini" {
  what     = "split sizes"
  paper    = "10,000 pairs"
  ours     = "500 pairs"
  why      = "the sizes fit the stand-in"
  profiles = ["mini", "paper"]
}

deviation "ci_only" {
  what     = "split sizes"
  paper    = "10,000 pairs"
  ours     = "100 pairs"
  why      = "minutes"
  profiles = ["ci"]
}

profile "mini" {
  deviation "small" {
    what  = "model size"
    paper = "BERT-base"
    ours  = "2 layers"
    why   = "CPU"
  }
}

profile "ci" {
  extends = "mini"
}
