# InfoCSE: A Mutually Reinforced Framework for Pretrained Sentence Embeddings
# (Yang et al.; ../shared/papers/infocse.md), the News column of Tables 1-3.
#
# The paper pretrains on 1.5M MIND news bodies and retrieves each article's
# headline among 180,000 candidates. The paper profile reads MIND's published
# news.tsv (-var mind=news.tsv; it refuses to start without it): titles as
# headlines, abstracts as bodies (a declared deviation below). The mini and
# ci profiles read the data directory's stand-in: BBC News (2,089 articles
# once the 136 duplicates are dropped) as both the unlabeled and the
# labelled corpus. Every profile adds the Brown Corpus (500 documents) as
# extra unlabeled text (declared). With about 1% of MIND's candidates, recall is far easier:
# the absolute values are not comparable with the paper's, only the order of
# the rows is (the BBC column is a stand-in, as PaSeR's CQA column is).
# Recall is printed x 100 (the paper prints fractions: 0.6345 is 63.45 here).
#
# Split (data.fewshot_split, seeded): 200 validation articles (model
# selection and the rounds' stopping rule, never tested on), 500 few-shot
# test articles, and a pool of 1,389 labelled training articles. Zero-shot
# rows (Table 1, Table 3's lower part) are scored on every article but the
# validation ones (1,889); few-shot rows on the 500 test articles. The
# paper's 1,000 / 2,000 / 5,000 labels do not fit: we use 1,000 and all
# 1,389 (the largest pool that leaves 500 test articles), beside the paper's
# 1,000 and 2,000 columns.
#
# Pipeline: CONPONO-style pairs (neighbouring sentences) train the initial
# encoder; each IDC round clusters every document's sentences with the
# current encoder (top-1 edges both ways, connected components) and trains
# the next encoder on all pairs inside a cluster (inner-product InfoNCE,
# in-batch negatives, same-document pairs masked), until validation R@5
# stops improving. Table 3's ablations swap the clustering (K-means,
# K = 10) or the initialisation (SimCSE, ICT); InfoCSE++ alternates
# few-shot fine-tuning and IDC rounds until the fine-tuned model's
# validation R@5 stops improving. Retrieval (the tables and every model
# selection) ranks with the similarity the encoder was trained with: the
# inner product in the paper profile (cosine for SimCSE).
#
# Not here: the Web Document and Web Browsing columns (MS MARCO documents
# and a private browsing corpus), the ConSERT, Mirror-BERT, CPC and DeCLUTR
# rows, and Table 3's SBERT row (all-mpnet-base-v2 is an MPNet, which
# repro's checkpoint loader does not read).
#
# Paper profile: the stage blocks carry the paper's settings (Table 5:
# BERT-base, Adam lr 2e-5, 32 tokens per sentence, pretraining batch 3,200
# for at most 0.2M steps with early stopping on validation R@5 after 20,000
# steps without gain, fine-tuning batch 64 for at most 20 epochs with a
# patience of 2 epochs); it needs a local bert-base-uncased (-var bert=DIR)
# and refuses to start without one. The shared training settings live in
# the variables `pretrain` and `finetune`, so a profile changes them once.

experiment "infocse" {
  title = "InfoCSE: A Mutually Reinforced Framework for Pretrained Sentence Embeddings"
  table = "News column (MIND; BBC News in the mini and ci profiles, without paper values), recall x 100: Table 1 zero-shot, Table 2 few-shot R@5, Table 3"
  paper = "infocse.md"
  seed  = var.seed # every seeded stage: weights, data order, dropout, the split, k-means
}

variable "seed" {
  default = 42
}

variable "bert" {
  description = "local Hugging Face bert-base-uncased directory (config.json, model.safetensors, vocab.txt)"
  default     = ""
}

variable "mind" {
  description = "MIND's news as published: a local news.tsv (News ID, Category, SubCategory, Title, Abstract, URL, Title Entities, Abstract Entities; TAB-separated, no header)"
  default     = ""
}

# Self-supervised pretraining (train.infonce): Table 5 and Appendix C.
variable "pretrain" {
  default = {
    learning_rate = 2e-5
    batch_size    = 3200
    max_steps     = 200000
    eval_every    = 2000
    patience      = 10
    similarity    = "dot"
    temperature   = 1
    pooling       = "cls_before_pooler"
    # model selection on R@5 ranks as the method trains (evaluate.retrieval
    # stages below rank with this similarity too)
    validation_similarity = "dot"
  }
}

# Few-shot fine-tuning (train.headline): Table 5 and Appendix C.
variable "finetune" {
  default = {
    learning_rate         = 2e-5
    batch_size            = 64
    epochs                = 20
    patience              = 2
    max_sentences         = 0
    similarity            = "dot"
    temperature           = 1
    pooling               = "cls_before_pooler"
    validation_similarity = "dot"
  }
}

locals {
  recall = { "R@5" = "r5", "R@10" = "r10", "R@20" = "r20" }
}

# The pretrained mini encoders, declared once for every experiment: the mini
# and ci profiles start from its BERT (the paper profile from bert-base).
module "pretrained" {
  source = "./pretrained.hcl"
}

# ---- deviations from the paper (printed under the table) ---------------------

deviation "idc_rounds" {
  what     = "which IDC rounds are candidates, and the rounds of Table 3's variants"
  paper    = "InfoCSE iterates until the validation performance stops growing and returns the optimal model; the K-means, SC and ICT rows say only that they converge within a few rounds"
  ours     = "InfoCSE stops by that rule (validation R@5, patience 1, at most 5 rounds) among the IDC rounds: the CONPONO initialisation is no candidate (it is the CONPONO row); the K-means, SC and ICT rows run a fixed two rounds, Table 3's convergence rows a fixed three"
  why      = "an InfoCSE that returned its initialisation would be no InfoCSE; the paper finds its variants converge within 2 rounds"
  evidence = "infocse.md section 3.2: 'once the validation performance stops growing, the iteration will be terminated and the optimal representation model is returned'; section 4.1: 'InfoCSE is able to quickly converge within 2 rounds of IDC'"
  tables   = ["Table 1", "Table 2", "Table 3"]
}

