# GenSE: Generate, Discriminate and Contrast (Chen et al. 2022; paper:
# ../shared/papers/gense.md), section 2 as stages:
#
#   1. instances: each NLI triplet gives T_e(x) -> x_entail, T_c(x) ->
#      x_contra, T_d(x, x_entail) -> true, T_d(x, x_contra) -> false
#      (Table 1's prompts, verbatim), generation and discrimination mixed
#      equally: stage.instances.instances is the JSONL a reader can open;
#   2. one T5 trained jointly as generator and discriminator (train.seq2seq);
#   3. synthesis: T_e(u) and T_c(u) sampled with nucleus p = 0.9 for every
#      unlabeled sentence u (two generate.complete stages, same sentences and
#      seed);
#   4. quality check: T_d(u, u_entail) and T_d(u, u_contra) scored by the
#      discriminator; a triplet is kept when P(true) and P(false), normalised
#      over the two label sequences, both reach alpha = 0.9
#      (synth.quality_check; counts per reason in its log, metrics and
#      samples.md, the pass rate at 0.9 always);
#   5. prompt-based contrastive learning (train.t5_contrastive: T_s around
#      the input, pad fed to the decoder, its first output the embedding;
#      eq. 2 with hard negatives, tau 0.05): first on the synthetic
#      triplets (batch 1024), then on NLI (batch 512), lr 5e-5 both.
#
# The stage blocks hold the paper's settings on T5-base (-var t5=DIR, a local
# Hugging Face t5-base directory) and the paper's data: SimCSE's NLI training
# set (-var simcse_nli=nli_for_simcse.csv), C4 as allenai/c4 publishes it
# (-var c4=c4-train.NNNNN-of-01024.json.gz), and for the Transfer column and
# domain adaptation AskUbuntu: its test set as MTEB publishes it (-var
# askubuntu=test.jsonl.gz) and its unlabelled training set, the paper's
# in-domain sentences, as USEB (TSDAE's data) publishes it (-var
# askubuntu_train=train.txt, data-train/askubuntu/unsupervised/); without
# them the run refuses before any stage starts, naming every stage that
# needs each. The mini and ci profiles read the data directory's
# stand-ins: the dev/test-derived SNLI+MNLI triplets (8,816, see
# ../shared/data/README.md), the local Wikipedia, BBC and Brown sentences
# (STS text excluded) and the SemEval-2016 CQA question reranking task (its
# dev split measured, its train_part2 questions the in-domain text). Every
# other difference from the paper is a deviation block below, printed under
# the table.
#
# Beyond section 2's chain, this file runs (new stages, declared where they
# are): Table 8's retrieval baseline (BM25 over the unlabeled corpus,
# pairs labelled by the generator/discriminator under T_d -- an NLI-trained
# cross-encoder, where the paper trained a separate one -- eq. 3, then NLI);
# domain adaptation (section 2.3) to AskUbuntu from its unlabelled training
# set (the mini and ci profiles: to the CQA stand-in from its train_part2
# questions); and Figure 2 (figure.scatter: alignment against uniformity of
# the evaluated encoders, a PNG beside the report and its values in
# points.json).
#
# Not reproducible here, declared as pending cells below: Table 3's and the
# Transfer columns' other tasks (CQADupStack, Twitter, BIOSSES and their
# in-domain sets; the paper profile measures AskUbuntu, the mini and ci
# profiles the SemEval-2016 CQA reranking MAP, openly labelled, without
# paper values), GenSE-QA / GenSE+ (ELI5, GooAQ, Yahoo QA are not here) and
# back-translation (Table 8: needs translation models).

experiment "gense" {
  title = "GenSE: semi-supervised sentence embeddings from a T5 generator/discriminator and prompt-based contrastive learning"
  table = "STS test Spearman x 100 (Table 2); AskUbuntu MAP (Table 3; the CQA stand-in in the mini and ci profiles); STS-B dev and that MAP for the ablations"
  paper = "gense.md"
}

variable "seed" {
  default = 42
}

variable "t5" {
  description = "local Hugging Face T5-base directory (config.json, model.safetensors, spiece.model or tokenizer.json): the paper profile's weights"
  default     = ""
}

# The small T5 the mini and ci profiles start from: span-corruption
# pretraining on the local Wikipedia sentences (experiments/t5.hcl; its own
# mini/ci profile follows this file's). The paper profile reads var.t5 and
# never references it, so it runs none of it.
module "t5" {
  source = "./t5.hcl"
}

variable "simcse_nli" {
  description = "SimCSE's NLI training set (the paper's NLI): a local nli_for_simcse.csv (sent0,sent1,hard_neg; 275,601 SNLI+MNLI train triplets)"
  default     = ""
}

variable "c4" {
  description = "the unlabeled sentences: a C4 file as allenai/c4 publishes it (en/c4-train.NNNNN-of-01024.json.gz); each text line is one sentence"
  default     = ""
}

variable "askubuntu" {
  description = "AskUbuntu's test set as MTEB publishes it: a local askubuntudupquestions-reranking test.jsonl.gz (the Transfer column's AskU., Table 3)"
  default     = ""
}

variable "askubuntu_train" {
  description = "AskUbuntu's unlabelled training set, the paper's in-domain sentences for domain adaptation (section 3.1, after TSDAE): USEB's data-train/askubuntu/unsupervised/train.txt, one sentence a line"
  default     = ""
}

# The authors' released encoders (mattymchen/gense-base: GenSE; mattymchen/gense-base-plus:
# GenSE+, Table 2), each a local copy by -var; every one given adds a
# "(released)" row beside the paper's number. Unset (the default), the row
# is absent and nothing refuses.
variable "released_gense" {
  description = "the authors' released GenSE encoder: a local mattymchen/gense-base directory (adds its row)"
  default     = ""
}

variable "released_gense_plus" {
  description = "the authors' released GenSE+ encoder: a local mattymchen/gense-base-plus directory (adds its row)"
  default     = ""
}

variable "t5_small" {
  description = "local Hugging Face T5-small directory, for Table 5 (run the paper profile again with -var t5=$t5_small)"
  default     = ""
}

