# SynCSE: Contrastive Learning of Sentence Embeddings from Scratch (Zhang,
# Lan and He, 2023; ../shared/papers/syncse.md).
#
# A language model writes the data supervised SimCSE trains on:
#   SynCSE-partial  positives and hard negatives for given sentences (the NLI
#                   premises), five-shot multi-turn chats, one prompt of a pool
#                   of four and five exemplars of that prompt's pool of 18 per
#                   call (section 2.3; Tables 1 and 12);
#   SynCSE-scratch  the sentences themselves first, 20 per one-shot call, for
#                   21 genres x six of 37 topics (section 2.4, Appendix B;
#                   Tables 10, 15, 16), then labelled as above.
# Supervised SimCSE (RoBERTa-base, [CLS], batch 512, lr 5e-5, 3 epochs,
# temperature 0.05) trains on each set; checkpoints are selected by the mean
# of STS-B dev and SICK-R dev Spearman (section 3.2).
#
# Paper profile: any server speaking the OpenAI chat-completions API,
#   repro plan experiments/syncse.hcl                 # requests and cost, nothing sent
#   OPENAI_API_KEY=... repro run experiments/syncse.hcl -var roberta=DIR -var t5=DIR
#   repro run experiments/syncse.hcl -var llm_base_url=http://localhost:8000/v1 \
#       -var llm_model=meta-llama/Llama-3.1-8B-Instruct -var llm_api_key_env= \
#       -var roberta=DIR -var t5=DIR
# with the paper's gpt-3.5-turbo-0301 and sampling (Appendix C) by default.
# OpenAI has retired that snapshot: a server without the model answers the
# first request with 404 model_not_found, and the stage stops there (the
# other requests wait for that first answer), naming -var llm_model.
# Every request is cached by content in the cache's index: a re-run, a crash,
# a change to a training parameter or a larger grid never sends a request
# twice (`repro cache requests experiments/syncse.hcl` counts them and their
# cost). The key is read from the variable llm_api_key_env names, only when a
# request must be sent, and is never stored.
#
# Offline (the mini and ci profiles): provider = "local", the project's own
# small GPT-2 answering in-process, fine-tuned on SynCSE's chats rendered
# from NLI triplets it will not label (modules/syncse_chat.hcl; a declared
# departure). Its requests go through the same cache, keyed by the model
# artifact's digest.
#
# What cannot be had here, and what stands in:
# - The paper's 18 GPT-4-written exemplars per prompt and 30 one-shot
#   examples per genre are not published. Exemplar pools are drawn from the
#   local NLI triplets (premise -> entailment for positives, premise ->
#   contradiction for hard negatives), never showing a sentence its own
#   triplet; one-shot examples are 10 sentences of Wikipedia (SNLI premises,
#   i.e. Flickr30k captions, for the caption genres).
# - The copy of the paper lost the placeholders of Tables 15 and 16 ({genre},
#   the six topics, the count); internal/syncse/prompts.go restores them and
#   says where. Genres (21) and topics (37) are the lists as printed (the text
#   says 20 and 31).
# - The paper profile reads SimCSE_NLI (-var simcse_nli=nli_for_simcse.csv:
#   SynCSE-partial labels its premises), SimCSE's wiki1m (-var wiki1m=...:
#   the unsup-SimCSE row) and AskUbuntu as MTEB publishes it (-var
#   askubuntu=test.jsonl.gz, Table 3), and refuses to start without them.
#   The mini and ci profiles read the data directory's stand-ins: 8,816
#   dev/test-derived NLI triplets (8,796 distinct premises), the first
#   11,914 wiki1m lines and the SemEval-2016 CQA question-reranking set
#   (their Table 3 cells carry no paper value). SynCSE-scratch is generated
#   at the paper's size (21 x 660 calls x 20 = 277k sentences before
#   filtering); Table 2's scratch row trains on as many scratch triplets as
#   the partial set has (the paper: "the same number of examples"), a
#   seeded sample spread evenly over genre x topic (synth.mix's sample =
#   "stratified"; Table 8's 22k alike), and Scratch + SimCSE_NLI merges that
#   set with SimCSE_NLI, about 1:1 as in the paper.
# - Table 2's and Table 3's RoBERTa-large halves are declared, not run
#   (pending cells below): this file trains RoBERTa-base.
# - Reranking: MindSmall, SciDocsRR and StackOverflow are not here.
# - Not reproducible here: Table 5 (ZeroGen's released data), Table 6
#   (BIOSSES and StackOverflowDupQuestions), Table 7 (SentEval transfer
#   tasks), Table 9 (five human annotators), Table 11 (generated examples,
#   not numbers). DINO's row of Table 4 shows the paper's value, as SynCSE
#   itself did (DINO makes scored pairs, not triplets).
# - Table 4's GenSE row: the paper sampled GenSE's published triplets; here
#   they are this project's own (experiments/gense.hcl, module "gense", its
#   quality-checked stage.filter.triplets), as many as SynCSE-partial's. In
#   the paper profile that runs gense.hcl's paper pipeline and needs
#   -var t5=DIR and -var c4=FILE as well (repro run refuses to start without
#   them, naming module.gense.gen and module.gense.unlabeled).

experiment "syncse" {
  title = "SynCSE: Contrastive Learning of Sentence Embeddings from Scratch"
  table = "Table 2: STS; Table 3: reranking; Table 4: other synthetic data; Table 8: naive generation; Table 13: cost; Table 14: amount"
  paper = "syncse.md"
}

variable "seed" {
  default = 42
}

variable "roberta" {
  description = "local Hugging Face roberta-base directory (config.json, model.safetensors, vocab.json, merges.txt)"
  default     = ""
}

variable "t5" {
  description = "local Hugging Face t5-base directory, for Table 4's GenSE row: the paper profile makes GenSE's triplets with experiments/gense.hcl's own pipeline (repro run refuses to start without it)"
  default     = ""
}

variable "simcse_nli" {
  description = "SimCSE's NLI training set: a local nli_for_simcse.csv (sent0,sent1,hard_neg; 275,601 SNLI+MNLI train triplets): SynCSE-partial's premises, the exemplars, the sup-SimCSE row"
  default     = ""
}

