# docs.hcl's own module: the encoder it annotates with.
experiment "inner" {}

stage "model" {
  uses = "init.random"
}

deviation "random_init" {
  what   = "the annotating encoder"
  paper  = "a trained encoder"
  ours   = "a random one"
  why    = "a fixture"
  tables = ["Table 4"]
}
