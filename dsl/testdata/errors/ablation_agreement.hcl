# OPTIONS: ablation=k
experiment "x" {
  min_agreement = 80 # ERROR: min_agreement is the share of the paper's pairwise orderings that must agree: a number in (0, 1], such as 0.8; got 80.
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

ablation "k" {
  vary          = { "stage.mask.top_k" = [1, 2] }
  report        = [stage.eval.metrics.avg]
  min_agreement = 0.5 # ERROR: Ablation "k" declares no `paper` values to agree with
}
