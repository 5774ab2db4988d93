experiment "dino" {
  title = "DINO: Generating Datasets with Pretrained Language Models"
  table = "STS test, Spearman x 100 (Table 1: all setting; Table 5: mean of subsets)"
  paper = "Schick and Schütze 2021, dino.md"
}

deviation "self_debiasing" {
  what     = "self-debiasing's penalty"
  paper    = "alpha = exp(lambda * delta_y), delta_y = min over counterlabels of (p_y - p_y'), applied where p_y is lower (section 3)"
  ours     = "alpha = max(exp(-lambda * max(p_y' - p_y, 0)), epsilon = 0.01), and the counterlabel rows continue with the token chosen for y, so every row shares one prefix"
  why      = "the released code does so; the paper's formula gives no floor and says nothing of the counterlabel rows' prefixes"
  evidence = "dino.md section 3 gives the formula; the released code floors alpha at epsilon and feeds y's token to the counterlabel rows (../shared/DESIGN.md, DINO)"
  tables   = ["Table 1", "Table 2"]
}

deviation "glove_vectors" {
  what   = "GloVe vectors of the Avg. GloVe row"
  paper  = "GloVe 840B, 300 dimensions"
  ours   = "GloVe 6B, 100 dimensions, the 100,000 most frequent words (as baselines.hcl)"
  why    = "the only GloVe vectors in the data directory"
  tables = ["Table 1"]
}

deviation "x1" {
  what     = "the X1 of each dataset"
  paper    = "the STSb training sentences (STS-L-x2); 15,000 generated x1 (STS-L-x1x2)"
  ours     = "the first 300 STSb training sentences and 200 generated x1 (mini); 40 and 30 (ci)"
  why      = "generation in minutes on a CPU"
  tables   = ["Table 1", "Table 2", "Table 5"]
  profiles = ["mini", "ci"]
}

deviation "encoders" {
  what     = "the bi-encoder and the BERT rows"
  paper    = "Sentence-RoBERTa from roberta-base (lr 2e-5, warm-up 10% of the updates, weight decay 0.01); BERT CLS and Avg. BERT from bert-base-uncased"
  ours     = "pretrained.hcl's BERT for both (mini: its second phase, bert_long; ci: its first); the bi-encoder at lr 1e-4, no weight decay, warm-up and evaluation every N updates (mini: 10 and 20; ci: 2 and 5)"
  why      = "no roberta-base or BERT-base here; the settings the results were recorded with"
  tables   = ["Table 1", "Table 2", "Table 5"]
  profiles = ["mini", "ci"]
}

variable "seed" { default = 42 }

variable "gpt2" {
  description = "local Hugging Face GPT2-XL directory (config.json, model.safetensors, vocab.json, merges.txt)"
  default     = ""
}

variable "bert" {
  description = "local Hugging Face bert-base-uncased directory (Table 1's BERT CLS and Avg. BERT rows)"
  default     = ""
}

variable "roberta" {
  description = "local Hugging Face roberta-base directory (config.json, model.safetensors, vocab.json, merges.txt)"
  default     = ""
}

variable "released_x2" {
  description = "the authors' released STS-🦕-x2 (raw), timoschick/dino's sts-dino-x2.jsonl: JSON lines {\"text_a\", \"text_b\", \"label\"}, post-processed and trained on as our STS-L-x2 (adds its rows; not the (pp) file, which is post-processed already)"
  default     = ""
}

variable "released_x1x2" {
  description = "the authors' released STS-🦕-x1x2 (raw), timoschick/dino's sts-dino-x1x2.jsonl: JSON lines {\"text_a\", \"text_b\", \"label\"}, post-processed and trained on as our STS-L-x1x2 (adds its rows; not the (pp) file, which is post-processed already)"
  default     = ""
}

# The generator and the bi-encoder of the mini and ci profiles; the paper
# profile references neither, so it never builds them.
module "format" { source = "./modules/dino_format.hcl" }
module "pretrained" { source = "./pretrained.hcl" }

locals {
  self_debiasing = { lambda = 100, epsilon = 0.01, top_k = 5, top_p = 0.9, max_new_tokens = 40, x2_per_x1 = 2, max_tries = 5 }
  # The mini and ci profiles' generator, recorded without token ids, and
  # bi-encoder (deviation encoders).
  offline = { model = module.format.format.model, hf_checkpoint = "", token_ids = false }
  mini_sbert = {
    init   = module.pretrained.bert_long.model, hf_checkpoint = "", learning_rate = 1e-4,
    warmup = 10, warmup_ratio = 0, weight_decay = 0, eval_every = 20
  }
  # The two datasets: the authors' released file of each (by -var) and the
  # paper's rows of Tables 1 and 5, which ours and the released data's share.
  datasets = {
    x2 = {
      title    = "STS-L-x2"
      released = var.released_x2
      table1   = [70.27, 81.26, 71.25, 80.49, 77.18, 77.82, 68.09, 75.20]
      table5   = [65.3, 71.8, 72.7, 75.9, 76.9, 72.5]
    }
    x1x2 = {
      title    = "STS-L-x1x2"
      released = var.released_x1x2
      table1   = [64.87, 78.30, 66.38, 79.60, 76.47, 76.51, 74.26, 73.77]
      table5   = [65.1, 69.9, 68.6, 76.3, 76.6, 71.3]
    }
  }
  released = { for k, d in local.datasets : k => d if d.released != "" }
}

