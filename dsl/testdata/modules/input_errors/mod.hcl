experiment "mod" {
}

variable "lr" {
  default = 3e-5
}

input "encoder" {
  kind = "encoder"
}

input "data" {
  kind    = "pairs"
  default = stage.mask.pairs
}

input "bad" {
  kind = "encodr" # ERROR: No stage type takes or gives artifacts of kind "encodr". Did you mean "encoder"?
}

input "lr" { # ERROR: "lr" already names the variable at
  kind = "encoder"
}

input "wrong_default" {
  kind    = "encoder"
  default = stage.mask.pairs # ERROR: Input "wrong_default" takes artifacts of kind encoder, but its default stage.mask.pairs is of kind pairs.
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
  uses   = "train.encoder"
  data   = input.data
  init   = input.encoder # ERROR: The stages depend on each other in a loop: module.w.train -> t -> module.w.train
  hidden = input.encoder # ERROR: A parameter cannot refer to stage outputs
}

stage "other" {
  uses = "train.encoder"
  data = input.dat # ERROR: There is no input "dat". Did you mean "data"?
  init = input.wrong_default
}

stage "third" {
  uses = "train.encoder"
  data = input.encoder # ERROR: Input "data" of train.encoder takes artifacts of kind pairs, but input.encoder is of kind encoder.
}

output "train" { # ERROR: "train" already names the stage at
  value = stage.mask.pairs
}

output "model" {
  value = stage.train.model
}

output "broken" {
  value = stage.train.modle # ERROR: Stage "train" (train.encoder) has no output "modle".
}
