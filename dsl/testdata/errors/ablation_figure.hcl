# OPTIONS: ablation=mode
experiment "x" {
}

stage "corpus" {
  uses = "data.sentences"
  path = "x"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}

stage "train" {
  uses = "train.encoder"
  data = stage.mask.pairs
}

stage "eval" {
  uses  = "evaluate.sts"
  model = stage.train.model
}

ablation "mode" {
  vary    = { "stage.mask.mode" = ["rake", "np"] }
  report  = [stage.eval.metrics.avg]
  columns = "avg" # ERROR: `columns` must be a list of strings
  paper   = { "rake" = [1], "mask.mode=rake" = [2] } # ERROR: "mask.mode=rake" names variant "mask.mode=rake", already given paper values at
  figure  = { file = "f.png" } # ERROR: stage.mask.mode takes the value "rake", not a number; a figure's x axis is numeric.
}
