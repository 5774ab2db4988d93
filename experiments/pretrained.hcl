experiment "pretrained" {
  title = "Pretrained mini encoders: masked-LM on the local Wikipedia, BBC and Brown sentences"
  table = "held-out MLM perplexity and accuracy; STS test, Spearman x 100, without fine-tuning"
  paper = "paser.md Table 1 (BERT-base first-last avg.); dino.md Table 1 (Avg. BERT)"
}

deviation "local_text" {
  what      = "pretraining text"
  paper     = "BERT: BooksCorpus and English Wikipedia (3.3B words); RoBERTa: 160GB of text"
  ours      = "the data directory's Wikipedia, BBC and Brown sentences (about 104,000, 2.6M tokens), STS text left out"
  why       = "it is all the unlabeled text here"
  tables    = ["masked LM", "STS without fine-tuning"]
  stand_ins = ["wiki", "bbc", "brown"]
  profiles  = ["paper", "mini"]
}

deviation "objective" {
  what   = "BERT's objectives and phases"
  paper  = "masked-LM and next-sentence prediction together from the first step; two phases (128, then 512 tokens)"
  ours   = "masked-LM alone in the first four phases (the third and fourth are ours: more passes of the second), next-sentence prediction added in the fifth"
  why    = "the phases were added one at a time, each chosen by the held-out perplexity; the experiments start from the fourth"
  tables = ["masked LM", "STS without fine-tuning"]
}

deviation "glove_init" {
  what     = "word embeddings of the first BERT phase and the RoBERTa"
  paper    = "random initialisation"
  ours     = "GloVe 6B 100d in the leading columns, scaled by 0.2 to BERT-base's embedding norms"
  why      = "a small model on a few million tokens learns from them faster"
  tables   = ["masked LM", "STS without fine-tuning"]
  profiles = ["mini", "ci"]
}

# The pretrained models' own seed: fine-tuning seeds vary over one model.
variable "seed" { default = 42 }

locals {
  sts = {
    STS12   = "sts12", STS13 = "sts13", STS14 = "sts14", STS15 = "sts15", STS16 = "sts16",
    "STS-B" = "stsb", "SICK-R" = "sickr", Avg = "avg"
  }
  mlm = ["dev perplexity", "dev MLM accuracy (%)"]
  # The pretrained models, and each one's row titles in the two tables.
  models = {
    bert   = stage.bert, bert_long = stage.bert_long, bert_3 = stage.bert_3, bert_4 = stage.bert_4,
    bert_5 = stage.bert_5, roberta = stage.roberta
  }
  titles = {
    bert      = { mlm = "BERT, first phase (masked-LM pretraining)", sts = "BERT" }
    bert_long = { mlm = "BERT, second phase", sts = "BERT second phase," }
    bert_3    = { mlm = "BERT, third phase", sts = "BERT third phase," }
    bert_4    = { mlm = "BERT, fourth phase (the model the experiments use)", sts = "BERT fourth phase," }
    bert_5    = { mlm = "BERT, fifth phase (masked-LM + next-sentence prediction)", sts = "BERT fifth phase," }
    roberta   = { mlm = "RoBERTa (masked-LM pretraining)", sts = "RoBERTa" }
  }

  # BERT-base's shape and optimiser (Devlin et al. 2019, appendix A.2).
  bert_base = {
    layers  = 12, hidden = 768, heads = 12, intermediate = 3072, max_position = 512, vocab = "bert-base-uncased",
    pooling = "first_last_avg", learning_rate = 1e-4, batch_size = 256, weight_decay = 0.01, eval_every = 1000
  }
  # BERT's second phase; the later phases continue it.
  bert_phase = { max_length = 512, epochs = 4, warmup = 1000 }

  # The mini and ci profiles' recipes (deviations mini_models, ci_models, glove_init).
  mini = {
    layers = 4, hidden = 128, heads = 4, intermediate = 512, max_position = 128,
    epochs = 4, learning_rate = 1e-3, batch_size = 128, max_length = 64, warmup = 200, eval_every = 400
  }
  ci = {
    layers        = 2, hidden = 128, heads = 4, intermediate = 256, max_position = 128,
    learning_rate = 1e-3, batch_size = 64, max_length = 48
  }
  ci_first = { max_steps = 200, warmup = 20, eval_every = 100 }
  ci_phase = { max_steps = 50, warmup = 5, eval_every = 50 }

  glove = { glove_init = true, glove_scale = 0.2 }
}

stage "corpus" {
  uses        = "data.corpus"
  sources     = ["wiki", "bbc", "brown"]
  dedupe      = true
  exclude_sts = true
  min_words   = 3
  dev_size    = 1000
  seed        = var.seed
}

# BERT: masked-LM, 15% / 80-10-10, on 128-token sequences.
stage "bert" {
  uses       = "train.mlm"
  data       = stage.corpus.sentences
  dev        = stage.corpus.dev
  params     = local.bert_base
  max_length = 128
  epochs     = 36
  warmup     = 10000
  seed       = var.seed
}

# BERT's second phase: the last 10% of its steps, on 512-token sequences.
stage "bert_long" {
  uses   = "train.mlm"
  init   = stage.bert.model
  data   = stage.corpus.sentences
  dev    = stage.corpus.dev
  params = [local.bert_base, local.bert_phase]
  seed   = var.seed + 1
}

