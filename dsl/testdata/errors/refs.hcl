experiment "x" {
  seed = "abc" # ERROR: Invalid experiment seed
}

variable "lr" {
  default = 0.1
}

stage "corpus" {
  uses = "data.sentences"
  path = "wiki.txt"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.corpsu.sentences # ERROR: There is no stage "corpsu". Did you mean "corpus"?
  top_k = "three" # ERROR: Parameter "top_k" of text.mask must be number: a number is required.
}

stage "mask2" {
  uses  = "text.mask"
  input = stage.corpus.sentence # ERROR: Stage "corpus" (data.sentences) has no output "sentence". Did you mean "sentences"? Its outputs: sentences.
  top_k = 2.5 # ERROR: must be a whole number; got 2.5
  mode  = stage.corpus.sentences # ERROR: A parameter cannot refer to stage outputs
}

stage "train" { # ERROR: Stage "train" (train.encoder) needs input "data" (kind pairs)
  uses          = "train.encoder"
  init          = stage.mask.pairs # ERROR: Input "init" of train.encoder takes artifacts of kind encoder, but stage.mask.pairs is of kind pairs.
  learning_rate = var.rl # ERROR: There is no variable "rl". Did you mean "lr"?
  batch_size    = local.bs # ERROR: There is no local value "bs"
  tasks         = "stsb" # ERROR: must be list of string
}

stage "eval" {
  uses  = "evaluate.sts"
  model = "stage.train.model" # ERROR: An input takes a reference to another stage's output
}

stage "eval2" {
  uses  = "evaluate.sts"
  model = stage.train.model.weights # ERROR: An input takes a whole artifact; remove .weights.
}

stage "eval3" {
  uses  = "evaluate.sts"
  model = stage.train # ERROR: Name one of the outputs of stage "train" (train.encoder): model.
}

stage "eval4" {
  uses  = "evaluate.sts"
  model = model.train # ERROR: "model" is none of these
}

stage "nopath" { # ERROR: Stage "nopath" (data.sentences) needs parameter "path" (string).
  uses  = "data.sentences"
  limit = null
}

stage "init" {
  uses = "init.random"
  dim  = -1 # ERROR: must be a whole number of at least 0
  seed = 1.5 # ERROR: The seed must be a whole number; got 1.5.
}

stage "later" {
  uses  = "text.mask"
  input = stage.unknowntype.out
}

stage "unknowntype" {
  uses = "no.such" # ERROR: Unknown stage type
}

expect "e1" {
  value = stage.train.model # ERROR: stage.train.model is of kind encoder; a table cell reads a key of a metrics output
  paper = 1
}

expect "e2" {
  value = stage.eval4.metrics # ERROR: Missing metric key
  paper = "n/a" # ERROR: paper must be a number.
}

expect "e3" {
  value     = stage.eval4.metrics.avg
  paper     = 76
  tolerance = -1 # ERROR: A tolerance is at least 0.
  profile   = "mni" # ERROR: There is no profile "mni".
}

expect "e3" { # ERROR: Duplicate expect block "e3"
  value = stage.eval4.metrics.avg
  paper = 1
}

expect "e4" {
  value           = stage.eval4.metrics.avg
  lower_is_better = "sometimes" # ERROR: lower_is_better must be true or false.
}