variable "wiki1m" {
  description = "SimCSE's unsupervised sentences: a local wiki1m_for_simcse.txt (the unsup-SimCSE row, the scratch calls' examples)"
  default     = ""
}

variable "askubuntu" {
  description = "AskUbuntu's test set as MTEB publishes it: a local askubuntudupquestions-reranking test.jsonl.gz (Table 3)"
  default     = ""
}

variable "c4" {
  description = "a C4 file as allenai/c4 publishes it (en/c4-train.NNNNN-of-01024.json.gz), for Table 4's GenSE row (module gense's unlabeled sentences)"
  default     = ""
}

# The authors' released models (hkust-nlp/SynCSE-{partial,scratch}-RoBERTa-{base,large}
# on the Hugging Face hub), each a local copy by -var; every one given adds a
# "(released)" row beside the paper's number, the large ones the only
# measured cells of Table 2's RoBERTa-large half. Unset (the default), the
# row is absent and nothing refuses.
variable "released_partial" {
  description = "the authors' released SynCSE-partial: a local hkust-nlp/SynCSE-partial-RoBERTa-base directory (adds its row)"
  default     = ""
}

variable "released_scratch" {
  description = "the authors' released SynCSE-scratch: a local hkust-nlp/SynCSE-scratch-RoBERTa-base directory (adds its row)"
  default     = ""
}

variable "released_partial_large" {
  description = "the authors' released SynCSE-partial, RoBERTa-large: a local hkust-nlp/SynCSE-partial-RoBERTa-large directory (adds its row)"
  default     = ""
}

variable "released_scratch_large" {
  description = "the authors' released SynCSE-scratch, RoBERTa-large: a local hkust-nlp/SynCSE-scratch-RoBERTa-large directory (adds its row)"
  default     = ""
}

variable "llm_provider" {
  description = "openai: any server speaking the OpenAI chat-completions API"
  default     = "openai"
}

variable "llm_base_url" {
  description = "API root of the chat-completions server"
  default     = "https://api.openai.com/v1"
}

variable "llm_model" {
  description = "model name as the server knows it (the paper: gpt-3.5-turbo-0301, retired by OpenAI: name one your server has)"
  default     = "gpt-3.5-turbo-0301"
}

variable "llm_api_key_env" {
  description = "NAME of the environment variable holding the API key (empty: none sent)"
  default     = "OPENAI_API_KEY"
}

variable "llm_concurrency" {
  description = "requests in flight at once"
  default     = 8
}

# ---- the offline generator (mini and ci profiles) ----------------------------
# A small GPT-2 of this project, fine-tuned on SynCSE's chats
# (modules/syncse_chat.hcl); the variables keep its fine-tuning chats and
# the synth stages' calls alike. The paper profile references none of it.

variable "labelled" {
  description = "premises SynCSE-partial labels in the mini and ci profiles (never shown to the generator in fine-tuning)"
  default     = 0
}

module "chat" {
  source             = "./modules/syncse_chat.hcl"
  labelled           = var.labelled
  label_max_tokens   = 24
  list_max_tokens    = 64
  sentence_prompts   = local.short_prompts
  naive_prompts      = local.naive_prompts
  topics_per_call    = 3
  sentences_per_call = 2
  example_sentences  = 2
}

# Table 4's GenSE row: this project's own GenSE (experiments/gense.hcl), its
# quality-checked synthetic triplets (stage.filter.triplets). The module's
# profile follows this file's: --profile mini runs gense.hcl's mini chain up
# to its quality check, ci its ci chain (both cached once, shared with
# gense.hcl's own runs: the module keeps its own seed).
module "gense" {
  source     = "./gense.hcl"
  t5         = var.t5
  simcse_nli = var.simcse_nli
  c4         = var.c4
}

# Encoders of the ci profile (lm.hcl-like ci pretraining of pretrained.hcl).
module "pretrained" {
  source = "./pretrained.hcl"
}