locals {
  sts = {
    STS12   = "sts12", STS13 = "sts13", STS14 = "sts14", STS15 = "sts15", STS16 = "sts16",
    "STS-B" = "stsb", "SICK-R" = "sickr", Avg = "avg"
  }
  # Table 1, verbatim ([X1], [X2] the placeholders; [X] for T_s).
  t_e = "Write two sentences that are entailment. Sentence 1: \"[X1]\" Sentence 2:"
  t_c = "Write two sentences that are contradictory. Sentence 1: \"[X1]\" Sentence 2:"
  t_d = "if \"[X1]\", does this mean that \"[X2]\"? true or false"
  t_s = "[X] Question: what can we draw from the above sentence?"
  # generate.complete's one placeholder is [X].
  t_e_gen = replace(local.t_e, "[X1]", "[X]")
  t_c_gen = replace(local.t_c, "[X1]", "[X]")

  # Synthesis (step 3): one nucleus sample (p = 0.9) per unlabeled sentence.
  nucleus = { samples = 1, temperature = 1, top_k = 0, top_p = 0.9, max_new_tokens = 64, batch_size = 64, show = 10 }
  # The discriminator's T_d judgement: the quality checks (step 4) and the
  # retrieval baseline's labeller.
  discriminate = { template = local.t_d, true_label = "true", false_label = "false", batch_size = 64, show = 10 }
  # Prompt-based contrastive learning (step 5: T_s, eq. 2 with hard negatives,
  # tau 0.05, lr 5e-5) ...
  contrastive = {
    mode           = "encdec"
    template       = local.t_s
    temperature    = 0.05
    hard_negatives = true
    learning_rate  = 5e-5
    eval_every     = 250
    max_length     = 64
  }
  # The released encoders read as ours are: T_s around the input, the first
  # decoder output, the paper profile's longest input.
  released_encoder = { mode = "encdec", template = local.t_s, max_length = 64 }
  # Table 2's rows of the released models, shared by our row and its.
  paper_gense = {
    STS12   = 80.72, STS13 = 87.43, STS14 = 83.96, STS15 = 88.63, STS16 = 85.19,
    "STS-B" = 87.65, "SICK-R" = 79.87, Avg = 84.78
  }
  paper_gense_plus = {
    STS12   = 80.65, STS13 = 88.18, STS14 = 84.69, STS15 = 89.03, STS16 = 85.82,
    "STS-B" = 87.88, "SICK-R" = 80.10, Avg = 85.19
  }
  # ... first on the synthetic triplets, then on NLI. A synthetic set
  # smaller than its batch (an in-domain set after the quality check can
  # be) trains one batch of all of it per epoch (deviation small_sets).
  on_synthetic = { batch_size = 1024, epochs = 1, small_data = "one_batch" }
  on_nli       = { batch_size = 512, epochs = 3 }

  # The Transfer measure: AskUbuntu's MAP in the paper profile, the CQA
  # stand-in's in the mini and ci profiles (var.askubuntu is set only in
  # the first).
  askubuntu       = var.askubuntu != ""
  transfer_column = local.askubuntu ? "AskUbuntu MAP (Transfer: the paper's is the four tasks' average)" : "CQA MAP (Transfer stand-in)"

  # The mini and ci profiles' contrastive stages (their comments say why):
  # the synthetic (or retrieved) phase and the NLI phase. Their synthetic
  # sets are larger than their batches; they keep the trainer's refusal of
  # a smaller one (small_data's default, which stays out of their keys).
  mini_synthetic = { max_length = 64, batch_size = 32, learning_rate = 5e-4, max_steps = 0, eval_every = 20, small_data = "refuse" }
  mini_nli       = { max_length = 64, batch_size = 32, learning_rate = 5e-4, max_steps = 150, eval_every = 50 }
  ci_synthetic   = { max_length = 32, batch_size = 16, learning_rate = 1e-3, max_steps = 20, eval_every = 20, small_data = "refuse" }
  ci_nli         = { max_length = 32, batch_size = 32, learning_rate = 1e-3, max_steps = 100, eval_every = 50 }
}

# ---- deviations from the paper (printed under the table) -------------------------

deviation "small_sets" {
  what     = "a synthetic set smaller than its batch"
  paper    = "batch 1024 on the synthetic data; its sets (61M open-domain triplets, the four tasks' in-domain sets) are far larger, so the case does not arise"
  ours     = "such a set (an in-domain one after the quality check can be) trains one batch of all of it per epoch (small_data = \"one_batch\"), logged, instead of being refused"
  why      = "the paper does not say; this is what its trainer does: the authors' gense_training/train.sh trains with Hugging Face's Trainer, whose dataloader_drop_last defaults to false, so an epoch's short last batch -- here the whole set -- is trained"
  evidence = "gense.md section 3.1: 'learning rate of 5e-5 with batch size of 1024 on the synthetic data'; section 2.3: the in-domain triplets come from 'the same procedure in Section 2.1'"
  tables   = ["Table 3"]
}

deviation "c4_sentences" {
  what     = "unlabeled sentences"
  paper    = "sentences sampled from C4's news-like and English partitions, about 61M synthetic triplets"
  ours     = "every text line of the C4 file given as -var c4 (C4 keeps only lines ending in terminal punctuation), deduplicated, without fragments under 5 words or STS sentences: as many as that file holds"
  why      = "the paper says neither how it cut C4 documents into sentences nor which files or how many it sampled"
  evidence = "gense.md section 3.1: 'we sample sentences from C4 news-like and English partitions ... and obtain around 61M synthetic triplets'"
  tables   = ["Table 2", "Table 4", "Table 6", "Table 8"]
}

deviation "dev_split" {
  what     = "the generator/discriminator's development set"
  paper    = "a development set, not described"
  ours     = "a seeded 5% of the NLI triplets, held out of its training"
  why      = "the paper names no development set for model selection by accuracy - 10 x perplexity"
  evidence = "gense.md section 2.1: 'a weighted sum of the generation perplexity and discrimination accuracy on the development set for model selection'"
  tables   = ["Table 2"]
}

deviation "st5_rows" {
  what   = "Table 2's ST5-EncDec and ST5-Enc rows"
  paper  = "Sentence-T5's reported numbers"
  ours   = "trained here on the NLI data with this file's settings (ST5-EncDec: no prompt, first decoder output; ST5-Enc: encoder mean pooling)"
  why    = "so that the rows differ from GenSE in the method alone"
  tables = ["Table 2"]
}

deviation "retrieval_labeller" {
  what   = "Table 8's retrieval baseline labeller"
  paper  = "a cross-encoder trained for labelling the BM25-retrieved pairs (Thakur et al. 2021a)"
  ours   = "the NLI-trained generator/discriminator under T_d"
  why    = "the paper does not describe its cross-encoder; this one is trained on the same NLI"
  tables = ["Table 8"]
}

deviation "transfer_tasks" {
  what     = "Transfer columns and domain adaptation (AskUbuntu, CQADupStack, TwitterPara, BIOSSES)"
  paper    = "the four tasks, each adapted to from its own unlabelled training set (PubMed for BIOSSES); the Transfer column of Tables 4-8 is their average"
  ours     = "AskUbuntu alone: MAP on its test set as MTEB publishes it (-var askubuntu), domain adaptation from USEB's AskUbuntu training set (-var askubuntu_train, its test texts left out); the other three tasks' cells stay pending, and the Tables 4-8 ablations report AskUbuntu's MAP, not the average"
  why      = "CQADupStack, TwitterPara, BIOSSES and their in-domain sets are not read here"
  evidence = "gense.md section 3.1: 'we follow TS-DAE (Wang et al., 2021) to use unlabelled training set as in-domain sentences for AskUbuntu, CQADupStack, and Twitter'"
  tables   = ["Table 2", "Table 3", "Table 4", "Table 6", "Table 7", "Table 8"]
}

