# A shared profile stage block: one body for several stages and instances.
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
  # b's own block wins over the shared one, though written first.
  stage "b" { top_k = 5 }
  stage "a" "b" "m" {
    params = local.small
    ratio  = 0.5
  }
  stage "m[\"x\"]" "m[\"y\"]" { top_k = 2 }
}

profile "ci" {
  extends = "mini"
  stage "a" "m[\"z\"]" { mode = "rake" }
}
