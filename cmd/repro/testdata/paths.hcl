# Parameters that name files: a missing one is reported at its line by
# validate (and plan, and run) before anything starts.
experiment "paths" {
  title = "paths"
  table = "none"
}

variable "bert" {
  default = ""
}

stage "vectors" {
  uses = "encode.file"
  path = "no_such_vectors.jsonl"
}

stage "sts" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "test"
}

stage "bert" {
  uses          = "encode.pooling"
  hf_checkpoint = var.bert
}