# ---- data ---------------------------------------------------------------------

stage "nli" {
  uses   = "data.nli"
  source = "simcse_nli"
  path   = var.simcse_nli
}

# A seeded 5% of the NLI triplets held out for the generator/discriminator's
# model selection (the paper's "development set"); the other 95% train it.
stage "nli_dev" {
  uses     = "synth.sample"
  data     = stage.nli.triplets
  fraction = 0.05
  seed     = var.seed
}

stage "nli_train" {
  uses     = "synth.sample"
  data     = stage.nli.triplets
  fraction = 0.05
  rest     = true
  seed     = var.seed
}

# The NLI triplets the contrastive stages train on: all of them (a seeded
# order; the ci profile caps them).
stage "nli_part" {
  uses     = "synth.sample"
  data     = stage.nli.triplets
  fraction = 1
  seed     = var.seed
}

# Table 7's share of those: a prefix of the (already seeded) sample, so
# that 0.5 is a seeded half of whatever nli_part holds in every profile.
stage "nli_use" {
  uses     = "synth.sample"
  data     = stage.nli_part.triplets
  fraction = 1
  shuffle  = false
  seed     = var.seed
}

stage "unlabeled" {
  uses        = "data.corpus"
  sources     = ["c4"]
  path        = var.c4
  dedupe      = true
  exclude_sts = true
  min_words   = 5
  seed        = var.seed
}

stage "stsb_dev" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "dev"
}

stage "sts" {
  uses  = "data.sts"
  tasks = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"]
  split = "test"
}

# The Transfer measure: AskUbuntu's test set (the mini and ci profiles: the
# CQA stand-in's dev split).
stage "rerank" {
  uses   = "data.rerank"
  split  = "dev"
  source = "askubuntu"
  path   = var.askubuntu
}

# ---- 1. instances (Table 1's prompts) ------------------------------------------

stage "ins_entail" {
  uses       = "text.seq2seq"
  data       = stage.nli_train.triplets
  source     = local.t_e
  target     = "[X2]"
  hypothesis = "positive"
}

stage "ins_contra" {
  uses       = "text.seq2seq"
  data       = stage.nli_train.triplets
  prepend    = stage.ins_entail.instances
  source     = local.t_c
  target     = "[X2]"
  hypothesis = "negative"
}

stage "ins_true" {
  uses       = "text.seq2seq"
  data       = stage.nli_train.triplets
  prepend    = stage.ins_contra.instances
  source     = local.t_d
  target     = "true"
  hypothesis = "positive"
}

stage "instances" {
  uses       = "text.seq2seq"
  data       = stage.nli_train.triplets
  prepend    = stage.ins_true.instances
  source     = local.t_d
  target     = "false"
  hypothesis = "negative"
}

# The same four tasks on the held-out triplets.
stage "dev_entail" {
  uses       = "text.seq2seq"
  data       = stage.nli_dev.triplets
  source     = local.t_e
  target     = "[X2]"
  hypothesis = "positive"
}

stage "dev_contra" {
  uses       = "text.seq2seq"
  data       = stage.nli_dev.triplets
  prepend    = stage.dev_entail.instances
  source     = local.t_c
  target     = "[X2]"
  hypothesis = "negative"
}

stage "dev_true" {
  uses       = "text.seq2seq"
  data       = stage.nli_dev.triplets
  prepend    = stage.dev_contra.instances
  source     = local.t_d
  target     = "true"
  hypothesis = "positive"
}

stage "dev_instances" {
  uses       = "text.seq2seq"
  data       = stage.nli_dev.triplets
  prepend    = stage.dev_true.instances
  source     = local.t_d
  target     = "false"
  hypothesis = "negative"
}

# ---- 2. the generator/discriminator (section 3.1: lr 5e-5, batch 256, 10
# epochs, evaluation every 500 steps, model selection by "accuracy - 10 x
# ppl" on the dev split: exact-match accuracy in % of the T_d instances --
# targets "true"/"false" -- minus 10 x the perplexity of the T_e/T_c
# instances' targets; both are logged in training.json and metrics.json) --

stage "gen" {
  uses                   = "train.seq2seq"
  data                   = stage.instances.instances
  dev                    = stage.dev_instances.instances
  hf_checkpoint          = var.t5
  from_scratch           = false
  learning_rate          = 5e-5
  batch_size             = 256
  epochs                 = 10
  eval_every             = 500
  select                 = "acc_minus_ppl"
  ppl_weight             = 10
  discrimination_targets = ["true", "false"]
  max_source_length      = 128
  max_target_length      = 64
  dropout                = 0.1
  seed                   = var.seed
}

# ---- 3. synthesis: nucleus sampling, p = 0.9 -------------------------------------

stage "syn_entail" {
  uses      = "generate.complete"
  model     = stage.gen.model
  data      = stage.unlabeled.sentences
  template  = local.t_e_gen
  params    = local.nucleus
  seed      = var.seed
  token_ids = true
}

stage "syn_contra" {
  uses      = "generate.complete"
  model     = stage.gen.model
  data      = stage.unlabeled.sentences
  template  = local.t_c_gen
  params    = local.nucleus
  seed      = var.seed
  token_ids = true
}

# ---- 4. quality check (alpha = 0.9) ----------------------------------------------

stage "filter" {
  uses         = "synth.quality_check"
  model        = stage.gen.model
  entail       = stage.syn_entail.completions
  contra       = stage.syn_contra.completions
  params       = local.discriminate
  alpha        = 0.9
  seed         = var.seed
  raw_logprobs = true
}

# Table 6's amount of synthetic data (1 = all of it).
stage "syn_part" {
  uses     = "synth.sample"
  data     = stage.filter.triplets
  fraction = 1
  seed     = var.seed
}

# ---- 5. prompt-based contrastive learning, synthetic then NLI -------------------

stage "embed_syn" {
  uses          = "train.t5_contrastive"
  data          = stage.syn_part.triplets
  dev           = stage.stsb_dev.pairs
  hf_checkpoint = var.t5
  from_scratch  = false
  params        = [local.contrastive, local.on_synthetic]
  seed          = var.seed
}

stage "embed" {
  uses    = "train.t5_contrastive"
  data    = stage.nli_use.triplets
  dev     = stage.stsb_dev.pairs
  encoder = stage.embed_syn.model
  params  = [local.contrastive, local.on_nli]
  seed    = var.seed
}

# ---- baselines trained here: ST5-EncDec + Prompt (= GenSE with 0% synthetic
# data, Tables 4, 6, 7, 8), ST5-EncDec and ST5-Enc (Table 2), all on NLI from
# the same pretrained weights ----------------------------------------------------

stage "prompt_nli" {
  uses          = "train.t5_contrastive"
  data          = stage.nli_use.triplets
  dev           = stage.stsb_dev.pairs
  hf_checkpoint = var.t5
  from_scratch  = false
  params        = [local.contrastive, local.on_nli]
  seed          = var.seed
}