deviation "retrieval_similarity" {
  what     = "how retrieval ranks (the tables and every model selection by R@5)"
  paper    = "not stated; eq. 1 (the contrastive loss) and eq. 2 (IDC's edge weights) use the inner product"
  ours     = "each encoder ranks with the similarity it was trained with: the inner product for CONPONO, ICT, every IDC round and every fine-tuned model; the cosine for SimCSE, trained with the cosine / 0.05"
  why      = "the paper does not say; the inner product is what its method optimises and clusters with"
  evidence = "infocse.md section 3: 'and <.> is the inner-product operator' (eq. 1); eq. 2: w_ij <- <f(s_i), f(s_j)>"
  tables   = ["Table 1", "Table 2", "Table 3"]
}

deviation "mind_bodies" {
  what     = "news documents"
  paper    = "1.5M MIND news bodies (19.5 sentences each), each paired with its headline"
  ours     = "MIND's news.tsv as published: the abstract's sentences are the body, the title the headline; articles without an abstract left out"
  why      = "MIND publishes bodies only as URLs to crawl; news.tsv holds titles and abstracts"
  evidence = "infocse.md section 4 and Table 4: 'Microsoft News articles released by MIND ... the unlabeled corpus only has news bodies'"
  tables   = ["Table 1", "Table 2", "Table 3"]
}

deviation "brown_extra" {
  what      = "extra unlabeled documents"
  paper     = "the news corpus alone"
  ours      = "the Brown Corpus's 500 documents added to the self-supervised pairs (CONPONO, ICT, every IDC round)"
  why       = "kept as in the mini and ci profiles, so the paper profile's rows differ from theirs in the news data alone"
  tables    = ["Table 1", "Table 2", "Table 3"]
  stand_ins = ["brown"]
}

deviation "split_sizes" {
  what   = "labelled split"
  paper  = "10,000 training, 24,363 validation and 180,000 test pairs; 1,000 / 2,000 / 5,000 labels"
  ours   = "a seeded split of the articles: 200 validation, 500 test, 1,000 labels and the whole remaining pool; zero-shot rows on every article but the validation ones"
  why    = "the sizes fit the BBC stand-in of the mini and ci profiles, which share this split"
  tables = ["Table 1", "Table 2", "Table 3"]
}

# ---- data -------------------------------------------------------------------

stage "news" {
  uses   = "data.documents"
  source = "mind"
  path   = var.mind
}

stage "brown" {
  uses   = "data.documents"
  source = "brown"
}

stage "news_sentences" {
  uses   = "data.sentences"
  source = "mind"
  path   = var.mind
}

stage "split" {
  uses       = "data.fewshot_split"
  documents  = stage.news.documents
  validation = 200
  test       = 500
  labels     = 1000
}

# The unlabeled corpus every self-supervised stage reads (CONPONO, ICT, each
# IDC round; the paper: every article) and the zero-shot test set (the
# paper: every article outside the validation set). size = 0 keeps them
# whole; a small profile samples them (data.sample: seeded, across
# categories; the BBC file is stored by category).
stage "unlabeled" {
  uses      = "data.sample"
  documents = stage.news.documents
  size      = 0
}

stage "zero_shot" {
  uses      = "data.sample"
  documents = stage.split.zero_shot
  size      = 0
}

# ---- initialisations (Table 1's SimCSE, ICT, CONPONO rows) -------------------

stage "conpono_pairs" {
  uses      = "annotate.conpono"
  documents = stage.unlabeled.documents
  extra     = stage.brown.documents
  window    = 2
}

stage "conpono" {
  uses          = "train.infonce"
  data          = stage.conpono_pairs.pairs
  validation    = stage.split.validation
  hf_checkpoint = var.bert
  from_scratch  = false
  params        = var.pretrain
}

stage "ict_pairs" {
  uses      = "annotate.ict"
  documents = stage.unlabeled.documents
  extra     = stage.brown.documents
  window    = 3
}

stage "ict" {
  uses                = "train.infonce"
  data                = stage.ict_pairs.pairs
  validation          = stage.split.validation
  swap                = false
  positive_max_length = 128
  hf_checkpoint       = var.bert
  from_scratch        = false
  params              = var.pretrain
}

# SimCSE's own unsupervised recipe (Gao et al. 2021) on the news sentences.
stage "simcse" {
  uses          = "train.simcse_unsup"
  data          = stage.news_sentences.sentences
  hf_checkpoint = var.bert
  from_scratch  = false
  learning_rate = 3e-5
  batch_size    = 64
  max_length    = 32
  temperature   = 0.05
  epochs        = 1
  pooling       = "cls"
}

stage "eval_conpono" {
  uses       = "evaluate.retrieval"
  encoder    = stage.conpono.model
  data       = stage.zero_shot.documents
  similarity = var.pretrain.similarity
}

stage "eval_ict" {
  uses       = "evaluate.retrieval"
  encoder    = stage.ict.model
  data       = stage.zero_shot.documents
  similarity = var.pretrain.similarity
}

# SimCSE ranks by the cosine, the similarity it trains with (the default).
stage "eval_simcse" {
  uses    = "evaluate.retrieval"
  encoder = stage.simcse.model
  data    = stage.zero_shot.documents
}

