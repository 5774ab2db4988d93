# OPTIONS: ablation=k
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

ablation "k" {
  vary    = { "stage.mask.top_k" = [1, 2], "stage.mask.mode" = ["rake", "np"] }
  report  = [stage.eval.metrics.avg, stage.eval.metrics.stsb]
  columns = ["Avg"] # ERROR: columns has 1 labels but report has 2 columns.
  paper = {
    "mask.top_k=1, mask.mode=rake" = [1, 2]
    "mask.top_k=1, mask.mode=np"   = [1, null]
    "1"                            = [1, 2] # ERROR: Ablation "k" has no variant "1". Its variants: "mask.top_k=1, mask.mode=rake", "mask.top_k=1, mask.mode=np", "mask.top_k=2, mask.mode=rake", "mask.top_k=2, mask.mode=np".
    "mask.top_k=2, mask.mode=np"   = [1] # ERROR: paper["mask.top_k=2, mask.mode=np"] has 1 values but report has 2 columns
    "mask.top_k=2, mask.mode=rake" = ["x", 2] # ERROR: must be a list of numbers
    "mask.top_k=2, mask.mode=nq"   = [1, 2] # ERROR: Did you mean "mask.top_k=2, mask.mode=np"?
    "mask.top_k=1,mask.mode=rake"  = [3, 4] # ERROR: no variant
    (var.nope)                     = [1, 2] # ERROR: There is no variable "nope"
  }
  figure = { file = "f.png" } # ERROR: Figure needs one numeric axis; A figure plots the first report column against one varied number; ablation "k" varies 2 paths (stage.mask.top_k, stage.mask.mode).
}

ablation "other" {
  vary   = { "stage.mask.top_k" = [1] }
  paper  = { nothing = 1 } # not checked: the ablation is not selected
}
