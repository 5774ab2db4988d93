# OPTIONS: profile=mini
experiment "x" {
}

stage "corpus" {
  uses = "data.sentences"
  path = "x"
}

stage "a" {
  uses  = "text.mask"
  input = stage.corpus.sentences
}

stage "m" {
  for_each = ["x", "y"]
  uses     = "text.mask"
  input    = stage.corpus.sentences
}

profile "mini" {
  stage "a" "a" { # ERROR: Stage "a" is named twice in this block
    top_k = 1
  }
  stage "m" "nope" { # ERROR: Profile "mini" changes stage "nope", which is not declared.
    top_k = 2
  }
  stage "a" "corpus[\"q\"]" { # ERROR: Stage "corpus" has no for_each, so it has no instance "q"
    ratio = 0.1
  }
  stage "m" "a" {
    ratio = 0.2 # ERROR: Profile "mini" sets stage.a.ratio in two shared stage blocks
    mode  = "rake"
  }
  stage "m[\"x\"]" "m[\"w\"]" {
    mode = "tfidf" # ERROR: stage "m" has no instance "w"
  }
  stage "a" "m" {
    nope = 1 # ERROR: has no input or parameter named "nope"
  }
}