# ---- InfoCSE: IDC rounds from the CONPONO initialisation ---------------------
#
# Algorithm 1: each round clusters every document's sentences with the
# current encoder and trains the next encoder on the clusters' pairs; "once
# the validation performance stops growing, the iteration will be terminated
# and the optimal representation model is returned" (section 3.2). Repeat
# infocse runs that rule: after each round the validation articles' R@5
# (ranked by the similarity the method trains with) decides, patience 1, at
# most 5 rounds, and repeat.infocse.last is the best round: the InfoCSE of
# Tables 1 and 2 and of Table 3's Partition and CP rows. The CONPONO
# initialisation is no candidate (deviation idc_rounds).

repeat "infocse" {
  rounds = 5
  until  = { metric = stage.infocse_val.metrics.r5, patience = 1 }
  start  = { model = stage.conpono.model }
  stage "infocse_pairs" {
    uses       = "annotate.idc"
    model      = previous.model
    documents  = stage.unlabeled.documents
    extra      = stage.brown.documents
    top_k      = 1
    similarity = var.pretrain.similarity
  }
  stage "infocse_train" {
    uses       = "train.infonce"
    init       = previous.model
    data       = stage.infocse_pairs.pairs
    validation = stage.split.validation
    params     = var.pretrain
  }
  stage "infocse_val" {
    uses       = "evaluate.retrieval"
    encoder    = stage.infocse_train.model
    data       = stage.split.validation
    similarity = var.pretrain.similarity
  }
  next = { model = stage.infocse_train.model, validation = stage.infocse_val.metrics }
}

# The selected round, zero-shot (Table 1, Table 3's Partition and CP rows).
stage "eval_infocse" {
  uses       = "evaluate.retrieval"
  encoder    = repeat.infocse.last.model
  data       = stage.zero_shot.documents
  similarity = var.pretrain.similarity
}

# ---- Table 3: convergence, a fixed three IDC rounds (Iter-1..3) ---------------
#
# The paper reports each of three rounds. Their stages are infocse's first
# three rounds' (the same inputs and parameters, so the same cache keys:
# each runs once), plus a zero-shot evaluation per round.

repeat "idc" {
  rounds = 3
  start  = { model = stage.conpono.model }
  stage "idc_pairs" {
    uses       = "annotate.idc"
    model      = previous.model
    documents  = stage.unlabeled.documents
    extra      = stage.brown.documents
    top_k      = 1
    similarity = var.pretrain.similarity
  }
  stage "idc_train" {
    uses       = "train.infonce"
    init       = previous.model
    data       = stage.idc_pairs.pairs
    validation = stage.split.validation
    params     = var.pretrain
  }
  stage "idc_eval" {
    uses       = "evaluate.retrieval"
    encoder    = stage.idc_train.model
    data       = stage.zero_shot.documents
    similarity = var.pretrain.similarity
  }
  next = { model = stage.idc_train.model, metrics = stage.idc_eval.metrics, stats = stage.idc_pairs.stats }
}

# ---- Table 3: IDC with K-means global clusters (2 rounds, where InfoCSE converges) --

repeat "kmeans" {
  rounds = 2
  start  = { model = stage.conpono.model }
  stage "km_pairs" {
    uses       = "annotate.idc_kmeans"
    model      = previous.model
    documents  = stage.unlabeled.documents
    extra      = stage.brown.documents
    clusters   = 10
    similarity = var.pretrain.similarity
  }
  stage "km_train" {
    uses       = "train.infonce"
    init       = previous.model
    data       = stage.km_pairs.pairs
    validation = stage.split.validation
    params     = var.pretrain
  }
  next = { model = stage.km_train.model, stats = stage.km_pairs.stats }
}

stage "eval_kmeans" {
  uses       = "evaluate.retrieval"
  encoder    = repeat.kmeans.last.model
  data       = stage.zero_shot.documents
  similarity = var.pretrain.similarity
}

# ---- Table 3: other initialisations (SimCSE, ICT), 2 rounds each ------------

repeat "idc_sc" {
  rounds = 2
  start  = { model = stage.simcse.model }
  stage "sc_pairs" {
    uses       = "annotate.idc"
    model      = previous.model
    documents  = stage.unlabeled.documents
    extra      = stage.brown.documents
    top_k      = 1
    similarity = var.pretrain.similarity
  }
  stage "sc_train" {
    uses       = "train.infonce"
    init       = previous.model
    data       = stage.sc_pairs.pairs
    validation = stage.split.validation
    params     = var.pretrain
  }
  next = { model = stage.sc_train.model }
}

repeat "idc_ict" {
  rounds = 2
  start  = { model = stage.ict.model }
  stage "ict_idc_pairs" {
    uses       = "annotate.idc"
    model      = previous.model
    documents  = stage.unlabeled.documents
    extra      = stage.brown.documents
    top_k      = 1
    similarity = var.pretrain.similarity
  }
  stage "ict_idc_train" {
    uses       = "train.infonce"
    init       = previous.model
    data       = stage.ict_idc_pairs.pairs
    validation = stage.split.validation
    params     = var.pretrain
  }
  next = { model = stage.ict_idc_train.model }
}

stage "eval_idc_sc" {
  uses       = "evaluate.retrieval"
  encoder    = repeat.idc_sc.last.model
  data       = stage.zero_shot.documents
  similarity = var.pretrain.similarity
}

stage "eval_idc_ict" {
  uses       = "evaluate.retrieval"
  encoder    = repeat.idc_ict.last.model
  data       = stage.zero_shot.documents
  similarity = var.pretrain.similarity
}

# ---- Table 2: few-shot fine-tuning on (document, headline) pairs -----------
#
# Each encoder fine-tuned on 1,000 labelled articles and on all 1,389, model
# selection on the validation articles, R@5 on the 500 test articles. "BERT"
# is the encoder before any self-supervision (bert-base-uncased in the paper
# profile).

