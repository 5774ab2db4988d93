experiment "x" {
}

deviation "typo" {
  what     = "a"
  paper    = "b"
  ours     = "c"
  why      = "d"
  profiles = ["paper", "mnii"] # ERROR: Unknown profile; There is no profile "mnii". Did you mean "mini"?
}

deviation "none" {
  what     = "a"
  paper    = "b"
  ours     = "c"
  why      = "d"
  profiles = [] # ERROR: Invalid profiles; A deviation's profiles list names at least one profile
}

deviation "twice" {
  what     = "a"
  paper    = "b"
  ours     = "c"
  why      = "d"
  profiles = ["mini", "mini"] # ERROR: Invalid profiles; Profile "mini" is listed twice
}

deviation "string" {
  what     = "a"
  paper    = "b"
  ours     = "c"
  why      = "d"
  profiles = "paper" # ERROR: Invalid profiles; profiles must be a list of strings
}

deviation "standin" {
  what      = "a"
  paper     = "b"
  ours      = "c"
  why       = "d"
  stand_ins = ["bbc"] # ERROR: Invalid stand_ins; stand_ins names what the paper profile reads in the paper's place, and this deviation's profiles leave out "paper"
  profiles  = ["mini"]
}

profile "mini" {
  deviation "own" {
    what     = "a"
    paper    = "b"
    ours     = "c"
    why      = "d"
    profiles = ["ci"] # ERROR: Invalid profiles; A deviation inside profile "mini" holds for that profile (and those extending it); profiles = [...] belongs on a top-level deviation
  }
}

profile "ci" {
  extends = "mini"
}