stage "st5_encdec" {
  uses          = "train.t5_contrastive"
  data          = stage.nli_use.triplets
  dev           = stage.stsb_dev.pairs
  hf_checkpoint = var.t5
  from_scratch  = false
  params        = [local.contrastive, local.on_nli]
  template      = ""
  seed          = var.seed
}

stage "st5_enc" {
  uses          = "train.t5_contrastive"
  data          = stage.nli_use.triplets
  dev           = stage.stsb_dev.pairs
  hf_checkpoint = var.t5
  from_scratch  = false
  params        = [local.contrastive, local.on_nli]
  mode          = "mean"
  template      = ""
  seed          = var.seed
}

# ---- evaluation ------------------------------------------------------------------

stage "eval" {
  uses          = "evaluate.sts"
  encoder       = stage.embed.model
  data          = stage.sts.pairs
  align_uniform = true
}

stage "eval_dev" {
  uses    = "evaluate.sts"
  encoder = stage.embed.model
  data    = stage.stsb_dev.pairs
}

stage "cqa" {
  uses    = "evaluate.rerank"
  encoder = stage.embed.model
  data    = stage.rerank.queries
}

stage "eval_prompt_nli" {
  uses          = "evaluate.sts"
  encoder       = stage.prompt_nli.model
  data          = stage.sts.pairs
  align_uniform = true
}

stage "eval_dev_prompt_nli" {
  uses    = "evaluate.sts"
  encoder = stage.prompt_nli.model
  data    = stage.stsb_dev.pairs
}

stage "cqa_prompt_nli" {
  uses    = "evaluate.rerank"
  encoder = stage.prompt_nli.model
  data    = stage.rerank.queries
}

stage "eval_st5_encdec" {
  uses          = "evaluate.sts"
  encoder       = stage.st5_encdec.model
  data          = stage.sts.pairs
  align_uniform = true
}

stage "eval_dev_st5_encdec" {
  uses    = "evaluate.sts"
  encoder = stage.st5_encdec.model
  data    = stage.stsb_dev.pairs
}

stage "eval_st5_enc" {
  uses          = "evaluate.sts"
  encoder       = stage.st5_enc.model
  data          = stage.sts.pairs
  align_uniform = true
}

# ---- Table 8: the retrieval baseline (Thakur et al. 2021a, AugSBERT) -------------
# For each unlabeled sentence, BM25 (Okapi, Elasticsearch's k1 = 1.2,
# b = 0.75) over the unlabeled corpus proposes its 3 best partners (the
# sentence itself and exact duplicates excluded, each unordered pair once);
# an NLI cross-encoder labels them and the pairs it calls entailment with
# P >= 0.9 are kept. Declared deviation: the labeller is this file's
# generator/discriminator under T_d -- a T5 trained on the NLI triplets that
# reads both sentences at once, i.e. a cross-encoder -- where the paper used
# a separately trained cross-encoder. Retrieval gives no contradictions, so
# the embedding model trains on the pairs with eq. 3 (no hard negatives),
# then on NLI exactly as GenSE's second stage.

stage "ret_pairs" {
  uses         = "synth.retrieval_pairs"
  model        = stage.gen.model
  data         = stage.unlabeled.sentences
  k1           = 1.2
  b            = 0.75
  top_k        = 3
  params       = local.discriminate
  threshold    = 0.9
  seed         = var.seed
  raw_logprobs = true
}

stage "embed_ret_syn" {
  uses           = "train.t5_contrastive"
  data           = stage.ret_pairs.triplets
  dev            = stage.stsb_dev.pairs
  hf_checkpoint  = var.t5
  from_scratch   = false
  params         = [local.contrastive, local.on_synthetic]
  hard_negatives = false
  seed           = var.seed
}

stage "embed_ret" {
  uses    = "train.t5_contrastive"
  data    = stage.nli_use.triplets
  dev     = stage.stsb_dev.pairs
  encoder = stage.embed_ret_syn.model
  params  = [local.contrastive, local.on_nli]
  seed    = var.seed
}

stage "eval_dev_ret" {
  uses    = "evaluate.sts"
  encoder = stage.embed_ret.model
  data    = stage.stsb_dev.pairs
}

stage "cqa_ret" {
  uses    = "evaluate.rerank"
  encoder = stage.embed_ret.model
  data    = stage.rerank.queries
}

# STS-B test alone: Figure 2's alignment and uniformity are computed on it
# (the same numbers the full STS evaluation gives), at a seventh of the cost.
stage "stsb_test" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "test"
}

stage "eval_geom_ret" {
  uses          = "evaluate.sts"
  encoder       = stage.embed_ret.model
  data          = stage.stsb_test.pairs
  align_uniform = true
}

# ---- Domain adaptation (section 2.3, Table 3's second block) ----------------------
# The paper follows TSDAE: the target task's unlabelled training set is the
# in-domain text. The paper profile adapts to AskUbuntu: the lines of USEB's
# AskUbuntu training file (-var askubuntu_train) as they are, each distinct
# line once, any text of the test set (rerank) left out. The mini and ci
# profiles adapt to the SemEval-2016 CQA stand-in: the questions and
# related questions of its train_part2 split, split into sentences, with
# every text of the dev split (the evaluation) removed -- 66 texts occur in
# both. The trained generator/discriminator synthesises and quality-checks
# triplets from them as from the open-domain sentences; the embedding model
# trains open-domain synthetic -> in-domain synthetic (batch 1024; a smaller
# set is one batch, deviation small_sets) -> NLI (and the
# Open-domain -> In-domain row stops before NLI). The measure is the
# Transfer one: AskUbuntu MAP, or CQA dev MAP in the mini and ci profiles.

# CQA's train_part2 questions: the mini and ci profiles' in-domain text. A
# stage is in every profile, so the paper profile points it at the
# AskUbuntu file rerank reads (the same stage, cached once) and reads no
# stand-in; nothing there uses it.
stage "rerank_train" {
  uses   = "data.rerank"
  source = "askubuntu"
  path   = var.askubuntu
}

stage "indomain" {
  uses      = "data.rerank_sentences"
  source    = "askubuntu_train"
  path      = var.askubuntu_train
  exclude   = stage.rerank.queries
  fields    = ["query", "positive", "negative"]
  split     = false
  min_words = 1
  max_words = 0
  seed      = var.seed
}

stage "syn_entail_in" {
  uses      = "generate.complete"
  model     = stage.gen.model
  data      = stage.indomain.sentences
  template  = local.t_e_gen
  params    = local.nucleus
  seed      = var.seed
  token_ids = true
}

stage "syn_contra_in" {
  uses      = "generate.complete"
  model     = stage.gen.model
  data      = stage.indomain.sentences
  template  = local.t_c_gen
  params    = local.nucleus
  seed      = var.seed
  token_ids = true
}

stage "filter_in" {
  uses         = "synth.quality_check"
  model        = stage.gen.model
  entail       = stage.syn_entail_in.completions
  contra       = stage.syn_contra_in.completions
  params       = local.discriminate
  alpha        = 0.9
  seed         = var.seed
  raw_logprobs = true
}