stage "ft_bert_1k" {
  uses          = "train.headline"
  hf_checkpoint = var.bert
  from_scratch  = false
  data          = stage.split.labeled
  validation    = stage.split.validation
  params        = var.finetune
}

stage "test_bert_1k" {
  uses       = "evaluate.retrieval"
  encoder    = stage.ft_bert_1k.model
  data       = stage.split.test
  similarity = var.finetune.similarity
}

stage "ft_simcse_1k" {
  uses       = "train.headline"
  init       = stage.simcse.model
  data       = stage.split.labeled
  validation = stage.split.validation
  params     = var.finetune
}

stage "test_simcse_1k" {
  uses       = "evaluate.retrieval"
  encoder    = stage.ft_simcse_1k.model
  data       = stage.split.test
  similarity = var.finetune.similarity
}

stage "ft_ict_1k" {
  uses       = "train.headline"
  init       = stage.ict.model
  data       = stage.split.labeled
  validation = stage.split.validation
  params     = var.finetune
}

stage "test_ict_1k" {
  uses       = "evaluate.retrieval"
  encoder    = stage.ft_ict_1k.model
  data       = stage.split.test
  similarity = var.finetune.similarity
}

stage "ft_conpono_1k" {
  uses       = "train.headline"
  init       = stage.conpono.model
  data       = stage.split.labeled
  validation = stage.split.validation
  params     = var.finetune
}

stage "test_conpono_1k" {
  uses       = "evaluate.retrieval"
  encoder    = stage.ft_conpono_1k.model
  data       = stage.split.test
  similarity = var.finetune.similarity
}

stage "ft_infocse_1k" {
  uses       = "train.headline"
  init       = repeat.infocse.last.model
  data       = stage.split.labeled
  validation = stage.split.validation
  params     = var.finetune
}

stage "test_infocse_1k" {
  uses       = "evaluate.retrieval"
  encoder    = stage.ft_infocse_1k.model
  data       = stage.split.test
  similarity = var.finetune.similarity
}

stage "ft_bert_all" {
  uses          = "train.headline"
  hf_checkpoint = var.bert
  from_scratch  = false
  data          = stage.split.labeled_all
  validation    = stage.split.validation
  params        = var.finetune
}

stage "test_bert_all" {
  uses       = "evaluate.retrieval"
  encoder    = stage.ft_bert_all.model
  data       = stage.split.test
  similarity = var.finetune.similarity
}

stage "ft_simcse_all" {
  uses       = "train.headline"
  init       = stage.simcse.model
  data       = stage.split.labeled_all
  validation = stage.split.validation
  params     = var.finetune
}

stage "test_simcse_all" {
  uses       = "evaluate.retrieval"
  encoder    = stage.ft_simcse_all.model
  data       = stage.split.test
  similarity = var.finetune.similarity
}

stage "ft_ict_all" {
  uses       = "train.headline"
  init       = stage.ict.model
  data       = stage.split.labeled_all
  validation = stage.split.validation
  params     = var.finetune
}

stage "test_ict_all" {
  uses       = "evaluate.retrieval"
  encoder    = stage.ft_ict_all.model
  data       = stage.split.test
  similarity = var.finetune.similarity
}

stage "ft_conpono_all" {
  uses       = "train.headline"
  init       = stage.conpono.model
  data       = stage.split.labeled_all
  validation = stage.split.validation
  params     = var.finetune
}

stage "test_conpono_all" {
  uses       = "evaluate.retrieval"
  encoder    = stage.ft_conpono_all.model
  data       = stage.split.test
  similarity = var.finetune.similarity
}

stage "ft_infocse_all" {
  uses       = "train.headline"
  init       = repeat.infocse.last.model
  data       = stage.split.labeled_all
  validation = stage.split.validation
  params     = var.finetune
}

stage "test_infocse_all" {
  uses       = "evaluate.retrieval"
  encoder    = stage.ft_infocse_all.model
  data       = stage.split.test
  similarity = var.finetune.similarity
}

# ---- Table 3: InfoCSE++ (1000 labels) ------------------------------------------
#
# Figure 3: InfoCSE's model is fine-tuned on the labels; the fine-tuned
# model is sent back to InfoCSE (two IDC rounds, where InfoCSE converges),
# fine-tuned again, and so on "until the fine-tuning performance stops
# growing"; "the best fine-tuned model will be returned" -- the first
# fine-tuned model (Table 3's "Fine-tuned" row) among the candidates. So a
# round here fine-tunes the model it receives (round 1: InfoCSE's, the same
# stage as ft_infocse_*), validates and tests the result, and then runs the
# two IDC rounds on it for the next round. Rounds go on until the fine-tuned
# model's validation R@5 stops improving (patience 1, at most 4: the
# fine-tuned InfoCSE and three InfoCSE++ rounds); repeat.pp_1k.last is the
# best fine-tuned model. The price of writing the first fine-tuned model
# into the loop: the last round's two IDC rounds train a model no round
# fine-tunes. (The mini and ci profiles keep the order of their recorded
# baselines: IDC first, the fine-tuned InfoCSE no candidate; their profile
# blocks rewire it.)

