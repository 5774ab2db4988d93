experiment "x" {
  title = "blocks"
  authors = "me" # ERROR: Unsupported argument
}

experiment "y" { # ERROR: Duplicate experiment block
}

stag "typo" { # ERROR: Unsupported block type; Blocks of type "stag" are not expected here. Did you mean "stage"?
}

top_level = 1 # ERROR: Unsupported argument

stage "corpus" {
  uses = "data.sentence" # ERROR: No stage type "data.sentence" is registered. Did you mean "data.sentences"?
}

stage "corpus2" {
  uses  = "data.sentences"
  path  = "a.txt"
  limt  = 10 # ERROR: Stage type data.sentences has no input or parameter named "limt". Did you mean "limit"? Valid names: path, limit (and seed, params).
}

stage "corpus2" { # ERROR: Duplicate stage "corpus2"
  uses = "data.sentences"
}

stage "nouses" { # ERROR: Missing required argument
  path = "x"
}

stage "dynamic" {
  uses = "data.${"sentences"}"
  path = "x"
}

stage "computed" {
  uses = var.kind # ERROR: `uses` must be a literal string
}

stage "bad name" { # ERROR: Invalid stage name
  uses = "data.sentences"
}

stage "nested" {
  uses = "data.sentences"
  path = "x"
  inner { # ERROR: Unexpected "inner" block
  }
}

variable "v" {
  default = 1
  typo    = 2 # ERROR: Unsupported argument
}

variable "v" { # ERROR: Duplicate variable "v"
}

variable "kind" {
  default = "data.sentences"
}

stage "v" {
  uses = "data.sentences"
  path = "x"
}

repeat "v" { # ERROR: Duplicate name; "v" already names the stage
  rounds = 1
  next   = {}
}

locals {
  a = 1
}

locals {
  a = 2 # ERROR: Duplicate local value "a"
}
