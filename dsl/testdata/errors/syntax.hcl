# Syntax errors stop the load before decoding: a broken parse tree would
# only produce confusing follow-up errors.
experiment "x" {
  title = "ok"
}

stage "a" {
  uses = = 1 # ERROR: Invalid expression
}
