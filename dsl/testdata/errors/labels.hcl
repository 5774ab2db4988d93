experiment "x" {
}

stage "c" "d" { # ERROR: Extraneous label for stage
  uses = "data.sentences"
}

stage { # ERROR: Missing name for stage
  uses = "data.sentences"
}
