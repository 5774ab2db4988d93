# stsb.hcl with its references held in local values (dsl/local_refs.go):
# the same graph and plan.
experiment "module_stsb" {
  title = "uses the shared TF-IDF encoder"
}

module "shared" {
  source = "./shared.hcl"
}

locals {
  encoders = { tfidf = module.shared.tfidf.encoder }
  scores   = stage.eval.metrics
}

stage "data" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "test"
}

stage "eval" {
  uses          = "evaluate.sts"
  encoder       = local.encoders.tfidf
  data          = stage.data.pairs
  align_uniform = false
}

expect "stsb" {
  row    = "TF-IDF"
  column = "stsb"
  value  = local.scores.stsb
}

profile "ci" {}