# ---- data ---------------------------------------------------------------------

# X1 of STS-L-x2: the sentences of the STSb training split.
stage "stsb_train" {
  uses   = "data.sts_sentences"
  tasks  = ["stsb"]
  splits = ["train"]
}

stage "sts" {
  uses  = "data.sts"
  tasks = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"]
  split = "test"
}

# ---- generation (paper: GPT2-XL as it is) -------------------------------------
# token_ids: every generated row keeps its token ids and its prompt's.

# X1 of STS-L-x1x2: generated sentences (top-p sampling alone).
stage "x1" {
  uses           = "generate.dino_x1"
  hf_checkpoint  = var.gpt2
  count          = 15000
  top_k          = 0
  top_p          = 0.9
  max_new_tokens = 40
  token_ids      = true
  seed           = var.seed
}

# The two datasets: STS-L-x2 and STS-L-x1x2.
stage "pairs" {
  for_each      = { x2 = stage.stsb_train.sentences, x1x2 = stage.x1.sentences }
  uses          = "generate.dino_pairs"
  data          = each.value
  hf_checkpoint = var.gpt2
  params        = local.self_debiasing
  token_ids     = true
  seed          = var.seed
}

# The authors' released datasets (by -var): raw generated pairs like ours,
# so each goes through the same post-processing, training and evaluation
# below, as NAME["released_KEY"].
stage "released" {
  for_each = local.released
  uses     = "data.released_dino"
  path     = each.value.released
}

# The released datasets beside ours in distinct's and eval's for_each; the
# conditionals keep the instances in the order written while none is given.
locals {
  released_pairs  = { for k, r in stage.released : "released_${k}" => r }
  released_models = { for k, r in stage.released : "released_${k}" => stage.sroberta["released_${k}"].model }
}

# ---- post-processing of each dataset, each step its own artifact --------------

stage "distinct" {
  for_each = length(keys(local.released)) == 0 ? stage.pairs : merge(stage.pairs, local.released_pairs)
  uses     = "pairs.drop_identical"
  data     = each.value.pairs
}

stage "smooth" {
  for_each = stage.distinct
  uses     = "pairs.smooth"
  data     = each.value.pairs
  low      = 0.1
  high     = 0.9
}

stage "augment" {
  for_each = stage.smooth
  uses     = "pairs.augment"
  data     = each.value.pairs
  per_x1   = 2
  seed     = var.seed
}

stage "split" {
  for_each   = stage.augment
  uses       = "pairs.split"
  data       = each.value.pairs
  validation = 0.1
  seed       = var.seed
}

# ---- Sentence-RoBERTa on each dataset, and the baselines -------------------------

# Sentence-BERT's defaults as sentence-transformers' fit applies them, the
# best validation step kept.
stage "sroberta" {
  for_each      = stage.split
  uses          = "train.cosine_mse"
  data          = each.value.train
  dev           = each.value.validation
  hf_checkpoint = var.roberta
  from_scratch  = false
  pooling       = "mean"
  learning_rate = 2e-5
  warmup_ratio  = 0.1
  weight_decay  = 0.01
  batch_size    = 32
  epochs        = 1
  max_length    = 64
  eval_every    = 250
  seed          = var.seed
}

stage "glove" {
  uses    = "encode.glove_avg"
  vectors = "glove.6B.100d"
}

# BERT CLS and Avg. BERT: BERT-base without fine-tuning, read two ways.
stage "bert" {
  for_each      = { cls = "cls_before_pooler", avg = "mean" }
  uses          = "encode.pooling"
  hf_checkpoint = var.bert
  pooling       = each.value
}

# Table 1's encoders.
locals {
  encoders = {
    x2       = stage.sroberta["x2"].model, x1x2 = stage.sroberta["x1x2"].model, glove = stage.glove.encoder,
    bert_cls = stage.bert["cls"].encoder, bert_avg = stage.bert["avg"].encoder
  }
}

stage "eval" {
  for_each      = length(keys(local.released)) == 0 ? local.encoders : merge(local.encoders, local.released_models)
  uses          = "evaluate.sts"
  encoder       = each.value
  data          = stage.sts.pairs
  align_uniform = false
}

