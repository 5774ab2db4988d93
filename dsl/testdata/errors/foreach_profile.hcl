# OPTIONS: profile=mini
# OPTIONS: ablation=k
experiment "x" {
}

stage "corpus" {
  uses = "data.sentences"
  path = "x"
}

stage "mask" {
  for_each = { a = 1, b = 2 }
  uses     = "text.mask"
  input    = stage.corpus.sentences
  top_k    = each.value
}

profile "mini" {
  stage "mask" {
    for_each = { a = 1, c = 2 }
    ratio    = each.key == "a" ? 0.1 : 0.2
  }
  stage "mask[\"b\"]" {
    top_k = 1 # ERROR: stage.mask["b"].top_k: stage "mask" has no instance "b"; its instances: mask["a"], mask["c"].
  }
  stage "mask[\"a\"]" {
    for_each = ["a"] # ERROR: for_each belongs to the whole stage
  }
  stage "corpus" {
    for_each = ["a"] # ERROR: stage "corpus" has no for_each; only a stage declared with for_each can have it changed
  }
  stage "corpus[\"a\"]" { # ERROR: Stage "corpus" has no for_each, so it has no instance "a"
    limit = 1
  }
  stage "nope[\"a\"]" { # ERROR: Profile "mini" changes stage "nope", which is not declared.
    limit = 1
  }
}

ablation "k" {
  vary = {
    "stage.mask[\"a\"].top_k" = [1, 2]
    "stage.mask[\"a\"]"       = [1] # ERROR: the path of one instance is stage.NAME["KEY"].ATTRIBUTE
    "stage.corpus[\"a\"].limit" = [1] # ERROR: stage "corpus" has no for_each, so it has no instance "a"
    stage.mask["a"].nope        = [1] # ERROR: has no input or parameter named "nope"
    stage.mask[0].top_k         = [1] # ERROR: A path is written stage.NAME.ATTRIBUTE, stage.NAME["KEY"].ATTRIBUTE
  }
  variant "v" {
    set = { "stage.mask[\"z\"].ratio" = 0.3 } # ERROR: stage "mask" has no instance "z"
  }
}
