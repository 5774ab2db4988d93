# The same as shared.hcl, one block per stage.
experiment "shared" {}

locals {
  small = { top_k = 1, mode = "tfidf" }
}

stage "corpus" {
  uses = "data.sentences"
  path = "x"
}

stage "a" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}

stage "b" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}

stage "m" {
  for_each = { x = 0.1, y = 0.2, z = 0.3 }
  uses     = "text.mask"
  input    = stage.corpus.sentences
  ratio    = each.value
}

profile "mini" {
  stage "a" {
    params = local.small
    ratio  = 0.5
  }
  stage "b" {
    params = local.small
    ratio  = 0.5
    top_k  = 5
  }
  stage "m" {
    params = local.small
    ratio  = 0.5
  }
  stage "m[\"x\"]" { top_k = 2 }
  stage "m[\"y\"]" { top_k = 2 }
}

profile "ci" {
  extends = "mini"
  stage "a" { mode = "rake" }
  stage "m[\"z\"]" { mode = "rake" }
}
