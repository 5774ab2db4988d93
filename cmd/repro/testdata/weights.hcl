# A paper-style file whose training stages need pretrained weights that the
# run does not give: `repro run` refuses it before any stage starts, naming
# every stage that cannot work, one reason stated once.
experiment "weights" {
  title = "refusal before start"
  table = "none"
}

variable "t5" {
  default = ""
}

variable "bert" {
  default = ""
}

stage "nli" {
  uses = "data.nli"
}

stage "instances" {
  uses       = "text.seq2seq"
  data       = stage.nli.triplets
  source     = "Write two sentences that are entailment. Sentence 1: \"[X1]\" Sentence 2:"
  target     = "[X2]"
  hypothesis = "positive"
}

stage "gen" {
  uses          = "train.seq2seq"
  data          = stage.instances.instances
  hf_checkpoint = var.t5
  from_scratch  = false
}

stage "embed" {
  uses          = "train.t5_contrastive"
  data          = stage.nli.triplets
  hf_checkpoint = var.t5
  from_scratch  = false
}

# Continues from embed: its model comes from the connected encoder.
stage "embed_more" {
  uses    = "train.t5_contrastive"
  data    = stage.nli.triplets
  encoder = stage.embed.model
}

# No BERT given (a missing directory is a load error at its line: see
# paths.hcl).
stage "bert" {
  uses          = "train.simcse_sup"
  data          = stage.nli.triplets
  hf_checkpoint = var.bert
  from_scratch  = false
}

# The data directory's NLI stands in for SimCSE's: this file tests the
# weights' refusal alone.
deviation "nli" {
  what      = "NLI triplets"
  paper     = "SimCSE's nli_for_simcse.csv"
  ours      = "the data directory's dev/test-derived triplets"
  why       = "a test of the weights' refusal"
  stand_ins = ["nli"]
}
