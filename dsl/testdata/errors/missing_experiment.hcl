stage "s" { # ERROR: Missing experiment block
  uses = "data.sentences"
  path = "x"
}
