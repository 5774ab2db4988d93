# Module deviations reach the including file's report: docs.hcl used
# twice (a and b, whose `count` changes one deviation's text), docs.hcl's
# own module inner, and a module no stage reaches.
experiment "parent" {}

deviation "own" {
  what   = "the training objective"
  paper  = "InfoNCE"
  ours   = "InfoNCE with a smaller batch"
  why    = "CPU"
  tables = ["Table 1"]
}

module "a" {
  source = "./docs.hcl"
}

module "b" {
  source = "./docs.hcl"
  count  = 200
}

module "unused" {
  source = "./unused.hcl"
}

stage "train_a" {
  uses = "train.encoder"
  data = module.a.pairs.pairs
}

stage "train_b" {
  uses = "train.encoder"
  data = module.b.pairs.pairs
}

profile "mini" {}

profile "ci" {}
