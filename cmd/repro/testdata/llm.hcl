# An LLM stage against a loopback chat-completions server (the tests start
# one and pass its address with -var url=...).
experiment "llm" {
  title = "SynCSE labels through the request cache"
}

variable "url" {
  default = "http://127.0.0.1:1/v1"
}

stage "nli" {
  uses  = "data.nli"
  files = ["snli_dev"]
}

stage "premises" {
  uses     = "data.triplet_sentences"
  triplets = stage.nli.triplets
  columns  = ["anchor"]
}

stage "label" {
  uses                = "synth.annotate"
  input               = stage.premises.sentences
  exemplars           = stage.nli.triplets
  base_url            = var.url
  model               = "loopback"
  api_key_env         = ""
  concurrency         = 4
  requests_per_minute = 0
  tokens_per_minute   = 0
  max_retries         = 2
  timeout_seconds     = 10
  max_inputs          = 60
  prices              = { loopback = { input_per_1k = 1, output_per_1k = 2 } }
}

expect "triplets" {
  row    = "labels"
  column = "triplets"
  value  = stage.label.metrics.triplets
}

deviation "nli" {
  what      = "NLI triplets"
  paper     = "SimCSE's nli_for_simcse.csv"
  ours      = "the data directory's dev/test-derived triplets"
  why       = "a test of the language-model stages"
  stand_ins = ["nli"]
}
