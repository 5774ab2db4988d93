experiment "x" {
}

stage "corpus" {
  uses = "data.sentences"
  path = "x"
}

profile "mini" {
  extends = "cii" # ERROR: Profile "mini" extends "cii", which is not declared. Did you mean "ci"?
}

profile "ci" {
  extends = 3 # ERROR: `extends` names the profile this one starts from
}

profile "a" {
  extends = "b" # ERROR: Profiles extend each other in a cycle: a -> b -> a.
}

profile "b" {
  extends = "a"
}

profile "self" {
  extends = "self" # ERROR: Profiles extend each other in a cycle: self -> self.
}