locals {
  sts_tasks = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"]
  sts = {
    STS12   = "sts12", STS13 = "sts13", STS14 = "sts14", STS15 = "sts15", STS16 = "sts16",
    "STS-B" = "stsb", "SICK-R" = "sickr", Avg = "avg"
  }
  # Dollars per 1,000 tokens (Appendix D for gpt-3.5-turbo; a dated snapshot
  # takes its family's row). Used for progress, plans and `repro cache
  # requests`; add the models you point llm_model at.
  prices = {
    "gpt-3.5-turbo" = { input_per_1k = 0.0015, output_per_1k = 0.002 }
    "gpt-4o-mini"   = { input_per_1k = 0.00015, output_per_1k = 0.0006 }
  }
  # Table 8 compares on 22k examples.
  naive_size = 22000
  # Why Tables 2 and 3's RoBERTa-large cells have no result.
  # Table 2's rows that a released model has, shared by our row and its.
  paper_partial = {
    STS12   = 76.11, STS13 = 84.49, STS14 = 79.61, STS15 = 85.26, STS16 = 82.60,
    "STS-B" = 83.94, "SICK-R" = 81.57, Avg = 81.94
  }
  paper_scratch = {
    STS12   = 74.61, STS13 = 83.76, STS14 = 77.89, STS15 = 85.09, STS16 = 82.28,
    "STS-B" = 82.71, "SICK-R" = 78.88, Avg = 80.75
  }
  paper_partial_large = {
    STS12   = 76.03, STS13 = 84.27, STS14 = 80.03, STS15 = 85.37, STS16 = 83.62,
    "STS-B" = 84.26, "SICK-R" = 81.14, Avg = 82.10
  }
  paper_scratch_large = {
    STS12   = 75.45, STS13 = 85.01, STS14 = 80.28, STS15 = 86.55, STS16 = 83.95,
    "STS-B" = 84.49, "SICK-R" = 80.61, Avg = 82.33
  }
  # How the released models are read: SimCSE's supervised evaluation, [CLS]
  # through the pooler (the MLP head SimCSE's converter saves there; SynCSE
  # trains with SimCSE's supervised code). A reading, not stated by the
  # paper: --set 'stage.released_partial["partial"].pooling=cls_before_pooler'
  # scores one without the head.
  released_pooling = "cls"
  large_pending    = "not run here: this file trains RoBERTa-base; the RoBERTa-large half needs roberta-large weights and SimCSE's large learning rates (deviation roberta_large)"
  # Table 8's naive generation: one fixed prompt.
  naive_prompts = ["Devise {count} distinct and diverse sentences. Vary the length of the sentences, ranging from concise phrases of 3-5 words to longer sentences containing 20-40 words."]
  # The mini and ci profiles' sentence prompts: the first sentence of each
  # of Table 15's prompts (placeholders restored), with three topics: the
  # whole prompts (~100 words) do not fit a 128-token context with an
  # answer. A departure, as the generator is.
  short_prompts = [
    "Devise {count} distinct and diverse sentences that may appear in {genre}, covering a range of subjects ({topic1}, {topic2}, {topic3}, etc.).",
    "Construct {count} varied and diverse sentences that may appear in {genre} encompassing a multitude of topics such as {topic1}, {topic2}, {topic3} and so on.",
    "Create {count} varied and diverse sentences that may appear in {genre}, spanning an array of topics such as {topic1}, {topic2}, {topic3} and so on.",
    "Compose {count} assorted and diverse sentences that may appear in {genre}, touching upon various themes like {topic1}, {topic2}, {topic3} and so on.",
  ]

  # Every synth stage's chat-completions server, from the llm_* variables.
  llm = {
    provider    = var.llm_provider
    base_url    = var.llm_base_url
    model       = var.llm_model
    api_key_env = var.llm_api_key_env
    concurrency = var.llm_concurrency
    prices      = local.prices
  }
  # The labelling calls' sampling (Appendix C), positives and hard negatives.
  sampling = { positive_temperature = 1.0, positive_top_p = 0.9, negative_temperature = 1.0, negative_top_p = 0.95 }
  # Every SimCSE stage: RoBERTa-base, evaluated on dev every 125 updates.
  roberta = { hf_checkpoint = var.roberta, from_scratch = false, eval_every = 125 }

  # mini and ci: the offline generator (module.chat's GPT-2) answering in-process ...
  offline = { provider = "local", concurrency = 32, timeout_seconds = 1800 }
  # ... and its list calls: two sentences per call, two example sentences,
  # answers of at most 64 tokens (as in module.chat's fine-tuning chats).
  offline_lists = { sentences_per_call = 2, example_sentences = 2, max_tokens = 64 }
  # mini: the mini encoder of simcse.hcl's mini profile (2 layers, width 128,
  # GloVe, mean pooling, from scratch) and its supervised recipe.
  mini = {
    from_scratch  = true
    layers        = 2
    hidden        = 128
    heads         = 4
    intermediate  = 256
    max_position  = 128
    glove_init    = true
    pooling       = "mean"
    learning_rate = 1e-3
    batch_size    = 64
    eval_every    = 30
  }
  # ci: 20 updates of 32 from pretrained.hcl's ci BERT.
  ci = { learning_rate = 1e-4, batch_size = 32, max_steps = 20, eval_every = 10 }
}

# ---- deviations from the paper (printed under the table) ---------------------

deviation "scratch_cut" {
  what     = "how Table 2's and Table 8's scratch sets get their size"
  paper    = "SynCSE-scratch generated to the same number of examples as SynCSE-partial (Table 8: 22k); how a subset would be drawn is not said"
  ours     = "the paper's number of calls (21 genres x 660 x 20 sentences), labelled, then cut to partial's size (Table 8: the naive set's) by a seeded sample spread evenly over genre x topic (synth.mix sample = \"stratified\")"
  why      = "how many triplets survive the parsing and the 32-word filter is known only after generation; an even spread over genres and topics keeps what generating to size would have"
  evidence = "syncse.md section 3.1: \"For SynCSE-scratch, we generate the same number of examples as in the SynCSE-partial case\""
  tables   = ["Table 2", "Table 3", "Table 8", "Table 14"]
}

deviation "roberta_large" {
  what   = "Tables 2 and 3's RoBERTa-large halves"
  paper  = "every method also trained from RoBERTa-large"
  ours   = "not run: the rows are declared with the paper's values and no result"
  why    = "this file trains RoBERTa-base only; the large rows need roberta-large weights, SimCSE's large learning rates and about three times the compute per run"
  tables = ["Table 2", "Table 3"]
}

deviation "exemplars" {
  what   = "exemplar pools of the labelling calls"
  paper  = "18 GPT-4-written exemplars per prompt"
  ours   = "drawn from the NLI triplets (premise -> entailment for positives, premise -> contradiction for hard negatives), never showing a sentence its own triplet"
  why    = "the paper's exemplars are not published"
  tables = ["Table 2", "Table 3", "Table 8", "Table 14"]
}

deviation "one_shot_examples" {
  what      = "one-shot examples of the scratch sentence calls"
  paper     = "30 examples per genre"
  ours      = "10 sentences of wiki1m; for the caption genres, SNLI dev premises (Flickr30k captions) from the data directory"
  why       = "the paper's examples are not published, and SimCSE's NLI file does not say which premises are SNLI's captions"
  tables    = ["Table 2", "Table 3", "Table 8", "Table 14"]
  stand_ins = ["nli"]
}

deviation "prompt_placeholders" {
  what     = "Tables 15 and 16's prompts"
  paper    = "the prompts with {genre}, the topics and the count; 20 genres and 31 topics in the text"
  ours     = "the placeholders restored where the copy lost them (internal/syncse/prompts.go says where); the 21 genres and 37 topics as the lists print them"
  why      = "the copy of the paper lost the placeholders, and its text and lists disagree on the counts"
  evidence = "syncse.md Appendix B, Tables 15 and 16"
  tables   = ["Table 2", "Table 3", "Table 14"]
}

deviation "gense_row" {
  what   = "Table 4's GenSE row"
  paper  = "a sample of GenSE's published triplets"
  ours   = "this project's own GenSE triplets (experiments/gense.hcl's quality-checked set), as many as SynCSE-partial's"
  why    = "GenSE's triplets are not in the data directory"
  tables = ["Table 4"]
}

# ---- data -------------------------------------------------------------------

stage "nli" {
  uses   = "data.nli"
  source = "simcse_nli"
  path   = var.simcse_nli
}

stage "premises" {
  uses     = "data.triplet_sentences"
  triplets = stage.nli.triplets
  columns  = ["anchor"]
}

stage "wiki" {
  uses   = "data.sentences"
  source = "wiki1m"
  path   = var.wiki1m
}

