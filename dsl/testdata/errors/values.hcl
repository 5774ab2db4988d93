experiment "x" {
}

variable "needed" { # ERROR: Variable "needed" has no default
}

variable "typed" {
  type    = number
  default = "abc" # ERROR: Variable "typed" must be number
}

variable "badtype" {
  type    = numbr # ERROR: The keyword "numbr" is not a valid type specification.
  default = 1
}

variable "dynamic" {
  default = var.typed # ERROR: Variables not allowed
}

locals {
  a = local.b + 1 # ERROR: local.a depends on itself
  b = local.a # ERROR: local.b depends on itself
  c = var.nothere # ERROR: There is no variable "nothere".
  d = upper(1, 2) # ERROR: Function "upper" expects only 1 argument(s)
  e = stage.x.y # ERROR: There is no stage "x"
}

stage "s" {
  uses  = "data.sentences"
  path  = 1 + "x" # ERROR: Invalid operand
  limit = local.d
}
