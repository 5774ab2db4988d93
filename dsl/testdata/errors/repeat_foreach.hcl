# OPTIONS: profile=p
experiment "x" {
}

stage "docs" {
  uses = "data.documents"
}

stage "init" {
  uses = "init.random"
}

repeat "r" {
  for_each = ["a", "b"]
  rounds   = 2
  start    = { model = stage.init.model }
  stage "annotate" {
    uses      = "annotate.idc"
    model     = previous.model
    documents = stage.docs.documents
  }
  stage "train" {
    uses = "train.encoder"
    init = previous.model
    data = stage.annotate.pairs
  }
  next = { model = stage.train.model }
}

repeat "plain" {
  rounds = 1
  start  = { model = stage.init.model }
  stage "t" {
    uses = "train.encoder"
    init = previous.model
    data = repeat.r["a"].last.pairs # ERROR: Repeat "r"'s next has no value "pairs"
  }
  next = { model = stage.t.model }
}

repeat "numbers" {
  for_each = [1, 2] # ERROR: Element 0 of for_each is number: the elements of a list are the instance keys
  rounds   = 1
  next     = {}
}

repeat "c1" {
  for_each = { x = repeat.c2["y"].last.model } # ERROR: The for_each of repeat "c1" reads its own instances: c1 -> c2 -> c1
  rounds   = 1
  next     = {}
}

repeat "c2" {
  for_each = { y = repeat.c1["x"].last.model }
  rounds   = 1
  next     = {}
}

stage "o1" {
  uses  = "evaluate.sts"
  model = repeat.r["c"].last.model # ERROR: Repeat "r" has no instance "c"; its instances: r["a"], r["b"].
}

stage "o2" {
  uses  = "evaluate.sts"
  model = repeat.r.last.model # ERROR: Repeat "r" has for_each: name one instance, such as repeat.r["a"].last.NAME; its instances: r["a"], r["b"].
}

stage "o3" {
  uses  = "evaluate.sts"
  model = repeat.plain["a"].last.model # ERROR: Repeat "plain" has no for_each, so it has no instance "a"
}

stage "o4" {
  uses  = "evaluate.sts"
  model = stage.train.model # ERROR: refer to a round's result with repeat.r["KEY"].last.NAME
}

stage "o5" {
  uses  = "evaluate.sts"
  model = repeat.r["b"].round[3].model # ERROR: Repeat r["b"] has 2 rounds; round[3] does not exist.
}

profile "p" {
  repeat "r[\"z\"]" {
    rounds = 3 # ERROR: repeat.r["z"].rounds: repeat "r" has no instance "z"; its instances: r["a"], r["b"].
  }
  repeat "plain[\"a\"]" { # ERROR: Repeat "plain" has no for_each, so it has no instance "a"
    rounds = 3
  }
  stage "train[\"q\"]" {
    learning_rate = 1 # ERROR: stage "train" runs in repeat "r", which has no instance "q"
  }
  stage "t[\"a\"]" { # ERROR: Stage "t" has no for_each, so it has no instance "a"
    learning_rate = 1
  }
}