stage "snli" {
  uses  = "data.nli"
  files = ["snli_dev"]
}

stage "captions" {
  uses     = "data.triplet_sentences"
  triplets = stage.snli.triplets
  columns  = ["anchor"]
}

stage "dev" {
  uses  = "data.sts"
  tasks = ["stsb", "sickr"]
  split = "dev"
}

stage "sts" {
  uses  = "data.sts"
  tasks = local.sts_tasks
  split = "test"
}

stage "rerank" {
  uses   = "data.rerank"
  source = "askubuntu"
  path   = var.askubuntu
}

# ---- SynCSE-partial: label the NLI premises ---------------------------------

stage "partial" {
  uses       = "synth.annotate"
  input      = stage.premises.sentences
  exemplars  = stage.nli.triplets
  params     = [local.llm, local.sampling]
  shots      = 5
  pool_size  = 18
  max_inputs = 0
  max_words  = 32
  seed       = var.seed
}

# ---- SynCSE-scratch: write the sentences, then label them --------------------

stage "scratch_sentences" {
  uses               = "synth.sentences"
  examples           = stage.wiki.sentences
  caption_examples   = stage.captions.sentences
  params             = local.llm
  temperature        = 1.3
  top_p              = 1.0
  presence_penalty   = 0.3
  frequency_penalty  = 0.3
  topics_per_call    = 6
  calls_per_genre    = 660
  sentences_per_call = 20
  example_sentences  = 10
  max_words          = 32
  seed               = var.seed
}

stage "scratch" {
  uses       = "synth.annotate"
  input      = stage.scratch_sentences.sentences
  exemplars  = stage.nli.triplets
  params     = [local.llm, local.sampling]
  max_inputs = 276000
  seed       = var.seed
}

# Table 2's scratch row: the same number of triplets as the partial set
# ("the same number of examples"; all of them when scratch has fewer), a
# seeded sample spread evenly over genre x topic: the scratch triplets come
# out genre by genre, so their first rows would be one genre of 21.
stage "scratch_eq" {
  uses     = "synth.mix"
  a        = stage.scratch.triplets
  count_of = stage.partial.triplets
  sample   = "stratified"
  strata   = stage.scratch_sentences.sentences
  seed     = var.seed
}

# SynCSE-scratch + SimCSE_NLI: the two sets merged (Table 2; "we simply
# merge these two datasets"), SimCSE_NLI and Table 2's scratch set of
# partial's size: about 1:1. Table 14 adds growing shares of that set.
stage "scratch_nli" {
  uses       = "synth.mix"
  a          = stage.nli.triplets
  b          = stage.scratch_eq.triplets
  sample_b   = true
  b_fraction = 1.0
  seed       = var.seed
}

# ---- Table 8: naive generation (no genres or topics, one fixed prompt and
# one fixed example; fixed prompt and exemplars for the labels) --------------

stage "naive_sentences" {
  uses               = "synth.sentences"
  examples           = stage.wiki.sentences
  params             = local.llm
  genres             = ["any"]
  topics_per_call    = 0
  prompts            = local.naive_prompts
  caption_prompts    = []
  fixed              = true
  calls_per_genre    = 1100
  sentences_per_call = 20
  seed               = var.seed
}

stage "naive" {
  uses       = "synth.annotate"
  input      = stage.naive_sentences.sentences
  exemplars  = stage.nli.triplets
  params     = local.llm
  fixed      = true
  max_inputs = local.naive_size
  seed       = var.seed
}

# Table 8 compares the two at the same size (22k each): scratch sampled
# as for Table 2's row.
stage "scratch_22k" {
  uses     = "synth.mix"
  a        = stage.scratch.triplets
  count_of = stage.naive.triplets
  sample   = "stratified"
  strata   = stage.scratch_sentences.sentences
  seed     = var.seed
}

# ---- Table 4: GenSE's synthetic triplets, as many as SynCSE-partial's ---------
# (the paper sampled GenSE's published set; this project makes its own).

stage "gense_eq" {
  uses     = "synth.mix"
  a        = module.gense.filter.triplets
  count_of = stage.partial.triplets
  sample   = "random"
  seed     = var.seed
}

# ---- training: supervised SimCSE on each set (RoBERTa-base) ------------------
#
# train.simcse_sup's defaults are SimCSE's supervised settings, which SynCSE
# keeps (its README: batch 512, lr 5e-5 for base): lr 5e-5, batch 512, max
# length 32, temperature 0.05, hard negatives, 3 epochs, [CLS] with the MLP
# head. Every set is evaluated on dev (STS-B dev + SICK-R dev, their
# Spearman averaged) every 125 updates and the best checkpoint kept.

stage "unsup_simcse" {
  uses           = "train.simcse_unsup"
  data           = stage.wiki.sentences
  dev            = stage.dev.pairs
  params         = local.roberta
  learning_rate  = 1e-5
  batch_size     = 512
  max_length     = 32
  temperature    = 0.05
  epochs         = 1
  pooling        = "cls"
  mlp_only_train = true
  seed           = var.seed
}

stage "sup_nli" {
  uses   = "train.simcse_sup"
  data   = stage.nli.triplets
  dev    = stage.dev.pairs
  params = local.roberta
  seed   = var.seed
}

stage "train_partial" {
  uses   = "train.simcse_sup"
  data   = stage.partial.triplets
  dev    = stage.dev.pairs
  params = local.roberta
  seed   = var.seed
}

stage "train_gense" {
  uses   = "train.simcse_sup"
  data   = stage.gense_eq.triplets
  dev    = stage.dev.pairs
  params = local.roberta
  seed   = var.seed
}

stage "train_scratch" {
  uses   = "train.simcse_sup"
  data   = stage.scratch_eq.triplets
  dev    = stage.dev.pairs
  params = local.roberta
  seed   = var.seed
}

stage "train_scratch_nli" {
  uses   = "train.simcse_sup"
  data   = stage.scratch_nli.triplets
  dev    = stage.dev.pairs
  params = local.roberta
  seed   = var.seed
}

stage "train_naive" {
  uses   = "train.simcse_sup"
  data   = stage.naive.triplets
  dev    = stage.dev.pairs
  params = local.roberta
  seed   = var.seed
}