# Open-domain -> In-domain: GenSE's synthetic-stage model continued on the
# in-domain triplets.
stage "embed_in_syn" {
  uses    = "train.t5_contrastive"
  data    = stage.filter_in.triplets
  dev     = stage.stsb_dev.pairs
  encoder = stage.embed_syn.model
  params  = [local.contrastive, local.on_synthetic]
  seed    = var.seed
}

# Open-domain -> In-domain -> NLI.
stage "embed_in" {
  uses    = "train.t5_contrastive"
  data    = stage.nli_use.triplets
  dev     = stage.stsb_dev.pairs
  encoder = stage.embed_in_syn.model
  params  = [local.contrastive, local.on_nli]
  seed    = var.seed
}

stage "cqa_in_syn" {
  uses    = "evaluate.rerank"
  encoder = stage.embed_in_syn.model
  data    = stage.rerank.queries
}

stage "cqa_in" {
  uses    = "evaluate.rerank"
  encoder = stage.embed_in.model
  data    = stage.rerank.queries
}

# ---- the authors' released encoders (paper profile, by -var) ------------------------
#
# Each is loaded as it is (model.hf_t5_encoder: weights unchanged, no
# training) when its variable is set, read as our encoders are
# (local.released_encoder) and scored by the same evaluation as our rows; an
# unset variable leaves the stage without instance and the row without cell
# (in every profile: the mini and ci profiles set none), so nothing refuses.
# checkpoint reads the variable directly, so a relative -var path resolves
# against the working directory. The released tokenizers add a <cls> token
# the paper does not mention; T_s does not use it.

stage "released_gense" {
  for_each   = var.released_gense == "" ? [] : ["gense"]
  uses       = "model.hf_t5_encoder"
  checkpoint = var.released_gense
  params     = local.released_encoder
}

stage "released_gense_plus" {
  for_each   = var.released_gense_plus == "" ? [] : ["gense_plus"]
  uses       = "model.hf_t5_encoder"
  checkpoint = var.released_gense_plus
  params     = local.released_encoder
}

# One evaluation per released encoder given, eval_released["gense"] ...
stage "eval_released" {
  for_each = merge(stage.released_gense, stage.released_gense_plus)
  uses     = "evaluate.sts"
  encoder  = each.value.model
  data     = stage.sts.pairs
}

# ---- Figure 2: alignment against uniformity ------------------------------------------
# figure.scatter takes one metrics artifact per numbered input (m1, m2, ...,
# no gaps) and names them with labels, in port order; each point's name
# carries its STS-B test Spearman (the paper colours the dots by it). The
# PNG is copied beside the run's report; points.json holds the values.

stage "figure2" {
  uses     = "figure.scatter"
  m1       = stage.eval.metrics
  m2       = stage.eval_prompt_nli.metrics
  m3       = stage.eval_st5_encdec.metrics
  m4       = stage.eval_st5_enc.metrics
  m5       = stage.eval_geom_ret.metrics
  labels   = ["GenSE", "ST5-EncDec + Prompt", "ST5-EncDec", "ST5-Enc", "Retrieval (Table 8)"]
  x        = "alignment"
  y        = "uniformity"
  annotate = "stsb"
  title    = "GenSE Figure 2: alignment and uniformity on STS-B test"
  x_label  = "alignment (lower is better)"
  y_label  = "uniformity (lower is better)"
  file     = "gense_figure2.png"
}

# ---- Table 2 -----------------------------------------------------------------------

