# The Slurm tests' experiment: a quick stage, a slow one (-var seconds=N)
# and one that waits for it.
experiment "slurmtest" {
  title = "Slurm test"
  table = "chain"
}

variable "seed" {
  default = 42
}

variable "seconds" {
  default = 1
}

stage "quick" {
  uses    = "test.sleep"
  seconds = 0
  text    = "quick"
}

stage "slow" {
  uses    = "test.sleep"
  seconds = var.seconds
  text    = "slow"
}

stage "after" {
  uses    = "test.sleep"
  seconds = 0
  text    = "after"
  after   = stage.slow.metrics
}

expect "chain" {
  row    = "after"
  column = "chain"
  value  = stage.after.metrics.chain
  paper  = 2
}

expect "seconds" {
  row    = "slow"
  column = "seconds"
  value  = stage.slow.metrics.seconds
}
