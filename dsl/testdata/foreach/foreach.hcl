# longhand.hcl with for_each: the same stages, the same keys.
experiment "fe" {
  title = "for_each"
  seed  = var.seed
}

variable "seed" {
  default = 42
}

locals {
  corpora = {
    wiki = { path = "wiki.txt", limit = null }
    nli  = { path = "nli.txt", limit = 500 }
  }
  lr = { wiki = 3e-5, nli = 5e-5 }
}

stage "corpus" {
  for_each = local.corpora
  uses     = "data.sentences"
  path     = each.value.path
  limit    = each.value.limit
}

stage "mask" {
  for_each = ["wiki", "nli"]
  uses     = "text.mask"
  input    = stage.corpus[each.key].sentences
  top_k    = 3
}

stage "train" {
  for_each      = local.lr
  uses          = "train.encoder"
  data          = stage.mask[each.key].pairs
  learning_rate = each.value
  seed          = each.key == "nli" ? 7 : var.seed
}

stage "eval" {
  for_each = stage.train
  uses     = "evaluate.sts"
  model    = each.value.model
}

expect "avg" {
  for_each = { wiki = 76.0, nli = 80.0 }
  value    = stage.eval[each.key].metrics.avg
  paper    = each.value
}

profile "mini" {
  stage "train" {
    layers = 2
  }
  stage "train[\"nli\"]" {
    max_steps = 10
  }
}