expect "gense" {
  for_each  = local.paper_gense
  row       = "GenSE (Table 2)"
  column    = each.key
  value     = stage.eval.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

# The released encoders' rows, beside ours with the same paper values.
expect "released_gense" {
  for_each  = var.released_gense == "" ? {} : local.paper_gense
  row       = "GenSE (released; Table 2)"
  column    = each.key
  value     = stage.eval_released["gense"].metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

expect "released_gense_plus" {
  for_each  = var.released_gense_plus == "" ? {} : local.paper_gense_plus
  row       = "GenSE+ (released; Table 2)"
  column    = each.key
  value     = stage.eval_released["gense_plus"].metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

expect "st5_encdec" {
  for_each = {
    STS12   = 77.90, STS13 = 85.62, STS14 = 82.24, STS15 = 86.81, STS16 = 82.13,
    "STS-B" = 84.98, "SICK-R" = 79.97, Avg = 82.81
  }
  row       = "ST5-EncDec-Base, NLI, no prompt (Table 2)"
  column    = each.key
  value     = stage.eval_st5_encdec.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

expect "st5_enc" {
  for_each = {
    STS12   = 77.37, STS13 = 83.65, STS14 = 80.41, STS15 = 86.04, STS16 = 81.70,
    "STS-B" = 84.49, "SICK-R" = 79.79, Avg = 81.92
  }
  row       = "ST5-Enc-Base, NLI (Table 2)"
  column    = each.key
  value     = stage.eval_st5_enc.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

# Not a Table 2 row: the NLI-only model with T_s (Table 4's "+Prompt",
# Table 6's 0%), on the same columns for comparison with GenSE.
expect "prompt_nli" {
  for_each = local.sts
  row      = "ST5-EncDec-Base + Prompt, NLI only (ours)"
  column   = each.key
  value    = stage.eval_prompt_nli.metrics[each.value]
}

expect "simcse_not_here" {
  for_each = { Avg = 82.52, "STS-B" = 85.83, "SICK-R" = 80.50 }
  row      = "SimCSE-RoBERTa-Base (Table 2)"
  column   = each.key
  paper    = each.value
  pending  = "trained and reported by experiments/simcse.hcl (sup_roberta), not re-run here"
}

expect "qa_not_here" {
  for_each = { "GenSE-QA" = 84.22, "GenSE+" = 85.19 }
  row      = "${each.key} (Table 2)"
  column   = "Avg"
  paper    = each.value
  pending  = "not reproducible here: needs the ELI5, GooAQ and Yahoo QA pairs (4M), not in the data directory"
}

# ---- Transfer (Table 3, Tables 4-8's Transfer column) -----------------------------
# The paper profile measures AskUbuntu (MAP on MTEB's test file), Table 3's
# AskU. column, in the rows of Table 3; CQADupStack, TwitterPara and BIOSSES
# stay pending. The mini and ci profiles measure the SemEval-2016 CQA
# question reranking MAP instead, openly labelled: a different dataset, so
# those rows hold no target.

expect "cqa_gense" {
  row       = local.askubuntu ? "GenSE, Open-domain -> NLI, direct transfer (Table 3)" : "GenSE: CQA MAP (stand-in for Transfer)"
  column    = local.askubuntu ? "AskU." : "CQA MAP"
  value     = stage.cqa.metrics.map
  paper     = local.askubuntu ? 58.2 : null
  tolerance = 1.0
}

expect "cqa_prompt_nli" {
  row    = local.askubuntu ? "ST5-EncDec-Base + Prompt: AskUbuntu MAP (Transfer)" : "ST5-EncDec-Base + Prompt: CQA MAP (stand-in for Transfer)"
  column = local.askubuntu ? "AskU." : "CQA MAP"
  value  = stage.cqa_prompt_nli.metrics.map
}

expect "transfer_not_here" {
  for_each = { "CQADup." = 15.3, "TwitterP." = 76.1, "BIOSSES" = 73.1, "Avg." = 59.8 }
  row      = "GenSE, Open-domain -> NLI, direct transfer (Table 3)"
  column   = each.key
  paper    = each.value
  pending  = "not reproducible here: CQADupStack, TwitterPara and BIOSSES are not read here (AskUbuntu is, in the paper profile)"
}

# Domain adaptation (section 2.3): the paper profile adapts to AskUbuntu
# from its unlabelled training set, the mini and ci profiles to the CQA
# stand-in from its train_part2 questions; the other tasks' columns stay
# pending.
expect "adapt_not_here" {
  for_each = { "CQADup." = 16.0, "TwitterP." = 76.7, "BIOSSES" = 77.9, "Avg." = 61.5 }
  row      = "GenSE, Open-domain -> In-domain -> NLI (Table 3, domain adaptation)"
  column   = each.key
  paper    = each.value
  pending  = "not reproducible here: CQADupStack, TwitterPara and BIOSSES (and their in-domain sets) are not read here (AskUbuntu is, in the paper profile)"
}

expect "adapt_syn_not_here" {
  for_each = { "CQADup." = 16.2, "TwitterP." = 76.2, "BIOSSES" = 77.8, "Avg." = 61.3 }
  row      = "GenSE, Open-domain -> In-domain (Table 3, domain adaptation)"
  column   = each.key
  paper    = each.value
  pending  = "not reproducible here: CQADupStack, TwitterPara and BIOSSES (and their in-domain sets) are not read here (AskUbuntu is, in the paper profile)"
}

expect "cqa_adapt" {
  row       = local.askubuntu ? "GenSE, Open-domain -> In-domain -> NLI (Table 3, domain adaptation)" : "GenSE, Open-domain -> In-domain -> NLI (Table 3, domain adaptation): CQA MAP (stand-in)"
  column    = local.askubuntu ? "AskU." : "CQA MAP"
  value     = stage.cqa_in.metrics.map
  paper     = local.askubuntu ? 60.3 : null
  tolerance = 1.0
}

expect "cqa_adapt_syn" {
  row       = local.askubuntu ? "GenSE, Open-domain -> In-domain (Table 3, domain adaptation)" : "GenSE, Open-domain -> In-domain (Table 3, domain adaptation): CQA MAP (stand-in)"
  column    = local.askubuntu ? "AskU." : "CQA MAP"
  value     = stage.cqa_in_syn.metrics.map
  paper     = local.askubuntu ? 60.3 : null
  tolerance = 1.0
}

expect "synthesis_in" {
  for_each = {
    "candidates"          = "candidates", "kept" = "kept", "pass rate" = "pass_rate", "pass rate at 0.9" = "pass_rate_at_0.9",
    "mean P(true) entail" = "mean_p_true_entail", "mean P(false) contra" = "mean_p_false_contra"
  }
  row    = local.askubuntu ? "quality check (in-domain AskUbuntu triplets)" : "quality check (in-domain CQA triplets)"
  column = each.key
  value  = stage.filter_in.metrics[each.value]
  count  = contains(["candidates", "kept"], each.key)
}

# ---- Tables 4, 6, 7, 8: STS-B dev -----------------------------------------------------

expect "dev_gense" {
  row       = "GenSE"
  column    = "STS-B dev (Tables 4, 6, 8)"
  value     = stage.eval_dev.metrics.stsb
  paper     = 88.9
  tolerance = 1.0
}

expect "dev_prompt_nli" {
  row       = "ST5-EncDec-Base + Prompt"
  column    = "STS-B dev (Tables 4, 6, 8)"
  value     = stage.eval_dev_prompt_nli.metrics.stsb
  paper     = 87.7
  tolerance = 1.0
}

expect "dev_st5_encdec" {
  row       = "ST5-EncDec-Base"
  column    = "STS-B dev (Tables 4, 6, 8)"
  value     = stage.eval_dev_st5_encdec.metrics.stsb
  paper     = 87.2
  tolerance = 1.0
}

expect "table8_not_here" {
  row     = "Back Translation (Table 8)"
  column  = "STS-B dev (Tables 4, 6, 8)"
  paper   = 88.0
  pending = "not reproducible here: needs English-French/German translation models"
}

# The retrieval baseline: BM25 pairs labelled by the NLI-trained T5 under
# T_d (the paper: a separately trained cross-encoder), eq. 3, then NLI.
expect "dev_ret" {
  row       = "Retrieval (Table 8)"
  column    = "STS-B dev (Tables 4, 6, 8)"
  value     = stage.eval_dev_ret.metrics.stsb
  paper     = 88.3
  tolerance = 1.0
}

expect "cqa_ret" {
  row    = local.askubuntu ? "Retrieval (Table 8): AskUbuntu MAP (Transfer)" : "Retrieval (Table 8): CQA MAP (stand-in for Transfer)"
  column = local.askubuntu ? "AskU." : "CQA MAP"
  value  = stage.cqa_ret.metrics.map
}

expect "retrieval" {
  for_each = {
    "sentences" = "sentences", "no partner" = "no_hit", "candidates" = "candidates", "kept" = "kept",
    "pass rate" = "pass_rate", "mean P(entail)" = "mean_p_true"
  }
  row    = "retrieval baseline (BM25 pairs, labelled)"
  column = each.key
  value  = stage.ret_pairs.metrics[each.value]
  count  = contains(["sentences", "no partner", "candidates", "kept"], each.key)
}

expect "table5_not_here" {
  for_each = { "ST5-Enc-Small" = 80.9, "ST5-EncDec-Small" = 80.9, "GenSE-Small" = 82.5 }
  row      = "${each.key} (Table 5)"
  column   = "STS Avg"
  paper    = each.value
  pending  = "T5-small: run this file's paper profile with -var t5=<t5-small dir> (var.t5_small documents it); the Avg cells of Table 2's rows are then Table 5's"
}

# ---- the synthetic data ------------------------------------------------------------------

expect "synthesis" {
  for_each = {
    "candidates"          = "candidates", "kept" = "kept", "pass rate" = "pass_rate", "pass rate at 0.9" = "pass_rate_at_0.9",
    "mean P(true) entail" = "mean_p_true_entail", "mean P(false) contra" = "mean_p_false_contra"
  }
  row    = "quality check (synthetic triplets)"
  column = each.key
  value  = stage.filter.metrics[each.value]
  count  = contains(["candidates", "kept"], each.key)
}

# Figure 2's values (the paper plots them; alignment here is SimCSE's squared
# distance over STS-B test pairs with gold > 4, uniformity t = 2).
expect "geometry_gense" {
  for_each        = { alignment = "alignment", uniformity = "uniformity" }
  row             = "GenSE on STS-B test"
  column          = each.key
  value           = stage.eval.metrics[each.value]
  lower_is_better = true
}

expect "geometry_prompt_nli" {
  for_each        = { alignment = "alignment", uniformity = "uniformity" }
  row             = "ST5-EncDec-Base + Prompt on STS-B test"
  column          = each.key
  value           = stage.eval_prompt_nli.metrics[each.value]
  lower_is_better = true
}

expect "geometry_st5_encdec" {
  for_each        = { alignment = "alignment", uniformity = "uniformity" }
  row             = "ST5-EncDec-Base on STS-B test"
  column          = each.key
  value           = stage.eval_st5_encdec.metrics[each.value]
  lower_is_better = true
}

expect "geometry_ret" {
  for_each        = { alignment = "alignment", uniformity = "uniformity" }
  row             = "Retrieval (Table 8) on STS-B test"
  column          = each.key
  value           = stage.eval_geom_ret.metrics[each.value]
  lower_is_better = true
}

expect "geometry_st5_enc" {
  for_each        = { alignment = "alignment", uniformity = "uniformity" }
  row             = "ST5-Enc-Base on STS-B test"
  column          = each.key
  value           = stage.eval_st5_enc.metrics[each.value]
  lower_is_better = true
}

# ---- ablations (run with --ablation NAME; columns as the paper prints them,
# AskUbuntu MAP for its Transfer column -- the CQA stand-in's in the mini and
# ci profiles) -------------------------------------------------------------------

ablation "prompt" {
  title   = "Table 4: prompt T_s in the NLI-only model (ST5-EncDec-Base vs + Prompt)"
  report  = [stage.eval_dev_prompt_nli.metrics.stsb, stage.cqa_prompt_nli.metrics.map]
  columns = ["STS-B dev", local.transfer_column]
  variant "ST5-EncDec-Base" {
    set = { "stage.prompt_nli.template" = "" }
  }
  variant "+Prompt" {
    set = { "stage.prompt_nli.template" = local.t_s }
  }
  paper = { "ST5-EncDec-Base" = [87.2, null], "+Prompt" = [87.7, null] }
}

ablation "amount" {
  title   = "Table 6: share of the synthetic triplets (0% = + Prompt on NLI alone, the prompt_nli row)"
  vary    = { "stage.syn_part.fraction" = [0.2, 0.4, 0.6, 1] }
  report  = [stage.eval_dev.metrics.stsb, stage.cqa.metrics.map]
  columns = ["STS-B dev", local.transfer_column]
  paper = {
    "syn_part.fraction=0.2" = [88.7, null], "syn_part.fraction=0.4" = [88.8, null],
    "syn_part.fraction=0.6" = [88.7, null], "syn_part.fraction=1" = [88.9, null]
  }
}

# Table 7: "another GenSE model with 50% randomly-sampled NLI data", so the
# whole chain reads the half: the contrastive stages (nli_use: a seeded half
# of nli_part) and the generator/discriminator, whose 95% training and 5%
# development splits are drawn from that same half (nli_train and nli_dev
# read nli_use), so it is retrained, synthesises anew, and every labelled
# triplet the 50% model sees is in the half. 100% is the file as written.
ablation "half_nli" {
  title   = "Table 7: 50% of the NLI triplets (seeded), for the generator/discriminator and the contrastive stages, without and with synthetic data"
  report  = [stage.eval_dev_prompt_nli.metrics.stsb, stage.eval_dev.metrics.stsb, stage.cqa_prompt_nli.metrics.map, stage.cqa.metrics.map]
  columns = local.askubuntu ? ["STS-B dev: + Prompt (no synthetic)", "STS-B dev: GenSE", "AskUbuntu MAP: + Prompt", "AskUbuntu MAP: GenSE"] : ["STS-B dev: + Prompt (no synthetic)", "STS-B dev: GenSE", "CQA MAP: + Prompt", "CQA MAP: GenSE"]
  variant "100% NLI" {
    set = { "stage.nli_use.fraction" = 1 }
  }
  variant "50% NLI" {
    set = {
      "stage.nli_use.fraction" = 0.5
      "stage.nli_train.data"   = stage.nli_use.triplets
      "stage.nli_dev.data"     = stage.nli_use.triplets
    }
  }
  paper = { "100% NLI" = [87.7, 88.9, null, null], "50% NLI" = [87.1, 88.6, null, null] }
}

ablation "negatives" {
  title   = "Table 8: w/o synthetic negatives (eq. 3 on the synthetic stage; NLI stage unchanged)"
  report  = [stage.eval_dev.metrics.stsb, stage.cqa.metrics.map]
  columns = ["STS-B dev", local.transfer_column]
  variant "GenSE" {
    set = { "stage.embed_syn.hard_negatives" = true }
  }
  variant "w/o synthetic negatives" {
    set = { "stage.embed_syn.hard_negatives" = false }
  }
  paper = { "GenSE" = [88.9, null], "w/o synthetic negatives" = [88.6, null] }
}

# ---- mini: a small pretrained T5, the whole pipeline on this machine -----------------
#
# What it shows: every step of section 2 running for real at small scale, from
# experiments/t5.hcl's mini T5 (3+3 layers, width 96, 4,000 SentencePiece
# pieces, 1,000 span-corruption updates on Wikipedia; cached separately, 12
# minutes here): 600 updates of 32 on the four Table 1 tasks (95% of the
# local NLI triplets, sources up to 96 tokens, selection by accuracy - 10 x
# ppl every 200 updates), synthesis by nucleus sampling from 2,000 unlabeled
# Wikipedia/BBC/Brown sentences (a seeded draw), the discriminator's quality
# check with its pass rate, contrastive training on the kept triplets (one
# pass, batch 32) then 150 updates of 32 on NLI, and the comparison with the
# same model trained on NLI alone (+ Prompt) and without the prompt (ST5
# rows): does synthetic data help at this scale? What it cannot show:
# anything about T5-base's behaviour. A T5 this small, pretrained for
# minutes, writes word salad for open-domain sentences and its discriminator
# stays at chance (dev accuracy 50.2%, P(true) 0.493 +- 0.005 on the
# generated pairs), so its synthetic pairs are noise and its STS numbers far
# below the paper's (compare the directions, not the values). alpha is
# lowered to 0.4 so that at least 1,000 triplets reach the contrastive stage
# (1,991 of 2,000 pass; at the paper's 0.9 none: the pass rate at 0.9 is in
# stage.filter.metrics). Every contrastive model starts from the
# generator/discriminator's weights (the paper starts all from T5-base; from
# the span-corruption model itself the first decoder output is the same
# vector for every input, see docs/papers/gense.md). Sizes were cut to fit the budget
# (from 4+4 x 128, 1,000 generator updates, 2,500 sentences, 200 contrastive
# updates of 64): 26 min 28 s beyond the cached pretraining at load 5-11 on
# the shared 2-core machine (a quiet machine is not available to measure).
profile "mini" {
  # The data directory's stand-ins for SimCSE's NLI and C4, and the CQA
  # task for AskUbuntu (its dev split measured, its train_part2 questions
  # the in-domain text).
  stage "nli" {
    source = "nli"
  }
  stage "rerank" {
    source = "semeval2016_cqa"
  }
  stage "rerank_train" {
    source = "semeval2016_cqa"
    split  = "train_part2"
  }
  stage "unlabeled" {
    sources   = ["wiki", "bbc", "brown"]
    test_size = 2000
  }
  stage "gen" {
    init              = module.t5.pretrain.model
    max_source_length = 96
    max_target_length = 32
    batch_size        = 32
    learning_rate     = 1e-3
    warmup            = 60
    dropout           = 0.1
    max_steps         = 600
    eval_every        = 200
    epochs            = 1
  }
  stage "syn_entail" {
    data           = stage.unlabeled.test
    max_new_tokens = 24
    token_ids      = false
  }
  stage "syn_contra" {
    data           = stage.unlabeled.test
    max_new_tokens = 24
    token_ids      = false
  }
  stage "filter" {
    alpha        = 0.4
    raw_logprobs = false
  }
  stage "embed_syn" {
    init   = stage.gen.model
    params = local.mini_synthetic
  }
  stage "embed" {
    params = local.mini_nli
  }
  stage "prompt_nli" {
    init   = stage.gen.model
    params = local.mini_nli
  }
  stage "st5_encdec" {
    init   = stage.gen.model
    params = local.mini_nli
  }
  stage "st5_enc" {
    init   = stage.gen.model
    params = local.mini_nli
  }
  # The retrieval baseline and domain adaptation (the same scale and
  # settings as the GenSE chain above: one epoch on the synthetic or
  # retrieved set, then 150 NLI updates): BM25 searches the whole unlabeled
  # corpus for the 2,000 sampled sentences; the labeller's threshold is
  # lowered with the quality check's (its pass rate at 0.4 is reported).
  stage "ret_pairs" {
    data         = stage.unlabeled.test
    corpus       = stage.unlabeled.sentences
    threshold    = 0.4
    raw_logprobs = false
  }
  stage "embed_ret_syn" {
    init   = stage.gen.model
    params = local.mini_synthetic
  }
  stage "embed_ret" {
    params = local.mini_nli
  }
  stage "indomain" {
    queries   = stage.rerank_train.queries
    source    = null
    split     = true
    min_words = 5
    max_words = 30
  }
  stage "syn_entail_in" {
    max_new_tokens = 24
    token_ids      = false
  }
  stage "syn_contra_in" {
    max_new_tokens = 24
    token_ids      = false
  }
  stage "filter_in" {
    alpha        = 0.4
    raw_logprobs = false
  }
  stage "embed_in_syn" {
    params = local.mini_synthetic
  }
  stage "embed_in" {
    params = local.mini_nli
  }
}

# ---- ci: the same pipeline, tiny, from an empty cache in minutes ------------------
#
# The ci T5 of experiments/t5.hcl (2+2 layers, width 64, a 2,000-piece
# SentencePiece vocabulary, 300 span-corruption updates on Wikipedia; part
# of the cold run, about 45 s) fine-tuned on 1,000 NLI triplets' instances,
# 300 unlabeled sentences synthesised, alpha lowered to 0.45 (a delta: at this
# size the discriminator sits near chance with a per-seed lean, P = 0.43-0.57,
# and nothing reaches 0.9; 0.48 kept 153 of 300 at seed 42 but 14 at seed 1,
# too few for a batch, where 0.45 keeps 287 and 160; the pass rate at 0.9 is
# still recorded), short
# contrastive stages on 1,000 NLI triplets, all from the generator's weights
# (see the mini profile for why). It checks that the chain runs and stays
# where it was; its numbers say nothing about GenSE. Cold, pretraining
# included: 6 min 31 s at load 6-11 on the shared 2-core machine (5 min 6 s
# before the retrieval and domain-adaptation stages).
profile "ci" {
  stage "nli_train" {
    max = 1000
  }
  stage "nli_part" {
    max = 1000
  }
  # The data directory's stand-ins, as in the mini profile.
  stage "nli" {
    source = "nli"
  }
  stage "rerank" {
    source = "semeval2016_cqa"
  }
  stage "rerank_train" {
    source = "semeval2016_cqa"
    split  = "train_part2"
  }
  stage "unlabeled" {
    sources   = ["wiki", "bbc", "brown"]
    test_size = 300
  }
  stage "gen" {
    init              = module.t5.pretrain.model
    max_source_length = 48
    max_target_length = 24
    batch_size        = 32
    learning_rate     = 2e-3
    warmup            = 20
    dropout           = 0
    max_steps         = 500
    eval_every        = 250
    epochs            = 1
  }
  stage "syn_entail" {
    data           = stage.unlabeled.test
    max_new_tokens = 24
    token_ids      = false
  }
  stage "syn_contra" {
    data           = stage.unlabeled.test
    max_new_tokens = 24
    token_ids      = false
  }
  stage "filter" {
    alpha        = 0.45
    raw_logprobs = false
  }
  stage "embed_syn" {
    init   = stage.gen.model
    params = local.ci_synthetic
  }
  stage "embed" {
    params = local.ci_nli
  }
  stage "prompt_nli" {
    init   = stage.gen.model
    params = local.ci_nli
  }
  stage "st5_encdec" {
    init   = stage.gen.model
    params = local.ci_nli
  }
  stage "st5_enc" {
    init   = stage.gen.model
    params = local.ci_nli
  }
  # The retrieval baseline and domain adaptation at ci scale: 300 sampled
  # sentences against the whole unlabeled corpus (2 partners each), 150
  # in-domain sentences, thresholds lowered with the quality check's, and
  # their NLI stages half as long as embed's (50 updates) to keep CI's time:
  # at this scale no row says anything about the method.
  stage "ret_pairs" {
    data         = stage.unlabeled.test
    corpus       = stage.unlabeled.sentences
    top_k        = 2
    threshold    = 0.45
    raw_logprobs = false
  }
  stage "embed_ret_syn" {
    init   = stage.gen.model
    params = local.ci_synthetic
  }
  stage "embed_ret" {
    params     = local.ci_nli
    max_steps  = 50
    eval_every = 25
  }
  stage "indomain" {
    queries   = stage.rerank_train.queries
    source    = null
    split     = true
    min_words = 5
    max_words = 20
    max       = 150
  }
  stage "syn_entail_in" {
    max_new_tokens = 24
    token_ids      = false
  }
  stage "syn_contra_in" {
    max_new_tokens = 24
    token_ids      = false
  }
  stage "filter_in" {
    alpha        = 0.45
    raw_logprobs = false
  }
  stage "embed_in_syn" {
    params = local.ci_synthetic
  }
  stage "embed_in" {
    params     = local.ci_nli
    max_steps  = 50
    eval_every = 25
  }
}