stage "bert_3" {
  uses   = "train.mlm"
  init   = stage.bert_long.model
  data   = stage.corpus.sentences
  dev    = stage.corpus.dev
  params = [local.bert_base, local.bert_phase]
  seed   = var.seed + 2
}

stage "bert_4" {
  uses   = "train.mlm"
  init   = stage.bert_3.model
  data   = stage.corpus.sentences
  dev    = stage.corpus.dev
  params = [local.bert_base, local.bert_phase]
  seed   = var.seed + 3
}

# Fifth phase: BERT's next-sentence prediction beside masked-LM (Devlin et
# al. 2019, section 3.1), which trains the [CLS] state and the pooler that
# the papers' [CLS] rows read; masked-LM alone leaves them untrained.
stage "bert_5" {
  uses          = "train.mlm"
  init          = stage.bert_4.model
  data          = stage.corpus.sentences
  dev           = stage.corpus.dev
  next_sentence = true
  params        = [local.bert_base, local.bert_phase]
  seed          = var.seed + 4
}

# RoBERTa (Liu et al. 2019, table 9): BERT-base's shape, byte-level BPE,
# dynamic masking, no next-sentence objective.
stage "roberta" {
  uses          = "train.mlm"
  data          = stage.corpus.sentences
  dev           = stage.corpus.dev
  params        = local.bert_base
  vocab         = "bpe"
  vocab_size    = 50265
  learning_rate = 6e-4
  batch_size    = 8000
  max_length    = 128
  epochs        = 40
  warmup        = 24000
  seed          = var.seed
}

stage "sts" {
  uses  = "data.sts"
  tasks = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"]
  split = "test"
}

# Each model without fine-tuning, first-last average pooling.
stage "eval" {
  for_each      = local.models
  uses          = "evaluate.sts"
  encoder       = each.value.model
  data          = stage.sts.pairs
  align_uniform = false
}

# Not a paper's table.
table "masked LM" {
  columns = {
    "dev perplexity"                       = "dev_perplexity"
    "dev MLM accuracy (%)"                 = "dev_accuracy"
    "next-sentence accuracy (%, training)" = "nsp_accuracy"
  }
  row "mlm" {
    for_each = local.models
    name     = "mlm_${each.key}"
    title    = local.titles[each.key].mlm
    stage    = each.value
    columns  = each.key == "bert_5" ? concat(local.mlm, ["next-sentence accuracy (%, training)"]) : local.mlm
  }
}

# PaSeR Table 1's BERT-base first-last avg. is the first phase's row; the
# later phases and the RoBERTa are ours.
table "STS without fine-tuning" {
  columns = local.sts
  row "sts" {
    for_each = stage.eval
    name     = "sts_${each.key}"
    title    = "${local.titles[each.key].sts} first-last avg. (no fine-tuning)"
    stage    = each.value
    paper    = each.key == "bert" ? [39.70, 59.38, 49.67, 66.03, 66.19, 53.87, 62.06, 56.70] : null
  }
}

profile "mini" {
  deviation "mini_models" {
    what   = "model size and schedule"
    paper  = "BERT-base and RoBERTa-base: 12 layers, hidden 768, 12 heads, FFN 3,072; batches of 256 (RoBERTa 8,000) sequences of 128 and 512 tokens; RoBERTa's BPE of 50,265"
    ours   = "PaSeR's mini encoder's shape, 4 layers, hidden 128, 4 heads, FFN 512; lr 1e-3 (a small model's rate), 4 epochs a phase of batches of 128 sentences of up to 64 tokens (the fifth: 2 epochs of pairs of up to 128); RoBERTa's BPE of 16,384 learned from the corpus"
    why    = "models this machine pretrains in under an hour a phase; the corpus's sentences fit 64 tokens"
    tables = ["masked LM", "STS without fine-tuning"]
  }
  stage "bert" { params = [local.mini, local.glove] }
  stage "bert_long" { params = local.mini }
  stage "bert_3" { params = local.mini }
  stage "bert_4" { params = local.mini }
  stage "bert_5" {
    params     = local.mini
    max_length = 128
    epochs     = 2
  }
  stage "roberta" {
    params     = [local.mini, local.glove]
    vocab_size = 16384
  }
}

profile "ci" {
  deviation "ci_models" {
    what   = "pretraining text, model size and schedule"
    paper  = "BERT-base and RoBERTa-base (12 layers, hidden 768, FFN 3,072) on BooksCorpus and Wikipedia, and on 160GB of text"
    ours   = "the data directory's Wikipedia sentences alone (300 held out); 2 layers, hidden 128 (the least GloVe 100d fits), FFN 256; batches of 64 sentences of up to 48 tokens (the fifth phase: pairs of up to 96), 200 updates in the first phase and 50 in each later one; RoBERTa's BPE of 4,096"
    why    = "a cold CI run fits its budget"
    tables = ["masked LM", "STS without fine-tuning"]
  }
  stage "corpus" {
    sources  = ["wiki"]
    dev_size = 300
  }
  stage "bert" { params = [local.ci, local.ci_first, local.glove] }
  stage "bert_long" { params = [local.ci, local.ci_phase] }
  stage "bert_3" { params = [local.ci, local.ci_phase] }
  stage "bert_4" { params = [local.ci, local.ci_phase] }
  stage "bert_5" {
    params     = [local.ci, local.ci_phase]
    max_length = 96
  }
  stage "roberta" {
    params     = [local.ci, local.ci_first, local.glove]
    vocab_size = 4096
  }
}
