experiment "dino_values" {
  title = "DINO's bad parameters: reported at validate time, at their line"
}

stage "x1" {
  uses   = "data.sts_sentences"
  tasks  = ["stsb"]
  splits = ["train"]
}

stage "pairs" {
  uses     = "generate.dino_pairs"
  data     = stage.x1.sentences
  template = "Task: Write two sentences that [I].\nSentence 2: \""
  lambda   = -1
}

stage "x1_gen" {
  uses         = "generate.dino_x1"
  labels       = [1, 0.5]
  instructions = ["mean the same thing"]
  count        = 0
}

stage "smooth" {
  uses = "pairs.smooth"
  data = stage.pairs.pairs
  low  = 0.9
  high = 0.1
}