stage "train_scratch_22k" {
  uses   = "train.simcse_sup"
  data   = stage.scratch_22k.triplets
  dev    = stage.dev.pairs
  params = local.roberta
  seed   = var.seed
}

# ---- evaluation ---------------------------------------------------------------

stage "eval_unsup" {
  uses    = "evaluate.sts"
  encoder = stage.unsup_simcse.model
  data    = stage.sts.pairs
}

stage "eval_sup" {
  uses    = "evaluate.sts"
  encoder = stage.sup_nli.model
  data    = stage.sts.pairs
}

stage "eval_partial" {
  uses    = "evaluate.sts"
  encoder = stage.train_partial.model
  data    = stage.sts.pairs
}

stage "eval_scratch" {
  uses    = "evaluate.sts"
  encoder = stage.train_scratch.model
  data    = stage.sts.pairs
}

stage "eval_gense" {
  uses    = "evaluate.sts"
  encoder = stage.train_gense.model
  data    = stage.sts.pairs
}

stage "eval_scratch_nli" {
  uses    = "evaluate.sts"
  encoder = stage.train_scratch_nli.model
  data    = stage.sts.pairs
}

stage "eval_naive" {
  uses    = "evaluate.sts"
  encoder = stage.train_naive.model
  data    = stage.sts.pairs
}

stage "eval_scratch_22k" {
  uses    = "evaluate.sts"
  encoder = stage.train_scratch_22k.model
  data    = stage.sts.pairs
}

stage "rerank_unsup" {
  uses    = "evaluate.rerank"
  encoder = stage.unsup_simcse.model
  data    = stage.rerank.queries
}

stage "rerank_sup" {
  uses    = "evaluate.rerank"
  encoder = stage.sup_nli.model
  data    = stage.rerank.queries
}

stage "rerank_partial" {
  uses    = "evaluate.rerank"
  encoder = stage.train_partial.model
  data    = stage.rerank.queries
}

stage "rerank_scratch" {
  uses    = "evaluate.rerank"
  encoder = stage.train_scratch.model
  data    = stage.rerank.queries
}

stage "rerank_scratch_nli" {
  uses    = "evaluate.rerank"
  encoder = stage.train_scratch_nli.model
  data    = stage.rerank.queries
}

# ---- the authors' released models (paper profile, by -var) --------------------
#
# Each is loaded as it is (model.hf_encoder: weights unchanged, no training)
# when its variable is set and scored by the same evaluation as our rows; an
# unset variable leaves the stage without instance and the row without cell
# (in every profile: the mini and ci profiles set none), so nothing refuses.
# checkpoint reads the variable directly, so a relative -var path resolves
# against the working directory. Inputs untruncated, as SimCSE evaluates.

stage "released_partial" {
  for_each   = var.released_partial == "" ? [] : ["partial"]
  uses       = "model.hf_encoder"
  checkpoint = var.released_partial
  pooling    = local.released_pooling
}

stage "released_scratch" {
  for_each   = var.released_scratch == "" ? [] : ["scratch"]
  uses       = "model.hf_encoder"
  checkpoint = var.released_scratch
  pooling    = local.released_pooling
}

stage "released_partial_large" {
  for_each   = var.released_partial_large == "" ? [] : ["partial_large"]
  uses       = "model.hf_encoder"
  checkpoint = var.released_partial_large
  pooling    = local.released_pooling
}

stage "released_scratch_large" {
  for_each   = var.released_scratch_large == "" ? [] : ["scratch_large"]
  uses       = "model.hf_encoder"
  checkpoint = var.released_scratch_large
  pooling    = local.released_pooling
}

# One evaluation per released model given, eval_released["partial"] ...
stage "eval_released" {
  for_each = merge(stage.released_partial, stage.released_scratch, stage.released_partial_large, stage.released_scratch_large)
  uses     = "evaluate.sts"
  encoder  = each.value.model
  data     = stage.sts.pairs
}

# ---- Table 2 (RoBERTa-base rows) ---------------------------------------------

