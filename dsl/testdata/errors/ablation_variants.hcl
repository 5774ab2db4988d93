# OPTIONS: ablation=v
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

ablation "v" {
  variant "none" {
    set = {}
  }
  report = [stage.eval.metrics.avg]
  paper  = [1, 2] # ERROR: `paper` must be an object mapping variant names to lists of numbers
  figure = { file = "f.png" } # ERROR: ablation "v" has variant blocks, which name cells rather than numbers.
}