repeat "pp_1k" {
  rounds = 4
  until  = { metric = stage.pp_1k_val.metrics.r5, patience = 1 }
  start  = { model = stage.ft_infocse_1k.model, pretrained = repeat.infocse.last.model }
  stage "pp_1k_ft" {
    uses       = "train.headline"
    init       = previous.pretrained
    data       = stage.split.labeled
    validation = stage.split.validation
    params     = var.finetune
  }
  stage "pp_1k_val" {
    uses       = "evaluate.retrieval"
    encoder    = stage.pp_1k_ft.model
    data       = stage.split.validation
    similarity = var.finetune.similarity
  }
  stage "pp_1k_test" {
    uses       = "evaluate.retrieval"
    encoder    = stage.pp_1k_ft.model
    data       = stage.split.test
    similarity = var.finetune.similarity
  }
  stage "pp_1k_pairs_a" {
    uses       = "annotate.idc"
    model      = stage.pp_1k_ft.model
    documents  = stage.unlabeled.documents
    extra      = stage.brown.documents
    top_k      = 1
    similarity = var.pretrain.similarity
  }
  stage "pp_1k_train_a" {
    uses       = "train.infonce"
    init       = stage.pp_1k_ft.model
    data       = stage.pp_1k_pairs_a.pairs
    validation = stage.split.validation
    params     = var.pretrain
  }
  stage "pp_1k_pairs_b" {
    uses       = "annotate.idc"
    model      = stage.pp_1k_train_a.model
    documents  = stage.unlabeled.documents
    extra      = stage.brown.documents
    top_k      = 1
    similarity = var.pretrain.similarity
  }
  stage "pp_1k_train_b" {
    uses       = "train.infonce"
    init       = stage.pp_1k_train_a.model
    data       = stage.pp_1k_pairs_b.pairs
    validation = stage.split.validation
    params     = var.pretrain
  }
  next = { model = stage.pp_1k_ft.model, pretrained = stage.pp_1k_train_b.model, validation = stage.pp_1k_val.metrics, test = stage.pp_1k_test.metrics }
}

# ---- Table 3: InfoCSE++ (all labels) ------------------------------------------
#
# Figure 3: InfoCSE's model is fine-tuned on the labels; the fine-tuned
# model is sent back to InfoCSE (two IDC rounds, where InfoCSE converges),
# fine-tuned again, and so on "until the fine-tuning performance stops
# growing"; "the best fine-tuned model will be returned" -- the first
# fine-tuned model (Table 3's "Fine-tuned" row) among the candidates. So a
# round here fine-tunes the model it receives (round 1: InfoCSE's, the same
# stage as ft_infocse_*), validates and tests the result, and then runs the
# two IDC rounds on it for the next round. Rounds go on until the fine-tuned
# model's validation R@5 stops improving (patience 1, at most 4: the
# fine-tuned InfoCSE and three InfoCSE++ rounds); repeat.pp_all.last is the
# best fine-tuned model. The price of writing the first fine-tuned model
# into the loop: the last round's two IDC rounds train a model no round
# fine-tunes. (The mini and ci profiles keep the order of their recorded
# baselines: IDC first, the fine-tuned InfoCSE no candidate; their profile
# blocks rewire it.)

repeat "pp_all" {
  rounds = 4
  until  = { metric = stage.pp_all_val.metrics.r5, patience = 1 }
  start  = { model = stage.ft_infocse_all.model, pretrained = repeat.infocse.last.model }
  stage "pp_all_ft" {
    uses       = "train.headline"
    init       = previous.pretrained
    data       = stage.split.labeled_all
    validation = stage.split.validation
    params     = var.finetune
  }
  stage "pp_all_val" {
    uses       = "evaluate.retrieval"
    encoder    = stage.pp_all_ft.model
    data       = stage.split.validation
    similarity = var.finetune.similarity
  }
  stage "pp_all_test" {
    uses       = "evaluate.retrieval"
    encoder    = stage.pp_all_ft.model
    data       = stage.split.test
    similarity = var.finetune.similarity
  }
  stage "pp_all_pairs_a" {
    uses       = "annotate.idc"
    model      = stage.pp_all_ft.model
    documents  = stage.unlabeled.documents
    extra      = stage.brown.documents
    top_k      = 1
    similarity = var.pretrain.similarity
  }
  stage "pp_all_train_a" {
    uses       = "train.infonce"
    init       = stage.pp_all_ft.model
    data       = stage.pp_all_pairs_a.pairs
    validation = stage.split.validation
    params     = var.pretrain
  }
  stage "pp_all_pairs_b" {
    uses       = "annotate.idc"
    model      = stage.pp_all_train_a.model
    documents  = stage.unlabeled.documents
    extra      = stage.brown.documents
    top_k      = 1
    similarity = var.pretrain.similarity
  }
  stage "pp_all_train_b" {
    uses       = "train.infonce"
    init       = stage.pp_all_train_a.model
    data       = stage.pp_all_pairs_b.pairs
    validation = stage.split.validation
    params     = var.pretrain
  }
  next = { model = stage.pp_all_ft.model, pretrained = stage.pp_all_train_b.model, validation = stage.pp_all_val.metrics, test = stage.pp_all_test.metrics }
}

# ---- the paper's News column (x 100) -----------------------------------------

