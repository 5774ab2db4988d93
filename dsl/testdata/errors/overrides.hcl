# OPTIONS: profile=mini
# OPTIONS: ablation=k
experiment "x" {
}

variable "seed" {
  default = 1
}

stage "s" {
  uses = "data.sentences"
  path = "x"
}

stage "mask" {
  uses  = "text.mask"
  input = stage.s.sentences
}

profile "mini" {
  variables = { seed = "one", nope = 1 } # ERROR: there is no variable "nope"
  stage "mask" {
    ratio = "x" # ERROR: Parameter "ratio" of text.mask must be number
    topk  = 1 # ERROR: has no input or parameter named "topk". Did you mean "top_k"?
    uses  = "text.eda" # ERROR: a stage's type cannot be overridden
  }
  stage "mask2" { # ERROR: Profile "mini" changes stage "mask2", which is not declared. Did you mean "mask"?
    top_k = 1
  }
  repeat "r" { # ERROR: Profile "mini" changes repeat "r", which is not declared.
    rounds = 2
  }
}

profile "mini" { # ERROR: Duplicate profile "mini"
}

ablation "k" {
  vary = {
    "stage.mask.top_k" = [1, "two", 3] # ERROR: Parameter "top_k" of text.mask must be number
    "stage.mask.nope"  = [1] # ERROR: has no input or parameter named "nope"
    "stage.mask.mode"  = "np" # ERROR: must be varied over a non-empty list literal
    "mask.mode"        = ["np"] # ERROR: a path is stage.NAME.ATTRIBUTE, stage.NAME.resources.ATTRIBUTE, module.NAME.STAGE.ATTRIBUTE, repeat.NAME.rounds or var.NAME.
  }
  variant "a" {
    set = { "stage.mask.ratio" = "half" } # ERROR: Parameter "ratio" of text.mask must be number
  }
  variant "a" { # ERROR: Duplicate variant "a"
    set = { "stage.zzz.ratio" = 1 } # ERROR: there is no stage "zzz"
  }
  report = [stage.s.sentences] # ERROR: stage.s.sentences is of kind sentences
}

ablation "empty" { # ERROR: Empty ablation
}
