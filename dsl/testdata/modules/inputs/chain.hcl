# A module with inputs: a fine-tuning chain that takes the encoder to start
# from (and, optionally, its corpus) and gives back the model and its scores.
experiment "chain" {
  title = "one fine-tuning chain"
}

variable "lr" {
  default = 3e-5
}

input "encoder" {
  kind        = "encoder"
  description = "the encoder fine-tuning starts from"
}

input "corpus" {
  kind    = "sentences"
  default = stage.wiki.sentences
}

stage "wiki" {
  uses = "data.sentences"
  path = "wiki.txt"
}

stage "mask" {
  uses  = "text.mask"
  input = input.corpus
}

stage "train" {
  uses          = "train.encoder"
  data          = stage.mask.pairs
  init          = input.encoder
  learning_rate = var.lr
}

stage "eval" {
  uses  = "evaluate.sts"
  model = stage.train.model
}

output "model" {
  value = stage.train.model
}

output "scores" {
  value = stage.eval.metrics
}

profile "ci" {
  stage "train" {
    max_steps = 10
  }
}