# Table 1: zero-shot, on the 1,889 articles outside the validation set.
expect "t1_simcse" {
  for_each  = { "R@5" = 32.36, "R@10" = 37.33, "R@20" = 47.44 }
  row       = "Table 1: SimCSE"
  column    = each.key
  value     = stage.eval_simcse.metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t1_ict" {
  for_each  = { "R@5" = 38.72, "R@10" = 45.40, "R@20" = 55.89 }
  row       = "Table 1: ICT"
  column    = each.key
  value     = stage.eval_ict.metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t1_conpono" {
  for_each  = { "R@5" = 42.57, "R@10" = 50.10, "R@20" = 59.80 }
  row       = "Table 1: CONPONO"
  column    = each.key
  value     = stage.eval_conpono.metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t1_infocse" {
  for_each  = { "R@5" = 63.45, "R@10" = 70.16, "R@20" = 78.64 }
  row       = "Table 1: InfoCSE"
  column    = each.key
  value     = stage.eval_infocse.metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

# Table 2: few-shot R@5 on the 500 test articles. Our label budgets are 1,000
# and all 1,389; the paper's second column is 2,000 labels (its 5,000 column
# has no counterpart here).
expect "t2_bert_1k" {
  row       = "Table 2: BERT"
  column    = "1,000"
  value     = stage.test_bert_1k.metrics.r5
  paper     = var.mind != "" ? 35.46 : null
  tolerance = 1.0
}

expect "t2_bert_all" {
  row       = "Table 2: BERT"
  column    = "all 1,389 (paper: 2,000)"
  value     = stage.test_bert_all.metrics.r5
  paper     = var.mind != "" ? 37.42 : null
  tolerance = 1.0
}

expect "t2_simcse_1k" {
  row       = "Table 2: SimCSE"
  column    = "1,000"
  value     = stage.test_simcse_1k.metrics.r5
  paper     = var.mind != "" ? 43.26 : null
  tolerance = 1.0
}

expect "t2_simcse_all" {
  row       = "Table 2: SimCSE"
  column    = "all 1,389 (paper: 2,000)"
  value     = stage.test_simcse_all.metrics.r5
  paper     = var.mind != "" ? 44.60 : null
  tolerance = 1.0
}

expect "t2_ict_1k" {
  row       = "Table 2: ICT"
  column    = "1,000"
  value     = stage.test_ict_1k.metrics.r5
  paper     = var.mind != "" ? 53.51 : null
  tolerance = 1.0
}

expect "t2_ict_all" {
  row       = "Table 2: ICT"
  column    = "all 1,389 (paper: 2,000)"
  value     = stage.test_ict_all.metrics.r5
  paper     = var.mind != "" ? 54.77 : null
  tolerance = 1.0
}

expect "t2_conpono_1k" {
  row       = "Table 2: CONPONO"
  column    = "1,000"
  value     = stage.test_conpono_1k.metrics.r5
  paper     = var.mind != "" ? 54.30 : null
  tolerance = 1.0
}

expect "t2_conpono_all" {
  row       = "Table 2: CONPONO"
  column    = "all 1,389 (paper: 2,000)"
  value     = stage.test_conpono_all.metrics.r5
  paper     = var.mind != "" ? 54.67 : null
  tolerance = 1.0
}

expect "t2_infocse_1k" {
  row       = "Table 2: InfoCSE"
  column    = "1,000"
  value     = stage.test_infocse_1k.metrics.r5
  paper     = var.mind != "" ? 64.84 : null
  tolerance = 1.0
}

expect "t2_infocse_all" {
  row       = "Table 2: InfoCSE"
  column    = "all 1,389 (paper: 2,000)"
  value     = stage.test_infocse_all.metrics.r5
  paper     = var.mind != "" ? 66.11 : null
  tolerance = 1.0
}

# Table 3: InfoCSE++ against the fine-tuned InfoCSE (few-shot, test articles).
expect "t3_ft_1k" {
  for_each  = { "R@5" = 64.84, "R@10" = 71.71, "R@20" = 79.92 }
  row       = "Table 3: Fine-tuned (1000)"
  column    = each.key
  value     = stage.test_infocse_1k.metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t3_pp_1k" {
  for_each  = { "R@5" = 68.52, "R@10" = 75.01, "R@20" = 82.68 }
  row       = "Table 3: InfoCSE++ (1000)"
  column    = each.key
  value     = repeat.pp_1k.last.test[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t3_ft_all" {
  for_each  = { "R@5" = 69.27, "R@10" = 75.59, "R@20" = 83.07 }
  row       = "Table 3: Fine-tuned (All)"
  column    = each.key
  value     = stage.test_infocse_all.metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t3_pp_all" {
  for_each  = { "R@5" = 70.33, "R@10" = 76.53, "R@20" = 84.07 }
  row       = "Table 3: InfoCSE++ (All)"
  column    = each.key
  value     = repeat.pp_all.last.test[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

# Table 3: clustering, convergence and initialisation (zero-shot).
expect "t3_kmeans" {
  for_each  = { "R@5" = 53.43, "R@10" = 61.11, "R@20" = 70.99 }
  row       = "Table 3: IDC (K-Means)"
  column    = each.key
  value     = stage.eval_kmeans.metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t3_partition" {
  for_each  = { "R@5" = 63.45, "R@10" = 70.16, "R@20" = 78.64 }
  row       = "Table 3: IDC (Partition)"
  column    = each.key
  value     = stage.eval_infocse.metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t3_iter1" {
  for_each  = { "R@5" = 57.21, "R@10" = 64.21, "R@20" = 73.32 }
  row       = "Table 3: InfoCSE (Iter-1)"
  column    = each.key
  value     = repeat.idc.round[1].metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t3_iter2" {
  for_each  = { "R@5" = 63.45, "R@10" = 70.16, "R@20" = 78.64 }
  row       = "Table 3: InfoCSE (Iter-2)"
  column    = each.key
  value     = repeat.idc.round[2].metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t3_iter3" {
  for_each  = { "R@5" = 63.41, "R@10" = 69.99, "R@20" = 78.60 }
  row       = "Table 3: InfoCSE (Iter-3)"
  column    = each.key
  value     = repeat.idc.round[3].metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t3_cp" {
  for_each  = { "R@5" = 63.45, "R@10" = 70.16, "R@20" = 78.64 }
  row       = "Table 3: InfoCSE (CP)"
  column    = each.key
  value     = stage.eval_infocse.metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t3_sc" {
  for_each  = { "R@5" = 61.55, "R@10" = 68.59, "R@20" = 77.42 }
  row       = "Table 3: InfoCSE (SC)"
  column    = each.key
  value     = stage.eval_idc_sc.metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

expect "t3_ict" {
  for_each  = { "R@5" = 63.02, "R@10" = 69.73, "R@20" = 78.30 }
  row       = "Table 3: InfoCSE (ICT)"
  column    = each.key
  value     = stage.eval_idc_ict.metrics[local.recall[each.key]]
  paper     = var.mind != "" ? each.value : null
  tolerance = 1.0
}

# ---- mini: the pretrained mini BERT on this machine ------------------------
#
# No BERT-base can be had here: every initial encoder (CONPONO, ICT, SimCSE,
# and the "BERT" row of Table 2) starts from the mini BERT of
# experiments/pretrained.hcl after its fourth phase (bert_4; 4 layers,
# width 128, FFN 512, masked-LM on the
# local Wikipedia, BBC and Brown sentences; pretrained once, cached, shared
# with the other experiments). Training stages take 60 updates at batch 64
# (the paper: up to 0.2M at batch 3,200) with one validation, at the end;
# fine-tuning is one epoch on the first 3 sentences of each article.
# Cosine / 0.05 replaces the raw inner product (a small model's vectors are
# far from unit length) in training and in IDC's edge weights alike.
#
# Cut to fit 20 minutes beyond the cached pretraining (before the cuts the
# profile was estimated at about 50 CPU-minutes, most of it encoding
# sentences for IDC rounds and zero-shot evaluations):
# - the unlabeled corpus: a seeded 500 of the 2,089 articles (9,782
#   sentences, all five categories) and the first 20 Brown documents (2,109
#   sentences). Every IDC round (13 here) encodes all of it, and 60 updates
#   at batch 64 read only 3,840 pairs: one round over these 520 documents
#   gives 32,000-37,000, so more articles only cost time. CONPONO and ICT
#   read the same documents.
# - the zero-shot test set (Table 1, Table 3's lower rows): a seeded 800 of
#   the 1,889 non-validation articles (15,319 sentences), so R@k ranks
#   each article's headline among 800 candidates, not 1,889 (recall is
#   higher than on all of them; every row is scored on the same 800).
#   Nine such evaluations run.
# - one validation per training stage, at its end (eval_every =
#   max_steps), instead of two: each costs an encoding of the 200
#   validation articles, and 31 stages validate.
# - InfoCSE++ one alternation with 1,000 labels and one with all (the ci
#   profile runs two with its "1,000" budget, so that `until` decides
#   there).
# The few-shot split stays the issue's: 200 validation, 500 test, 1,000 and
# all 1,389 labels. Measured, seed 42, on the shared 2-core machine (load
# about 3-4, beside other runs; about two thirds of a core): 30.7
# CPU-minutes (user + system) and 47 minutes wall; from the BERT's first
# phase, at load 5-15, 30.1 and 52. On a quiet 2-core machine, where two stages run at once and each
# spreads its matrix products over both cores, that is about 15-18 minutes
# (an estimate: no quiet machine could be had).
#
# What this profile can show: whether IDC's pairs train a better retriever
# than CONPONO's neighbours, ICT or SimCSE, whether rounds and K-means vs
# partition change recall, and whether fine-tuning and InfoCSE++ help, at a
# scale where a model learns mostly which words two texts share. What it
# cannot: the paper's absolute numbers (a 5M-parameter model, 60 updates,
# 800 or 500 candidates instead of MIND's 180,000), or its claims about
# what BERT-base does with IDC's semantically related but lexically
# different pairs.
profile "mini" {
  # The data directory's stand-in for MIND: BBC News.
  stage "news" {
    source = "bbc"
  }
  stage "news_sentences" {
    source = "bbc"
  }
  variables = {
    pretrain = {
      learning_rate = 2e-4
      batch_size    = 64
      max_steps     = 60
      eval_every    = 60
      patience      = 0
      similarity    = "cosine"
      temperature   = 0.05
      pooling       = "mean"
      # the selection's R@5 and evaluate.retrieval rank by the cosine too
      validation_similarity = "cosine"
    }
    finetune = {
      learning_rate = 2e-4
      batch_size    = 64
      epochs        = 1
      patience      = 0
      max_sentences = 3
      similarity    = "cosine"
      temperature   = 0.05
      pooling       = "mean"
      # the selection's R@5 and evaluate.retrieval rank by the cosine too
      validation_similarity = "cosine"
    }
  }
  # Every IDC round encodes the whole unlabeled corpus.
  stage "brown" {
    limit = 20
  }
  stage "unlabeled" {
    size = 500
  }
  stage "zero_shot" {
    size = 800
  }
  stage "conpono" {
    init = module.pretrained.bert_4.model
  }
  stage "ict" {
    init                = module.pretrained.bert_4.model
    positive_max_length = 64
  }
  stage "simcse" {
    init           = module.pretrained.bert_4.model
    pooling        = "mean"
    mlp_only_train = false
    learning_rate  = 1e-4
    max_steps      = 60
  }
  stage "ft_bert_1k" {
    init = module.pretrained.bert_4.model
  }
  stage "ft_bert_all" {
    init = module.pretrained.bert_4.model
  }
  repeat "pp_1k" {
    rounds = 1
  }
  repeat "pp_all" {
    rounds = 1
  }
  # InfoCSE as recorded: Table 1 and the fine-tuning read IDC's fixed round
  # 2, and InfoCSE++ trains IDC first, its starting fine-tuned model no
  # candidate (deviation fixed_rounds). Repeat infocse, whose rounds cannot
  # be left out, runs one round of idc's own stages (cached with them),
  # scored on the zero-shot set as idc_eval is, and nothing reads it.
  repeat "infocse" {
    rounds = 1
  }
  stage "infocse_val" {
    data = stage.zero_shot.documents
  }
  stage "eval_infocse" {
    encoder = repeat.idc.round[2].model
  }
  stage "ft_infocse_1k" {
    init = repeat.idc.round[2].model
  }
  stage "ft_infocse_all" {
    init = repeat.idc.round[2].model
  }
  stage "pp_1k_pairs_a" {
    model = previous.model
  }
  stage "pp_1k_train_a" {
    init = previous.model
  }
  stage "pp_1k_ft" {
    init = stage.pp_1k_train_b.model
  }
  stage "pp_all_pairs_a" {
    model = previous.model
  }
  stage "pp_all_train_a" {
    init = previous.model
  }
  stage "pp_all_ft" {
    init = stage.pp_all_train_b.model
  }
  deviation "fixed_rounds" {
    what   = "InfoCSE's rounds and InfoCSE++'s candidates in this profile"
    paper  = "IDC rounds until validation stops improving, the best returned; InfoCSE++ returns the best fine-tuned model, the first one included"
    ours   = "Table 1, Table 2's InfoCSE rows and Table 3's Partition and CP rows read round 2 of a fixed three; InfoCSE++ starts with IDC on the fine-tuned InfoCSE, which is no candidate"
    why    = "the recorded baseline was made so; the paper profile follows the paper"
    tables = ["Table 1", "Table 2", "Table 3"]
  }
}

# ---- ci: the whole pipeline in about five minutes ----------------------------
#
# Every stage of the paper's tables on a slice of the data (300 BBC
# articles, 10 Brown documents), starting from the ci profile's pretrained
# BERT (2 layers, 200 masked-LM updates), 20 updates per training stage
# with one validation at the end, IDC and K-means 2 rounds each as in the
# paper profile, the SimCSE and ICT initialisations 1 round, InfoCSE++ up to
# 2 alternations with 100 labels (so `until` decides in CI) and 1 with all
# 150. It checks that the pipeline runs and that its numbers stay where the
# recorded baseline puts them (results/infocse.ci.json); it shows nothing
# about the paper.
profile "ci" {
  # The data directory's stand-in for MIND: BBC News.
  stage "news" {
    source = "bbc"
  }
  stage "news_sentences" {
    source = "bbc"
  }
  variables = {
    pretrain = {
      learning_rate = 1e-3
      batch_size    = 32
      max_steps     = 20
      eval_every    = 20
      patience      = 0
      similarity    = "cosine"
      temperature   = 0.05
      pooling       = "mean"
      # the selection's R@5 and evaluate.retrieval rank by the cosine too
      validation_similarity = "cosine"
    }
    finetune = {
      learning_rate = 1e-3
      batch_size    = 32
      epochs        = 1
      patience      = 0
      max_sentences = 3
      similarity    = "cosine"
      temperature   = 0.05
      pooling       = "mean"
      # the selection's R@5 and evaluate.retrieval rank by the cosine too
      validation_similarity = "cosine"
    }
  }
  stage "news" {
    limit = 300
  }
  stage "brown" {
    limit = 10
  }
  stage "news_sentences" {
    limit = 5000
  }
  stage "split" {
    validation = 50
    test       = 100
    labels     = 100
  }
  stage "conpono" {
    init = module.pretrained.bert.model
  }
  stage "ict" {
    init                = module.pretrained.bert.model
    positive_max_length = 48
  }
  stage "simcse" {
    init           = module.pretrained.bert.model
    pooling        = "mean"
    mlp_only_train = false
    learning_rate  = 1e-3
    batch_size     = 32
    max_steps      = 20
  }
  stage "ft_bert_1k" {
    init = module.pretrained.bert.model
  }
  stage "ft_bert_all" {
    init = module.pretrained.bert.model
  }
  repeat "idc_sc" {
    rounds = 1
  }
  repeat "idc_ict" {
    rounds = 1
  }
  repeat "pp_1k" {
    rounds = 2
  }
  repeat "pp_all" {
    rounds = 1
  }
  # InfoCSE as recorded: Table 1 and the fine-tuning read IDC's fixed round
  # 2, and InfoCSE++ trains IDC first, its starting fine-tuned model no
  # candidate (deviation fixed_rounds). Repeat infocse, whose rounds cannot
  # be left out, runs one round of idc's own stages (cached with them),
  # scored on the zero-shot set as idc_eval is, and nothing reads it.
  repeat "infocse" {
    rounds = 1
  }
  stage "infocse_val" {
    data = stage.zero_shot.documents
  }
  stage "eval_infocse" {
    encoder = repeat.idc.round[2].model
  }
  stage "ft_infocse_1k" {
    init = repeat.idc.round[2].model
  }
  stage "ft_infocse_all" {
    init = repeat.idc.round[2].model
  }
  stage "pp_1k_pairs_a" {
    model = previous.model
  }
  stage "pp_1k_train_a" {
    init = previous.model
  }
  stage "pp_1k_ft" {
    init = stage.pp_1k_train_b.model
  }
  stage "pp_all_pairs_a" {
    model = previous.model
  }
  stage "pp_all_train_a" {
    init = previous.model
  }
  stage "pp_all_ft" {
    init = stage.pp_all_train_b.model
  }
  deviation "fixed_rounds" {
    what   = "InfoCSE's rounds and InfoCSE++'s candidates in this profile"
    paper  = "IDC rounds until validation stops improving, the best returned; InfoCSE++ returns the best fine-tuned model, the first one included"
    ours   = "Table 1, Table 2's InfoCSE rows and Table 3's Partition and CP rows read round 2 of a fixed three; InfoCSE++ starts with IDC on the fine-tuned InfoCSE, which is no candidate"
    why    = "the recorded baseline was made so; the paper profile follows the paper"
    tables = ["Table 1", "Table 2", "Table 3"]
  }
}
