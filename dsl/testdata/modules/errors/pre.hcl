variable "size" {
  default = 768
}

stage "corpus" {
  uses = "data.sentences"
  path = "x"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.corpus.sentences
  top_k = "many" # ERROR: Parameter "top_k" of text.mask must be number
}

stage "bert" {
  uses   = "train.encoder"
  data   = stage.mask.pairs
  hidden = var.size
}
