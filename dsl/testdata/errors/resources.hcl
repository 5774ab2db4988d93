# OPTIONS: profile=cluster
experiment "x" {
}

stage "s" {
  uses = "data.sentences"
  path = "x"
  resources {
    gpus = -1 # ERROR: gpus: -1 is negative
    cores = 2 # ERROR: A resources block has no argument "cores"
  }
}

stage "mask" {
  uses  = "text.mask"
  input = stage.s.sentences
  resources {
    memory = "lots" # ERROR: memory: "lots": want a positive number and a unit
  }
  resources { # ERROR: Only one resources block is allowed here.
    cpus = 2
  }
}

profile "cluster" {
  resources {
    time = "forever" # ERROR: time: "forever" is not a positive duration
    cpu  = 1 # ERROR: Did you mean "cpus"?
  }
  stage "mask" {
    resources {
      cpus = 0 # ERROR: cpus: 0; a stage needs at least one core
    }
  }
}
