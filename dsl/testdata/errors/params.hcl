experiment "x" {
}

locals {
  recipe = {
    path  = "a.txt"
    limt  = 10 # ERROR: Stage type data.sentences has no input or parameter named "limt". Did you mean "limit"?
    uses  = "data.sts" # ERROR: `uses` belongs in the stage block itself, not in `params`.
  }
  five = 5
}

stage "spread" {
  uses   = "data.sentences"
  params = local.recipe
}

stage "number" {
  uses   = "data.sentences"
  params = [{ path = "b.txt" }, local.five] # ERROR: `params` must be an object of parameters
}

stage "missing" {
  uses   = "data.sentences"
  path   = "c.txt"
  params = local.recip # ERROR: `params` reads local.recip, which no locals block declares.
}

profile "mini" {
  stage "spread" {
    params = { limit = 3, limit = 4 } # ERROR: params.limit is set twice.
  }
}
