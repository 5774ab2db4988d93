experiment "x" {
}

variable "released" {
  default = ""
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
  for_each = ["a", "b"]
  uses     = "train.encoder"
  data     = stage.mask.pairs
}

stage "eval" {
  for_each = stage.train
  uses     = "evaluate.sts"
  model    = each.value.model
}

table "Rows" {
  columns = ["STS12", "Avg"]

  row "number" {
    for_each = 3 # ERROR: Invalid for_each; for_each takes a list or set of strings
    stage    = stage.eval["a"]
  }

  row "output" {
    for_each = stage.train["a"].model # ERROR: for_each cannot refer to stage outputs
    stage    = stage.eval["a"]
  }

  row "plain" {
    name  = "other" # ERROR: a row without for_each is named by its label, here "plain"
    stage = stage.eval["a"]
  }

  row "empty_name" {
    for_each = ["a"]
    name     = "" # ERROR: In row empty_name[a]: A row's name names its cells (NAME[COLUMN]): a non-empty string, such as "released_${each.key}"; got an empty string.
    stage    = stage.eval[each.key]
  }

  row "list_name" {
    for_each = ["a"]
    name     = [each.key] # ERROR: Invalid row name; In row list_name[a]: A row's name names its cells
    stage    = stage.eval[each.key]
  }

  row "same" {
    for_each = ["a", "b"]
    name     = "same_row" # ERROR: Duplicate row name; In row same[b]: This row is named "same_row", as is the row at
    stage    = stage.eval[each.key]
  }

  row "plain_twin" {
    for_each = ["a"]
    name     = "plain" # ERROR: In row plain_twin[a]: This row is named "plain", as is the row at
    stage    = stage.eval[each.key]
  }

  row "maybe" {
    enabled = "maybe" # ERROR: Invalid enabled; enabled is true or false, such as var.released != "" (the row is there only when the variable is set); got string.
    stage   = stage.eval["a"]
  }

  row "null_enabled" {
    enabled = null # ERROR: Invalid enabled; enabled is true or false
    stage   = stage.eval["a"]
  }

  row "no_each" {
    title = each.key # ERROR: each outside for_each
    stage = stage.eval["a"]
  }

  row "missing_instance" {
    for_each = ["a", "c"]
    stage    = stage.eval[each.key] # ERROR: In row missing_instance[c]: Stage "eval" has no instance "c"
  }

  row "each_number" {
    for_each = { a = 1 }
    stage    = each.value # ERROR: In row each_number[a]: each.value is a number, not a stage output
  }

  row "each_encoder" {
    for_each = stage.train
    stage    = each.value # ERROR: In row each_encoder[a]: each.value holds a stage's outputs (model), none of them metrics
  }

  row "short" {
    for_each = { a = [1], b = [1, 2] }
    stage    = stage.eval[each.key]
    paper    = each.value # ERROR: In row short[a]: Row "short[a]" gives 1 paper value for its 2 columns
  }

  row "off" {
    for_each = ["a"]
    enabled  = false
    stage    = stage.nowhere
  }
}
