# OPTIONS: ablation=n
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

ablation "n" {
  vary    = { "stage.mask.top_k" = [1, 2] }
  columns = [] # ERROR: columns has 0 labels but report has 1 columns.
  paper   = { "mask.top_k=1" = [1, 2] } # ERROR: has 2 values but report has 1 columns
  report  = [stage.eval.metrics.avg]
  figure = { # ERROR: A figure needs file = "NAME.png"
    title  = "t"
    xlabel = "k" # ERROR: A figure has no attribute "xlabel". Did you mean "x_label"?
    y_label = [1] # ERROR: y_label must be a string.
  }
}
