experiment "x" {
}

variable "name" {
  default = "eval"
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

table "Counts" {
  columns = ["STS12", "STS13", "Avg"]

  row "short" {
    stage = stage.eval
    paper = [1, 2] # ERROR: Row "short" gives 2 paper values for its 3 columns (STS12, STS13, Avg)
  }

  row "unknown_key" {
    stage     = stage.eval
    tolerance = { STS14 = 1 } # ERROR: Row "unknown_key" has no column "STS14". Did you mean "STS12"?
  }

  row "unknown_column" {
    columns = ["Avgg"] # ERROR: Table "Counts" has no column "Avgg". Did you mean "Avg"?
    pending = "x"
  }

  row "outside_row" {
    stage   = stage.eval
    columns = ["Avg"]
    paper   = { STS12 = 1 } # ERROR: Column "STS12" is not one of the columns of row "outside_row": Avg.
  }

  row "literal" {
    stage = "eval" # ERROR: Not a stage; A row's stage names the stage whose metrics fill it
  }

  row "variable" {
    stage = var.name # ERROR: Not a stage
  }

  row "no_metrics" {
    stage = stage.corpus # ERROR: Stage "corpus" (data.sentences) has no metrics output (its outputs: sentences)
  }

  row "encoder" {
    stage = stage.train.model # ERROR: stage.train.model is of kind encoder; a row's stage is a stage with a metrics output
  }

  row "typo" {
    stage = stage.evl # ERROR: There is no stage "evl". Did you mean "eval"?
  }

  row "nothing" { # ERROR: Row "nothing" needs stage = stage.NAME (whose metrics its columns read), or pending = "why"
    paper = [1, 2, 3]
  }

  row "pending_all" {
    stage   = stage.eval
    pending = "why" # ERROR: Pending row with a stage
  }

  row "pending_some" { # ERROR: Row "pending_some" has no stage, so each of its cells needs a pending reason; "STS13", "Avg" have none.
    pending = ["x", null, null]
  }

  row "types" {
    stage = stage.eval
    paper = ["high", 1, 2] # ERROR: paper values are numbers; the value for column "STS12" is string.
  }

  row "negative" {
    stage     = stage.eval
    tolerance = -1 # ERROR: A tolerance is at least 0
  }

  row "profile" {
    stage   = stage.eval
    profile = "mni" # ERROR: There is no profile "mni". Did you mean "mini"?
  }

  row "attr" {
    stage = stage.eval
    valu  = 1 # ERROR: An argument named "valu" is not expected here.
  }

  row "short" { # ERROR: Duplicate row "short"
    stage = stage.eval
  }

  row "gense" {
    stage = stage.eval
    paper = [1, 2, 3]
  }
}

table "Counts" { # ERROR: Duplicate table "Counts"
  columns = ["a"]
}

table "Empty" { # ERROR: Empty table
  columns = ["a"]
}

table "number" {
  columns = 3 # ERROR: columns is a list of labels, such as ["STS12", "Avg"], or an object of label = metric key, such as { STS12 = "sts12", Avg = "avg" }; got number.

  row "r" {
    stage = stage.eval
  }
}

table "none" {
  columns = [] # ERROR: A table needs at least one column.

  row "r" {
    stage = stage.eval
  }
}

table "keys" {
  columns = { a = 1 } # ERROR: The metric key of column "a" must be a string or a list of strings (a path of keys); got number.

  row "r" {
    stage = stage.eval
  }
}

table "twice" {
  columns = ["a", "a"] # ERROR: Column "a" is listed twice.

  row "r" {
    stage = stage.eval
  }
}

table "missing" { # ERROR: The argument "columns" is required
  row "r" {
    stage = stage.eval
  }
}

expect "gense[STS12]" { # ERROR: An expectation named "gense[STS12]" was already declared
  value = stage.eval.metrics.avg
}

profile "mini" {}
