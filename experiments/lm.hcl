experiment "lm" {
  title = "Causal language model: a small GPT-2 on Wikipedia + BBC News + Brown"
  table = "Perplexity on held-out sentences (lower is better); seeded samples below"
  paper = "none (the generator of DINO, SynCSE and GenSE's pipelines)"
}

deviation "local_text" {
  what      = "language-model text"
  paper     = "GPT-2's WebText (no paper reports this table)"
  ours      = "the data directory's Wikipedia, BBC and Brown sentences, STS text left out"
  why       = "it is all the unlabeled text here"
  tables    = ["held-out perplexity"]
  stand_ins = ["wiki", "bbc", "brown"]
}

deviation "from_scratch" {
  what     = "the model"
  paper    = "a pretrained GPT-2 (-var gpt2) adapted with run_clm.py's recipe: lr 5e-5, batches of 8 of 128 tokens, 3 epochs"
  ours     = "a GPT-2 from scratch over a byte-level BPE learned from the training sentences, 4 heads, no dropout (less than one pass); mini: 4 layers, width 256, vocabulary 8,192, 2,500 updates of 16 windows of 64 tokens; ci: 2 layers, width 128, vocabulary 2,048, 500 updates of 32 windows of 48"
  why      = "no GPT-2 weights here; models this machine trains from scratch in under an hour (mini) or minutes (ci)"
  tables   = ["held-out perplexity"]
  profiles = ["mini", "ci"]
}

variable "seed" { default = 42 }

variable "gpt2" {
  description = "local Hugging Face GPT-2 directory (config.json, model.safetensors, vocab.json, merges.txt)"
  default     = ""
}

stage "lm_text" {
  uses        = "data.corpus"
  sources     = ["wiki", "bbc", "brown"]
  dedupe      = true
  exclude_sts = true
  min_words   = 3
  dev_size    = 2000
  test_size   = 2000
  seed        = 42
}

stage "lm" {
  uses          = "train.causal_lm"
  data          = stage.lm_text.sentences
  dev           = stage.lm_text.dev
  hf_checkpoint = var.gpt2
  from_scratch  = false
  learning_rate = 5e-5
  batch_size    = 8
  max_length    = 128
  epochs        = 3
  eval_every    = 500
  seed          = var.seed
}

stage "perplexity" {
  uses  = "evaluate.perplexity"
  model = stage.lm.model
  data  = stage.lm_text.test
}

stage "samples" {
  for_each = {
    free     = { template = "", samples = 6, top_k = null }
    prompted = { template = "The government said", samples = 4, top_k = 5 }
  }
  uses           = "generate.complete"
  model          = stage.lm.model
  template       = each.value.template
  samples        = each.value.samples
  show           = each.value.samples
  max_new_tokens = 40
  top_k          = each.value.top_k
  top_p          = 0.9
  seed           = var.seed
}

expect "perplexity" {
  row             = "GPT-2 on Wikipedia + BBC + Brown"
  column          = "test perplexity"
  value           = stage.perplexity.metrics.perplexity
  lower_is_better = true
}

profile "mini" {
  stage "lm" {
    from_scratch  = true
    vocab         = "train"
    heads         = 4
    weight_decay  = 0.01
    dropout       = 0
    layers        = 4
    hidden        = 256
    context       = 128
    vocab_size    = 8192
    max_length    = 64
    batch_size    = 16
    learning_rate = 1e-3
    warmup        = 100
    max_steps     = 2500
    eval_every    = 500
  }
}

profile "ci" {
  extends = "mini"
  stage "lm" {
    layers        = 2
    hidden        = 128
    context       = 96
    vocab_size    = 2048
    max_length    = 48
    batch_size    = 32
    learning_rate = 2e-3
    warmup        = 50
    max_steps     = 500
    eval_every    = 250
  }
}
