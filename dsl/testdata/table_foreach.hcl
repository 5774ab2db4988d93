# Rows from keys and rows under a condition (table.go): for_each on a row
# block, `name`, `enabled`. table_foreach_expects.hcl states the same cells
# as expect blocks; TestTableForEachLowersToExpects checks that both give
# identical cells, with and without the variables.
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
  # Each model: its title, the paper's row, and the -var of its released
  # checkpoint.
  models = {
    b = { title = "Model B", paper = [70.1, 80.2, 75.3], released = var.released_b }
    a = { title = "Model A", paper = { STS12 = 60.1, Avg = 65.3 }, released = var.released_a }
  }
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

table "STS" {
  columns = local.sts

  # Ours, one row per model, in the order the object writes them.
  row "ours" {
    for_each = local.models
    name     = each.key
    title    = each.value.title
    stage    = stage.eval[each.key]
    paper    = each.value.paper
  }

  # The released models', each only when its variable is set.
  row "released" {
    for_each  = local.models
    enabled   = each.value.released != ""
    name      = "released_${each.key}"
    title     = "${each.value.title} (released)"
    stage     = stage.eval_released[each.key]
    paper     = each.value.paper
    tolerance = { Avg = 0.5 }
  }

  # for_each over a stage's instances; the row reads each.value.
  row "each" {
    for_each = stage.eval
    name     = "each_${each.key}"
    columns  = ["Avg"]
    stage    = each.value
    profile  = "ci"
  }

  # Default names: LABEL[KEY] (several columns: LABEL[KEY][COLUMN]).
  row "grid" {
    for_each = toset(["y", "x"])
    columns  = ["STS12", "Avg"]
    stage    = stage.eval["a"].metrics
  }
}

table "Table 3" {
  columns = { "MAP" = "map" }

  # A condition on the paper value, a key per row.
  row "t3" {
    for_each = { b = 52.78, a = 53.95 }
    name     = "t3_${each.key}"
    title    = "${local.models[each.key].title} (Table 3)"
    stage    = stage.eval[each.key]
    paper    = var.askubuntu != "" ? each.value : null
  }

  # One column and no name: cells LABEL[KEY], keyed by the title.
  row "t3_large" {
    for_each = {
      "Model B, large (Table 3)" = 55.10
      "Model A, large (Table 3)" = 54.78
    }
    title   = each.key
    paper   = each.value
    pending = "not run here"
  }

  # A conditional for_each: no row at all while the variable is unset.
  row "t3_released" {
    for_each = var.released_a == "" ? {} : { a = 53.95 }
    title    = "Model A (released; Table 3)"
    stage    = stage.eval_released[each.key]
    paper    = each.value
  }
}
