experiment "module_sickr" {
  title = "uses the shared TF-IDF encoder"
}

module "shared" {
  source = "./shared.hcl"
}

stage "data" {
  uses  = "data.sts"
  tasks = ["sickr"]
  split = "test"
}

stage "eval" {
  uses          = "evaluate.sts"
  encoder       = module.shared.tfidf.encoder
  data          = stage.data.pairs
  align_uniform = false
}

expect "sickr" {
  row    = "TF-IDF"
  column = "sickr"
  value  = stage.eval.metrics.sickr
}

profile "ci" {}
