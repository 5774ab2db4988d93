# A module no stage of parent.hcl reaches: its deviation is not parent's.
experiment "unused" {}

stage "sentences" {
  uses = "data.sentences"
  path = "s.txt"
}

deviation "never" {
  what  = "nothing parent runs"
  paper = "x"
  ours  = "y"
  why   = "z"
}
