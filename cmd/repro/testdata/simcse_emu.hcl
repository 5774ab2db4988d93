# issue 42: a tiny unsupervised SimCSE training run on cpu and on the
# emulated device (--backend emu); the outputs' digests must agree.
experiment "simcse_emu" {
  title = "unsupervised SimCSE, tiny, cpu against emu"
}

deviation "local_data" {
  what      = "the inputs"
  paper     = "no paper (a fixture)"
  ours      = "tiny slices of the data directory's sets"
  why       = "a run small enough to repeat on two backends"
  stand_ins = ["wiki"]
}

stage "sts" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "dev"
}

stage "wiki" {
  uses  = "data.sentences"
  limit = 300
}

stage "unsup" {
  uses          = "train.simcse_unsup"
  data          = stage.wiki.sentences
  dev           = stage.sts.pairs
  layers        = 1
  hidden        = 16
  heads         = 2
  intermediate  = 32
  max_position  = 40
  vocab         = "train"
  vocab_size    = 300
  batch_size    = 8
  max_steps     = 12
  eval_every    = 4
  grad_clip     = 1
  pooling       = "cls"
  learning_rate = 1e-3
  seed          = 7
}
