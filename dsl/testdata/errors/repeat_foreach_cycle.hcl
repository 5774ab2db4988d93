# Two instances of one repeat whose start values read each other: a cycle
# through instances, reported at the references that close it.
experiment "x" {
}

stage "docs" {
  uses = "data.documents"
}

stage "init" {
  uses = "init.random"
}

repeat "s" {
  for_each = ["a", "b"]
  rounds   = 1
  start    = { model = repeat.s[each.key == "a" ? "b" : "a"].last.model }
  stage "u" {
    uses = "annotate.idc"
    model = previous.model
    documents = stage.docs.documents
  }
  stage "v" {
    uses = "train.encoder"
    init = previous.model # ERROR: The stages depend on each other in a loop: s["a"][1].v -> s["b"][1].u
    data = stage.u.pairs # ERROR: The stages depend on each other in a loop: s["a"][1].v -> s["b"][1].u
  }
  next = { model = stage.v.model }
}
