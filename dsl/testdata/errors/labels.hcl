experiment "x" {
}

stage "c" "d" { # ERROR: Extraneous label for stage
  uses = "data.sentences"
}

stage { # ERROR: Missing name for stage
  uses = "data.sentences"
}

profile "/../../x" { # ERROR: "/../../x" is not a valid name
}

ablation "../up" { # ERROR: Invalid ablation name
  vary = { "stage.c.limit" = [1, 2] }
}