expect "t2_unsup_simcse" {
  for_each = {
    STS12   = 70.16, STS13 = 81.77, STS14 = 73.24, STS15 = 81.36, STS16 = 80.65,
    "STS-B" = 80.22, "SICK-R" = 68.56, Avg = 76.57
  }
  row       = "unsup-SimCSE (Table 2)"
  column    = each.key
  value     = stage.eval_unsup.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

expect "t2_partial" {
  for_each  = local.paper_partial
  row       = "SynCSE-partial (Table 2)"
  column    = each.key
  value     = stage.eval_partial.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

expect "t2_scratch" {
  for_each  = local.paper_scratch
  row       = "SynCSE-scratch (Table 2)"
  column    = each.key
  value     = stage.eval_scratch.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

# sup-SimCSE as SimCSE reports it (the paper's row marked with a dagger).
expect "t2_sup_simcse" {
  for_each = {
    STS12   = 76.53, STS13 = 85.21, STS14 = 80.95, STS15 = 86.03, STS16 = 82.57,
    "STS-B" = 85.83, "SICK-R" = 80.50, Avg = 82.52
  }
  row       = "sup-SimCSE (Table 2)"
  column    = each.key
  value     = stage.eval_sup.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

expect "t2_scratch_nli" {
  for_each = {
    STS12   = 76.79, STS13 = 84.93, STS14 = 80.14, STS15 = 86.28, STS16 = 83.38,
    "STS-B" = 85.75, "SICK-R" = 81.02, Avg = 82.61
  }
  row       = "SynCSE-scratch + SimCSE_NLI (Table 2)"
  column    = each.key
  value     = stage.eval_scratch_nli.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

# The released models' rows, beside ours with the same paper values.
expect "t2_released_partial" {
  for_each  = var.released_partial == "" ? {} : local.paper_partial
  row       = "SynCSE-partial (released; Table 2)"
  column    = each.key
  value     = stage.eval_released["partial"].metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

expect "t2_released_scratch" {
  for_each  = var.released_scratch == "" ? {} : local.paper_scratch
  row       = "SynCSE-scratch (released; Table 2)"
  column    = each.key
  value     = stage.eval_released["scratch"].metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

# ---- Table 2, RoBERTa-large: declared, not run (deviation roberta_large).
# The paper's values with no result, so the report shows the half of the
# table this file does not train.
expect "t2_large_unsup_simcse" {
  for_each = {
    STS12   = 72.86, STS13 = 83.99, STS14 = 75.62, STS15 = 84.77, STS16 = 81.80,
    "STS-B" = 81.98, "SICK-R" = 71.26, Avg = 78.90
  }
  row     = "unsup-SimCSE, RoBERTa-large (Table 2)"
  column  = each.key
  paper   = each.value
  pending = local.large_pending
}

expect "t2_large_partial" {
  for_each = local.paper_partial_large
  row      = "SynCSE-partial, RoBERTa-large (Table 2)"
  column   = each.key
  paper    = each.value
  pending  = local.large_pending
}

expect "t2_large_scratch" {
  for_each = local.paper_scratch_large
  row      = "SynCSE-scratch, RoBERTa-large (Table 2)"
  column   = each.key
  paper    = each.value
  pending  = local.large_pending
}

# sup-SimCSE as SimCSE reports it (the dagger row).
expect "t2_large_sup_simcse" {
  for_each = {
    STS12   = 77.46, STS13 = 87.27, STS14 = 82.36, STS15 = 86.66, STS16 = 83.93,
    "STS-B" = 86.70, "SICK-R" = 81.95, Avg = 83.76
  }
  row     = "sup-SimCSE, RoBERTa-large (Table 2)"
  column  = each.key
  paper   = each.value
  pending = local.large_pending
}

expect "t2_large_sup_simcse_syncse" {
  for_each = {
    STS12   = 76.62, STS13 = 86.90, STS14 = 82.05, STS15 = 86.10, STS16 = 83.97,
    "STS-B" = 86.10, "SICK-R" = 82.04, Avg = 83.40
  }
  row     = "sup-SimCSE as SynCSE ran it, RoBERTa-large (Table 2)"
  column  = each.key
  paper   = each.value
  pending = local.large_pending
}

expect "t2_large_scratch_nli" {
  for_each = {
    STS12   = 77.13, STS13 = 87.61, STS14 = 82.82, STS15 = 87.67, STS16 = 85.66,
    "STS-B" = 87.22, "SICK-R" = 82.45, Avg = 84.37
  }
  row     = "SynCSE-scratch + SimCSE_NLI, RoBERTa-large (Table 2)"
  column  = each.key
  paper   = each.value
  pending = local.large_pending
}

# The released RoBERTa-large models' rows: the half of Table 2 this file
# does not train, measured when their weights are given.
expect "t2_released_partial_large" {
  for_each  = var.released_partial_large == "" ? {} : local.paper_partial_large
  row       = "SynCSE-partial, RoBERTa-large (released; Table 2)"
  column    = each.key
  value     = stage.eval_released["partial_large"].metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

expect "t2_released_scratch_large" {
  for_each  = var.released_scratch_large == "" ? {} : local.paper_scratch_large
  row       = "SynCSE-scratch, RoBERTa-large (released; Table 2)"
  column    = each.key
  value     = stage.eval_released["scratch_large"].metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

# ---- Table 3: reranking, AskUbuntu MAP. The mini and ci profiles evaluate
# on the SemEval-2016 CQA set instead, without a paper value (AskUbuntu's
# would be a different dataset's).

expect "t3_unsup" {
  row       = "unsup-SimCSE (Table 3)"
  column    = "CQA MAP (AskU.)"
  value     = stage.rerank_unsup.metrics.map
  paper     = var.askubuntu != "" ? 52.78 : null
  tolerance = 1.0
}

expect "t3_partial" {
  row       = "SynCSE-partial (Table 3)"
  column    = "CQA MAP (AskU.)"
  value     = stage.rerank_partial.metrics.map
  paper     = var.askubuntu != "" ? 53.95 : null
  tolerance = 1.0
}

expect "t3_scratch" {
  row       = "SynCSE-scratch (Table 3)"
  column    = "CQA MAP (AskU.)"
  value     = stage.rerank_scratch.metrics.map
  paper     = var.askubuntu != "" ? 53.27 : null
  tolerance = 1.0
}

expect "t3_sup" {
  row       = "sup-SimCSE (Table 3)"
  column    = "CQA MAP (AskU.)"
  value     = stage.rerank_sup.metrics.map
  paper     = var.askubuntu != "" ? 52.55 : null
  tolerance = 1.0
}

expect "t3_scratch_nli" {
  row       = "SynCSE-scratch + SimCSE_NLI (Table 3)"
  column    = "CQA MAP (AskU.)"
  value     = stage.rerank_scratch_nli.metrics.map
  paper     = var.askubuntu != "" ? 52.74 : null
  tolerance = 1.0
}

# Table 3, RoBERTa-large: declared, not run (deviation roberta_large).
expect "t3_large" {
  for_each = {
    "unsup-SimCSE, RoBERTa-large (Table 3)"                = 55.10
    "SynCSE-partial, RoBERTa-large (Table 3)"              = 54.78
    "SynCSE-scratch, RoBERTa-large (Table 3)"              = 55.48
    "sup-SimCSE, RoBERTa-large (Table 3)"                  = 54.72
    "SynCSE-scratch + SimCSE_NLI, RoBERTa-large (Table 3)" = 55.26
  }
  row     = each.key
  column  = "CQA MAP (AskU.)"
  paper   = each.value
  pending = local.large_pending
}

# ---- Table 4: other synthetic datasets ---------------------------------------

expect "t4_gense" {
  for_each = {
    STS12   = 72.09, STS13 = 85.24, STS14 = 79.84, STS15 = 83.25, STS16 = 82.88,
    "STS-B" = 83.24, "SICK-R" = 75.33, Avg = 80.27
  }
  row       = "GenSE (Table 4)"
  column    = each.key
  value     = stage.eval_gense.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

expect "t4_dino" {
  for_each = {
    STS12   = 70.27, STS13 = 81.26, STS14 = 71.25, STS15 = 80.49, STS16 = 77.18,
    "STS-B" = 77.82, "SICK-R" = 68.09, Avg = 75.20
  }
  row     = "DINO (Table 4)"
  column  = each.key
  paper   = each.value
  pending = "the paper's value, from DINO's paper as SynCSE reports it: DINO makes scored pairs, not triplets"
}

# ---- Table 8: naive generation vs SynCSE-scratch on 22k examples --------------

expect "t8_naive" {
  for_each = {
    STS12   = 64.65, STS13 = 75.86, STS14 = 62.94, STS15 = 72.79, STS16 = 71.61,
    "STS-B" = 72.76, "SICK-R" = 71.57, Avg = 70.31
  }
  row       = "Naive Generation (Table 8)"
  column    = each.key
  value     = stage.eval_naive.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

expect "t8_scratch" {
  for_each = {
    STS12   = 70.89, STS13 = 83.79, STS14 = 76.48, STS15 = 83.28, STS16 = 81.97,
    "STS-B" = 82.36, "SICK-R" = 76.14, Avg = 79.27
  }
  row       = "SynCSE-scratch, 22k (Table 8)"
  column    = each.key
  value     = stage.eval_scratch_22k.metrics[local.sts[each.key]]
  paper     = each.value
  tolerance = 1.0
}

# ---- Table 13: cost per 1,000 sentences, in dollars (the paper per sentence:
# unlabeled 0.00007, positive 0.00067, hard negative 0.00076, all 0.0015).

expect "t13_unlabeled" {
  row       = "cost per 1,000 sentences, $ (Table 13)"
  column    = "unlabeled"
  value     = stage.scratch_sentences.metrics.cost_per_1k_sentences
  paper     = 0.07
  tolerance = 0.3
}

expect "t13_labels" {
  for_each  = { "positive" = ["positive_cost_per_1k_inputs", 0.67], "hard negative" = ["negative_cost_per_1k_inputs", 0.76] }
  row       = "cost per 1,000 sentences, $ (Table 13)"
  column    = each.key
  value     = stage.scratch.metrics[each.value[0]]
  paper     = each.value[1]
  tolerance = 0.3
}

# ---- Tables 5, 6, 7 and 9: not reproducible here -----------------------------
#
# Declared so that the report says so, with the paper's key numbers.

expect "t5_not_here" {
  for_each = { "ZeroGen" = 64.41, "SynCSE-scratch" = 79.73 }
  row      = "${each.key}, 46,311 pairs (Table 5)"
  column   = "Avg"
  paper    = each.value
  pending  = "not reproducible here: needs ZeroGen's released entailment / not-entailment pairs"
}

expect "t6_not_here" {
  for_each = { "BIOSSES" = 80.12, "StackOverflow" = 43.22 }
  row      = "SynCSE-scratch, 37k domain sentences (Table 6)"
  column   = each.key
  paper    = each.value
  pending  = "not reproducible here: BIOSSES and StackOverflowDupQuestions are not in the data directory"
}

expect "t7_not_here" {
  row     = "SynCSE-partial, transfer tasks (Table 7)"
  column  = "Avg"
  paper   = 87.52
  pending = "not reproducible here: the SentEval transfer sets (MR, CR, SUBJ, MPQA, SST-2, TREC, MRPC) are not in the data directory"
}

expect "t9_not_here" {
  row     = "ethically unsafe sentences, % of 100 (Table 9)"
  column  = "Avg of 5 annotators"
  paper   = 0.4
  pending = "not reproducible here: needs five human annotators"
}

# ---- Table 14: SimCSE_NLI plus growing shares of the SynCSE-scratch set ------
#
# The copy lost the table's column headers (the amounts). Its first column
# (82.04) is sup-SimCSE on NLI alone as SynCSE reproduced it (Table 2) and its
# last (82.61) Table 2's whole scratch set added (its scratch + NLI row): those
# two line up with shares 0 and 1. The four in between (82.10, 82.73, 82.58,
# 82.75) have no recoverable amounts; the grid adds a fifth of the set more
# at each step (a nested seeded sample). Share 0 is sup_nli itself (the mix
# writes NLI's bytes, so its training is found cached). Run in the mini and
# ci profiles (`--ablation amount`; README, Table 14).
ablation "amount" {
  title   = "Table 14: SimCSE_NLI + a share of SynCSE-scratch (Avg STS)"
  vary    = { "stage.scratch_nli.b_fraction" = [0, 0.2, 0.4, 0.6, 0.8, 1] }
  report  = [stage.eval_scratch_nli.metrics.avg]
  columns = ["Avg. STS"]
  paper   = { "0" = [82.04], "1" = [82.61] }
}

# ---- mini: the offline generator on this machine ------------------------------
#
# The language model is lm.hcl's mini GPT-2 (4 layers, width 256, context
# 128, pretrained from scratch on the local Wikipedia, BBC and Brown
# sentences: 37 minutes, cached), fine-tuned on SynCSE's chats
# (modules/syncse_chat.hcl: 300 updates of 16 on NLI labelling chats of
# premises NOT labelled here and on list chats of the scratch and naive
# calls), answering in-process (provider "local"). It labels the first
# 1,200 NLI premises (SynCSE-partial), writes 21 genres x 64 calls x 2
# sentences (SynCSE-scratch: about as many as partial's triplets) and
# 600 x 2 naive sentences, and labels those; Table 8 compares naive and
# scratch at the naive set's size (synth.mix count_of). Supervised SimCSE
# trains the mini encoder of simcse.hcl's mini profile (2 layers, width 128,
# GloVe, mean pooling, from scratch) on each set; the GenSE row trains it
# on gense.hcl's mini triplets. Departures, all forced by a
# 128-token context and a 5M-parameter model: prompts fitted to the context
# (the earliest exemplars left out: 1-2 of the 5 shots remain), the short
# sentence prompts (local.short_prompts, three topics), two sentences per
# call, answers of at most 24 (labels) and 64 (lists) tokens. What it
# shows: the whole pipeline, offline, with real parsing, dropping and
# training on what a real model wrote. What it cannot show: anything about
# ChatGPT's data -- a small GPT-2 writes poorer paraphrases and
# contradictions than gpt-3.5-turbo -- so the paper's numbers are far.
profile "mini" {
  variables = { labelled = 1200 }

  # The data directory's stand-ins for SimCSE_NLI, wiki1m and AskUbuntu.
  stage "nli" {
    source = "nli"
  }
  stage "wiki" {
    source = "wiki"
  }
  stage "rerank" {
    source = "semeval2016_cqa"
    split  = "dev"
  }

  # The mixes as this profile's results were recorded: the first rows of
  # the scratch set, and the NLI stand-in beside every scratch triplet
  # (deviation first_rows; its stage keys stay those of the recorded runs).
  stage "scratch_eq" {
    sample = "first"
    strata = null
    seed   = 0
  }
  stage "scratch_22k" {
    sample = "first"
    strata = null
    seed   = 0
  }
  stage "gense_eq" {
    sample = "first"
    seed   = 0
  }
  stage "scratch_nli" {
    b = stage.scratch.triplets
  }
  deviation "first_rows" {
    what   = "the scratch sets' cut and Scratch + SimCSE_NLI's mixture, in this profile"
    paper  = "a scratch set the size of SynCSE-partial's, spread over the generated genres and topics; SimCSE_NLI merged with that set, about 1:1"
    ours   = "the first rows of the labelled scratch set (and of GenSE's triplets), which come genre by genre; the NLI stand-in beside every scratch triplet"
    why    = "the paper profile's sample came after this profile's results were recorded; keeping its stage keys keeps them (a new cut re-runs the trainings downstream)"
    tables = ["Table 2", "Table 4", "Table 8", "Table 14"]
  }

  stage "partial" {
    lm         = module.chat.chat_lm.model
    params     = local.offline
    max_inputs = 1200
    max_tokens = 24
  }
  stage "scratch" {
    lm         = module.chat.chat_lm.model
    params     = local.offline
    max_tokens = 24
  }
  stage "naive" {
    lm         = module.chat.chat_lm.model
    params     = local.offline
    max_tokens = 24
  }
  stage "scratch_sentences" {
    lm              = module.chat.chat_lm.model
    params          = [local.offline, local.offline_lists]
    prompts         = local.short_prompts
    caption_prompts = []
    topics_per_call = 3
    calls_per_genre = 64
  }
  stage "naive_sentences" {
    lm              = module.chat.chat_lm.model
    params          = [local.offline, local.offline_lists]
    calls_per_genre = 600
  }
  stage "unsup_simcse" {
    params         = local.mini
    mlp_only_train = false
    learning_rate  = 2e-4
    eval_every     = 60
  }
  stage "sup_nli" {
    params = local.mini
  }
  stage "train_partial" {
    params = local.mini
  }
  stage "train_gense" {
    params = local.mini
  }
  stage "train_scratch" {
    params = local.mini
  }
  stage "train_scratch_nli" {
    params = local.mini
  }
  stage "train_naive" {
    params = local.mini
  }
  stage "train_scratch_22k" {
    params = local.mini
  }
}

# ---- ci: the same pipeline in minutes -------------------------------------------
#
# The generator is the module's own tiny GPT-2 (2 layers, width 128, context
# 160; 300 updates, then 150 on the chats); 96 premises labelled, 3 genres
# x 20 calls and 120 naive calls of 2 sentences (the tiny model answers
# most naive calls with no list at all); the encoders are pretrained.hcl's
# ci BERT, 20 updates each (batches of 8 on the small scratch and naive
# sets); the GenSE row trains it on gense.hcl's ci triplets (its chain
# shared with gense.hcl's own ci run, which make test runs first). A gate,
# not a finding.
profile "ci" {
  variables = { labelled = 96 }

  stage "nli" {
    source = "nli"
  }
  stage "wiki" {
    source = "wiki"
  }
  stage "rerank" {
    source = "semeval2016_cqa"
    split  = "dev"
  }

  # The mixes as this profile's results were recorded: the first rows of
  # the scratch set, and the NLI stand-in beside every scratch triplet
  # (deviation first_rows; its stage keys stay those of the recorded runs).
  stage "scratch_eq" {
    sample = "first"
    strata = null
    seed   = 0
  }
  stage "scratch_22k" {
    sample = "first"
    strata = null
    seed   = 0
  }
  stage "gense_eq" {
    sample = "first"
    seed   = 0
  }
  stage "scratch_nli" {
    b = stage.scratch.triplets
  }
  deviation "first_rows" {
    what   = "the scratch sets' cut and Scratch + SimCSE_NLI's mixture, in this profile"
    paper  = "a scratch set the size of SynCSE-partial's, spread over the generated genres and topics; SimCSE_NLI merged with that set, about 1:1"
    ours   = "the first rows of the labelled scratch set (and of GenSE's triplets), which come genre by genre; the NLI stand-in beside every scratch triplet"
    why    = "the paper profile's sample came after this profile's results were recorded; keeping its stage keys keeps them (a new cut re-runs the trainings downstream)"
    tables = ["Table 2", "Table 4", "Table 8", "Table 14"]
  }

  stage "partial" {
    lm         = module.chat.chat_lm.model
    params     = local.offline
    max_inputs = 96
    max_tokens = 24
  }
  stage "scratch" {
    lm         = module.chat.chat_lm.model
    params     = local.offline
    max_tokens = 24
  }
  stage "naive" {
    lm         = module.chat.chat_lm.model
    params     = local.offline
    max_tokens = 24
  }
  stage "scratch_sentences" {
    lm              = module.chat.chat_lm.model
    params          = [local.offline, local.offline_lists]
    prompts         = local.short_prompts
    caption_prompts = []
    topics_per_call = 3
    calls_per_genre = 20
    genres          = ["fiction", "news from websites or newspapers", "letters"]
  }
  stage "naive_sentences" {
    lm              = module.chat.chat_lm.model
    params          = [local.offline, local.offline_lists]
    calls_per_genre = 120
  }
  stage "unsup_simcse" {
    init          = module.pretrained.bert.model
    params        = local.ci
    max_sentences = 640
  }
  stage "sup_nli" {
    init   = module.pretrained.bert.model
    params = local.ci
  }
  stage "train_partial" {
    init   = module.pretrained.bert.model
    params = local.ci
  }
  stage "train_gense" {
    init   = module.pretrained.bert.model
    params = local.ci
  }
  stage "train_scratch" {
    init       = module.pretrained.bert.model
    params     = local.ci
    batch_size = 8
  }
  stage "train_scratch_nli" {
    init   = module.pretrained.bert.model
    params = local.ci
  }
  stage "train_naive" {
    init       = module.pretrained.bert.model
    params     = local.ci
    batch_size = 8
  }
  stage "train_scratch_22k" {
    init       = module.pretrained.bert.model
    params     = local.ci
    batch_size = 8
  }
}
