# A module parent.hcl declares and never reads: its deviation is not parent's.
experiment "unused_module" {
  title = "unused"
}

stage "corpus" {
  uses   = "data.sts_sentences"
  tasks  = ["sickr"]
  splits = ["test"]
}

deviation "never" {
  what  = "nothing parent.hcl runs"
  paper = "x"
  ours  = "y"
  why   = "z"
}
