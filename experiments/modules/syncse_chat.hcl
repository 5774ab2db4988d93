# SynCSE's offline generator: a small GPT-2 of this project taught the
# chat format of SynCSE's calls, for the mini and ci profiles of
# ../syncse.hcl (used there as `module "chat"`; this file lives apart from
# experiments/*.hcl because it is a building block, not an experiment).
#
# SynCSE asks gpt-3.5-turbo, which follows a five-shot chat out of the box.
# A GPT-2 pretrained from scratch on 100k local sentences does not: it has
# never seen a chat, an instruction or a numbered list. So, as a declared
# departure from the paper, `chat_text` renders local data in exactly the
# chats SynCSE sends (the in-process provider's chat-v1 format, the
# paper's prompt pools, exemplars drawn as synth.annotate draws them, the
# prompt fitted to the context window as the provider fits it), and
# `chat_lm` fine-tunes the model on them:
#   - labelling chats: for NLI triplets whose premise SynCSE-partial does
#     NOT label (exclude: the first `labelled` premises), the positive call
#     answered with the entailment and the hard-negative call answered with
#     the contradiction; no STS text is used anywhere;
#   - sentence chats: synth.sentences' calls -- SynCSE-scratch's (genre and
#     topics) and Table 8's fixed naive call alike -- answered with numbered
#     lists of Wikipedia sentences: this teaches the list format only (the
#     sentences are not of the genre or topics asked for).
# What the fine-tuned model then writes for the premises it never saw, and
# the scratch sentences, is the synthetic data.

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

variable "seed" {
  default = 42
}

variable "labelled" {
  description = "premises SynCSE-partial labels (its max_inputs): never an anchor of the fine-tuning chats"
  default     = 0
}

variable "label_max_tokens" {
  description = "synth.annotate's max_tokens"
  default     = 24
}

variable "list_max_tokens" {
  description = "synth.sentences' max_tokens"
  default     = 64
}

variable "sentence_prompts" {
  description = "synth.sentences' prompts"
  default     = []
}

variable "naive_prompts" {
  description = "synth.sentences' prompts of Table 8's naive calls (fixed = true: the first is used)"
  default     = []
}

variable "topics_per_call" {
  default = 6
}

variable "sentences_per_call" {
  default = 20
}

variable "example_sentences" {
  default = 10
}

# The mini generator: lm.hcl's model (its mini profile: 4 layers, width 256,
# context 128; 37 minutes of pretraining, shared with lm.hcl's cache).
module "lm" {
  source = "../lm.hcl"
}

stage "nli" {
  uses = "data.nli"
}

stage "premises" {
  uses     = "data.triplet_sentences"
  triplets = stage.nli.triplets
  columns  = ["anchor"]
}

stage "wiki" {
  uses   = "data.sentences"
  source = "wiki"
}

stage "chat_text" {
  uses               = "synth.chat_corpus"
  lm                 = module.lm.lm.model
  triplets           = stage.nli.triplets
  exclude            = stage.premises.sentences
  sentences          = stage.wiki.sentences
  max_exclude        = var.labelled
  label_max_tokens   = var.label_max_tokens
  list_max_tokens    = var.list_max_tokens
  sentence_prompts   = var.sentence_prompts
  topics_per_call    = var.topics_per_call
  sentences_per_call = var.sentences_per_call
  example_sentences  = var.example_sentences
  fixed_prompts      = var.naive_prompts
  max_triplets       = 2500
  # 3,000 scratch-call lists (about 2,000 fit the context whole) and 1,000
  # naive-call lists beside the 4,838 labelling chats: with 600 scratch
  # lists only (406 fitting, 8% of the chats) and 150 updates, the mini
  # model wrote a list in 9.5% of the scratch calls and 3.5% of the naive
  # calls at the paper's temperature 1.3; with these and 300 updates, 69%
  # of 1,344 scratch calls and 79% of 600 naive calls.
  lists          = 3000
  fixed_lists    = 1000
  list_max_words = 14
  seed           = 42
}

# Fine-tuning: each chat framed on its own (<|endoftext|> chat
# <|endoftext|>), so the model learns to end its answer. 300 updates of 16
# see about 4,800 of the 7,859 chats once (10 minutes here at a load of 7-12).
stage "chat_lm" {
  uses          = "train.causal_lm"
  init          = module.lm.lm.model
  data          = stage.chat_text.sentences
  pack          = false
  max_length    = 128
  batch_size    = 16
  learning_rate = 5e-4
  warmup        = 20
  weight_decay  = 0.01
  dropout       = 0
  max_steps     = 300
  eval_every    = 0
  seed          = 42
}

# ---- ci: its own tiny generator, pretrained here in about a minute ------------
# 2 layers, width 128, vocabulary 2,048, context 160 (SynCSE's chats need
# more than lm.hcl's ci model's 96 tokens), 300 updates of 32 windows of 64
# tokens on the Wikipedia sentences, then 150 updates on the chats (no naive
# lists: the ci baseline keeps its generator; it writes a list in about one
# call in five).

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
  weight_decay  = 0.01
  dropout       = 0
  max_steps     = 300
  eval_every    = 0
  seed          = 42
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
    warmup        = 20
    max_steps     = 150
  }
}
