experiment "x" {
}

stage "docs" { # ERROR: Undeclared stand-in; Stage "docs" reads the data directory's "bbc" in the paper profile
  uses  = "data.documents"
  split = "bbc"
}

deviation "placeholder" {
  what   = "placeholder"
  paper  = "[X1]"
  ours   = "[X]"
  why    = "one placeholder"
  tables = ["Table 2"]
  colour = "red" # ERROR: Unsupported argument
}

deviation "no_why" { # ERROR: Missing required argument; The argument "why" is required
  what  = "a"
  paper = "b"
  ours  = "c"
}

deviation "empty" {
  what  = "a"
  paper = "b"
  ours  = "c"
  why   = " " # ERROR: Invalid why
}

deviation "tables" {
  what   = "a"
  paper  = "b"
  ours   = "c"
  why    = "d"
  tables = "Table 2" # ERROR: Invalid tables; tables must be a list of strings
}

deviation "standins" {
  what      = "a"
  paper     = "b"
  ours      = "c"
  why       = "d"
  stand_ins = ["sts12"] # ERROR: Invalid stand_ins; "sts12" is not a stand-in
}

deviation "placeholder" { # ERROR: Duplicate deviation "placeholder"
  what  = "a"
  paper = "b"
  ours  = "c"
  why   = "d"
}

deviation "bad name!" { # ERROR: Invalid deviation name
  what  = "a"
  paper = "b"
  ours  = "c"
  why   = "d"
}

profile "mini" {
  deviation "placeholder" { # ERROR: Duplicate deviation "placeholder"
    what  = "a"
    paper = "b"
    ours  = "c"
    why   = "d"
  }
}
