experiment "toy" {
  title = "A toy experiment"
  table = "Table 1"
}

variable "seed" {
  default = 42
}

stage "source" {
  uses  = "toy.source"
  value = 2
}

stage "scale" {
  uses   = "toy.scale"
  input  = stage.source.metrics
  factor = 10
  seed   = var.seed
}

stage "side" {
  uses  = "toy.source"
  value = 7
}

expect "main" {
  for_each = { x = 20.0 }
  row      = "toy"
  column   = each.key
  value    = stage.scale.metrics[each.key]
  paper    = each.value
}

expect "side" {
  value = stage.side.metrics.x
  row   = "side"
  paper = 7
}

deviation "side" {
  what   = "side value"
  paper  = "7"
  ours   = "7, from a second source"
  why    = "a toy"
  tables = ["Table 1"]
}

profile "mini" {
  stage "scale" {
    factor = 3
  }
  deviation "factor" {
    what  = "scale factor"
    paper = "10"
    ours  = "3"
    why   = "small"
  }
}

ablation "factor" {
  vary   = { "stage.scale.factor" = [1, 10] }
  report = [stage.scale.metrics.x]
  paper  = { "scale.factor=10" = [20] }
}