# ---- Table 1 and Table 5 --------------------------------------------------------

table "Table 1" {
  columns = {
    STS12   = "sts12", STS13 = "sts13", STS14 = "sts14", STS15 = "sts15", STS16 = "sts16",
    "STS-B" = "stsb", "SICK-R" = "sickr", Avg = "avg"
  }
  tolerance = 1.0
  row "dino_x2" {
    title = "DINO (STS-L-x2)"
    stage = stage.eval["x2"]
    paper = local.datasets.x2.table1
  }
  row "dino_x1x2" {
    title = "DINO (STS-L-x1x2)"
    stage = stage.eval["x1x2"]
    paper = local.datasets.x1x2.table1
  }
  row "released" {
    for_each = local.datasets
    enabled  = each.value.released != ""
    name     = "released_${each.key}"
    title    = "DINO (${each.value.title}) (authors' released data)"
    stage    = stage.eval["released_${each.key}"]
    paper    = each.value.table1
  }
  row "glove" {
    title = "Avg. GloVe"
    stage = stage.eval["glove"]
    paper = [55.14, 70.66, 59.73, 68.25, 63.66, 58.02, 53.76, 61.32]
  }
  row "bert_avg" {
    title = "Avg. BERT"
    stage = stage.eval["bert_avg"]
    paper = [38.78, 57.98, 57.98, 63.15, 61.06, 46.35, 58.40, 54.81]
  }
  row "bert_cls" {
    title = "BERT CLS"
    stage = stage.eval["bert_cls"]
    paper = [20.16, 30.01, 20.09, 36.88, 38.08, 16.50, 42.63, 29.19]
  }
}

# The "mean" setting: the mean of each year's subsets.
table "Table 5" {
  columns   = { STS12 = "sts12", STS13 = "sts13", STS14 = "sts14", STS15 = "sts15", STS16 = "sts16", Avg = "avg" }
  tolerance = 1.0
  row "mean_x2" {
    title = "STS-L-x2 (mean setting)"
    stage = stage.eval["x2"].metrics.mean
    paper = local.datasets.x2.table5
  }
  row "mean_x1x2" {
    title = "STS-L-x1x2 (mean setting)"
    stage = stage.eval["x1x2"].metrics.mean
    paper = local.datasets.x1x2.table5
  }
  row "mean_released" {
    for_each = local.datasets
    enabled  = each.value.released != ""
    name     = "mean_released_${each.key}"
    title    = "${each.value.title} (mean setting) (authors' released data)"
    stage    = stage.eval["released_${each.key}"].metrics.mean
    paper    = each.value.table5
  }
}

# ---- Table 2: ablations on STS-L-x2 ------------------------------------------------

# The paper prints STS12-16 (avg), STSb and SICK, no average of the seven;
# its first row is the default pipeline (Table 1's STS-L-x2).
ablation "table2" {
  title   = "Table 2: STS-L-x2 without self-debiasing, lambda 200, without label smoothing, without augmentation"
  report  = [stage.eval["x2"].metrics.sts12_16, stage.eval["x2"].metrics.stsb, stage.eval["x2"].metrics.sickr, stage.eval["x2"].metrics.avg]
  columns = ["STS12-16", "STS-B", "SICK-R", "Avg"]
  variant "DINO (STS-L-x2)" {
    set   = {}
    paper = [76.09, 77.82, 68.09, null]
  }
  variant "lambda" {
    for_each = {
      "lambda = 0"   = { lambda = 0, paper = [65.50, 70.71, 67.60, null] }
      "lambda = 200" = { lambda = 200, paper = [75.40, 77.49, 66.83, null] }
    }
    set   = { stage.pairs["x2"].lambda = each.value.lambda }
    paper = each.value.paper
  }
  variant "no label smoothing" {
    set   = { stage.smooth["x2"].enabled = false }
    paper = [74.50, 76.26, 66.23, null]
  }
  variant "no augmentation" {
    set   = { stage.augment["x2"].per_x1 = 0 }
    paper = [70.90, 73.81, 63.98, null]
  }
}

profile "mini" {
  stage "x1" {
    params = local.offline
    count  = 200
  }
  stage "pairs" { params = local.offline }
  stage "pairs[\"x2\"]" { max_x1 = 300 }
  stage "bert" {
    encoder       = module.pretrained.bert_long.model
    hf_checkpoint = ""
  }
  stage "sroberta" { params = local.mini_sbert }
}

profile "ci" {
  extends = "mini"
  stage "x1" { count = 30 }
  stage "pairs[\"x2\"]" { max_x1 = 40 }
  stage "bert" { encoder = module.pretrained.bert.model }
  stage "sroberta" {
    init       = module.pretrained.bert.model
    eval_every = 5
    warmup     = 2
  }
}
