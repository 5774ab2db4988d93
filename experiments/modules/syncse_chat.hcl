experiment "syncse_chat" {
  title = "SynCSE's offline generator: a small GPT-2 fine-tuned on SynCSE's chat format"
  table = "none (a module of syncse.hcl)"
  paper = "syncse.md (a departure: the paper's LLM needed no format teaching)"
}

deviation "local_text" {
  what      = "the generator and its fine-tuning data"
  paper     = "gpt-3.5-turbo as it is"
  ours      = "lm.hcl's small GPT-2, fine-tuned on SynCSE's chats rendered from the data directory's NLI triplets and Wikipedia sentences"
  why       = "a GPT-2 trained here from scratch has never seen a chat"
  tables    = ["SynCSE Table 2", "SynCSE Table 8"]
  stand_ins = ["nli", "wiki", "bbc", "brown"]
}

input "triplets" {
  kind        = "triplets"
  description = "NLI triplets: the labelling chats' anchors, answers and exemplars"
}

input "exclude" {
  kind        = "sentences"
  description = "the premises SynCSE-partial labels: the first `labelled` are never an anchor of a chat"
}

input "sentences" {
  kind        = "sentences"
  description = "Wikipedia sentences, the answers of the list chats"
}

variable "labelled" {
  description = "premises SynCSE-partial labels (its max_inputs)"
  default     = 0
}

variable "calls" {
  description = "the synth stages' calls the chats imitate (synth.chat_corpus's parameters of the same names)"
  default = {
    label_max_tokens   = 24
    list_max_tokens    = 64
    sentence_prompts   = []
    fixed_prompts      = []
    topics_per_call    = 6
    sentences_per_call = 20
    example_sentences  = 10
  }
}

locals {
  # Both language models' training (chat_lm, tiny_lm), without dev evaluation.
  causal = { weight_decay = 0.01, dropout = 0, eval_every = 0, seed = 42 }
}

# The mini profile's generator: lm.hcl's mini GPT-2 (ci trains tiny_lm instead).
module "lm" {
  source = "../lm.hcl"
}

# Labelling chats from the triplets; list chats: `lists` of the scratch calls,
# `fixed_lists` of the naive calls.
stage "chat_text" {
  uses           = "synth.chat_corpus"
  lm             = module.lm.lm.model
  triplets       = input.triplets
  exclude        = input.exclude
  sentences      = input.sentences
  max_exclude    = var.labelled
  params         = var.calls
  max_triplets   = 2500
  lists          = 3000
  fixed_lists    = 1000
  list_max_words = 14
  seed           = 42
}

# Each chat framed on its own (pack = false) so that the model learns to end
# its answer.
stage "chat_lm" {
  uses          = "train.causal_lm"
  init          = module.lm.lm.model
  data          = stage.chat_text.sentences
  params        = local.causal
  pack          = false
  max_length    = 128
  batch_size    = 16
  learning_rate = 5e-4
  warmup        = 20
  max_steps     = 300
}

# ---- ci's own tiny generator: SynCSE's chats need a longer context (160
# tokens) than lm.hcl's ci model has (96).

stage "tiny_text" {
  uses        = "data.corpus"
  sources     = ["wiki"]
  dedupe      = true
  exclude_sts = true
  min_words   = 3
  dev_size    = 200
  seed        = 42
}

stage "tiny_lm" {
  uses          = "train.causal_lm"
  data          = stage.tiny_text.sentences
  params        = local.causal
  from_scratch  = true
  layers        = 2
  hidden        = 128
  heads         = 4
  context       = 160
  vocab         = "train"
  vocab_size    = 2048
  max_length    = 64
  batch_size    = 32
  learning_rate = 2e-3
  warmup        = 30
  max_steps     = 300
}

profile "ci" {
  stage "chat_text" {
    lm           = stage.tiny_lm.model
    max_triplets = 600
    lists        = 200
    fixed_lists  = 0
  }
  stage "chat_lm" {
    init          = stage.tiny_lm.model
    max_length    = 160
    learning_rate = 2e-3
    max_steps     = 150
  }
}
