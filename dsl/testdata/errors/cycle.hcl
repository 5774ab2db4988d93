experiment "x" {
}

stage "init" {
  uses = "init.random"
}

stage "a" {
  uses = "train.encoder"
  data = stage.b.pairs
  init = stage.c.model
}

stage "b" {
  uses  = "text.mask"
  input = stage.s.sentences
}

stage "c" {
  uses = "train.encoder"
  data = stage.b.pairs
  init = stage.a.model # ERROR: Dependency cycle; The stages depend on each other in a loop: c -> a -> c
}

stage "s" {
  uses = "data.sentences"
  path = "x"
}

stage "self" {
  uses = "train.encoder"
  data = stage.b.pairs
  init = stage.self.model # ERROR: self -> self
}
