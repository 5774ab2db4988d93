# Two TF-IDF encoders from one module file; its deviations reach this
# file's reports, each with its instances and file.
experiment "module_deviations" {
  title = "TF-IDF encoders from a module"
  table = "STS-B test"
}

deviation "own" {
  what   = "the evaluation"
  paper  = "SentEval"
  ours   = "evaluate.sts"
  why    = "the experiment's own deviation"
  tables = ["Table 1"]
}

module "small" {
  source   = "./tfidf.hcl"
  features = 500
}

module "large" {
  source = "./tfidf.hcl"
}

module "unused" {
  source = "./unused.hcl"
}

stage "data" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "test"
}

stage "eval" {
  for_each      = { small = module.small.tfidf.encoder, large = module.large.tfidf.encoder }
  uses          = "evaluate.sts"
  encoder       = each.value
  data          = stage.data.pairs
  align_uniform = false
}

expect "small" {
  row    = "TF-IDF 500"
  column = "stsb"
  value  = stage.eval["small"].metrics.stsb
}

expect "large" {
  row    = "TF-IDF 2000"
  column = "stsb"
  value  = stage.eval["large"].metrics.stsb
}

profile "ci" {}
