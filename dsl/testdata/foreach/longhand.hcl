# Two corpora, each masked, trained on and evaluated, written out block by
# block; foreach.hcl is the same pipeline with for_each. TestForEachLonghand
# loads both and compares the (type, identity) pairs of their stages.
experiment "fe" {
  title = "for_each"
  seed  = var.seed
}

variable "seed" {
  default = 42
}

stage "corpus_wiki" {
  uses = "data.sentences"
  path = "wiki.txt"
}

stage "corpus_nli" {
  uses  = "data.sentences"
  path  = "nli.txt"
  limit = 500
}

stage "mask_wiki" {
  uses  = "text.mask"
  input = stage.corpus_wiki.sentences
  top_k = 3
}

stage "mask_nli" {
  uses  = "text.mask"
  input = stage.corpus_nli.sentences
  top_k = 3
}

stage "train_wiki" {
  uses          = "train.encoder"
  data          = stage.mask_wiki.pairs
  learning_rate = 3e-5
}

stage "train_nli" {
  uses          = "train.encoder"
  data          = stage.mask_nli.pairs
  learning_rate = 5e-5
  seed          = 7
}

stage "eval_wiki" {
  uses  = "evaluate.sts"
  model = stage.train_wiki.model
}

stage "eval_nli" {
  uses  = "evaluate.sts"
  model = stage.train_nli.model
}

expect "wiki" {
  value = stage.eval_wiki.metrics.avg
  paper = 76.0
}

expect "nli" {
  value = stage.eval_nli.metrics.avg
  paper = 80.0
}

profile "mini" {
  stage "train_wiki" {
    layers = 2
  }
  stage "train_nli" {
    layers    = 2
    max_steps = 10
  }
}
