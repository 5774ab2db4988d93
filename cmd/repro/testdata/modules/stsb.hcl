experiment "module_stsb" {
  title = "uses the shared TF-IDF encoder"
}

module "shared" {
  source = "./shared.hcl"
}

stage "data" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "test"
}

stage "eval" {
  uses          = "evaluate.sts"
  encoder       = module.shared.tfidf.encoder
  data          = stage.data.pairs
  align_uniform = false
}

expect "stsb" {
  row    = "TF-IDF"
  column = "stsb"
  value  = stage.eval.metrics.stsb
}

profile "ci" {}
