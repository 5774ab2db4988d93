# The cells of table_foreach.hcl, written as expect blocks.
experiment "rows" {
  title = "Rows from keys"
}

variable "released_a" {
  default = ""
}

variable "released_b" {
  default = ""
}

variable "askubuntu" {
  default = ""
}

locals {
  sts = { STS12 = "sts12", "STS-B" = "stsb", Avg = "avg" }
  models = {
    b = { title = "Model B", paper = [70.1, 80.2, 75.3], released = var.released_b }
    a = { title = "Model A", paper = { STS12 = 60.1, Avg = 65.3 }, released = var.released_a }
  }
  paper_b = { STS12 = 70.1, "STS-B" = 80.2, Avg = 75.3 }
  paper_a = { STS12 = 60.1, "STS-B" = null, Avg = 65.3 }
}

stage "corpus" {
  uses = "data.sentences"
  path = "wiki.txt"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}

stage "train" {
  for_each = ["b", "a"]
  uses     = "train.encoder"
  data     = stage.mask.pairs
}

stage "eval" {
  for_each = stage.train
  uses     = "evaluate.sts"
  model    = each.value.model
}

stage "released" {
  for_each = { for k, m in local.models : k => m if m.released != "" }
  uses     = "train.encoder"
  data     = stage.mask.pairs
}

stage "eval_released" {
  for_each = stage.released
  uses     = "evaluate.sts"
  model    = each.value.model
}

profile "ci" {}

expect "b" {
  for_each = local.paper_b
  row      = "Model B"
  column   = each.key
  value    = stage.eval["b"].metrics[local.sts[each.key]]
  paper    = each.value
}

expect "a" {
  for_each = local.paper_a
  row      = "Model A"
  column   = each.key
  value    = stage.eval["a"].metrics[local.sts[each.key]]
  paper    = each.value
}

expect "released_b" {
  for_each  = var.released_b == "" ? {} : local.paper_b
  row       = "Model B (released)"
  column    = each.key
  value     = stage.eval_released["b"].metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = each.key == "Avg" ? 0.5 : 1.0
}

expect "released_a" {
  for_each  = var.released_a == "" ? {} : local.paper_a
  row       = "Model A (released)"
  column    = each.key
  value     = stage.eval_released["a"].metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = each.key == "Avg" ? 0.5 : 1.0
}

expect "each_b" {
  row     = "b"
  column  = "Avg"
  value   = stage.eval["b"].metrics.avg
  profile = "ci"
}

expect "each_a" {
  row     = "a"
  column  = "Avg"
  value   = stage.eval["a"].metrics.avg
  profile = "ci"
}

expect "grid[x]" {
  for_each = { STS12 = "sts12", Avg = "avg" }
  row      = "x"
  column   = each.key
  value    = stage.eval["a"].metrics[each.value]
}

expect "grid[y]" {
  for_each = { STS12 = "sts12", Avg = "avg" }
  row      = "y"
  column   = each.key
  value    = stage.eval["a"].metrics[each.value]
}

expect "t3_b" {
  row    = "Model B (Table 3)"
  column = "MAP"
  value  = stage.eval["b"].metrics.map
  paper  = var.askubuntu != "" ? 52.78 : null
}

expect "t3_a" {
  row    = "Model A (Table 3)"
  column = "MAP"
  value  = stage.eval["a"].metrics.map
  paper  = var.askubuntu != "" ? 53.95 : null
}

expect "t3_large" {
  for_each = {
    "Model B, large (Table 3)" = 55.10
    "Model A, large (Table 3)" = 54.78
  }
  row     = each.key
  column  = "MAP"
  paper   = each.value
  pending = "not run here"
}

expect "t3_released" {
  for_each = var.released_a == "" ? {} : { a = 53.95 }
  row      = "Model A (released; Table 3)"
  column   = "MAP"
  value    = stage.eval_released[each.key].metrics.map
  paper    = each.value
}
