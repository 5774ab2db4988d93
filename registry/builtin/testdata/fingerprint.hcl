# Every built-in stage type on a tiny fixed input (fingerprint_test.go): the
# digest of each output is recorded in fingerprints.json, so a change to what
# a stage writes without a bump of its Version fails the test instead of
# serving stale cached results. Tiny settings keep the whole file to seconds.

experiment "fingerprint" {
  title = "stage fingerprints"
}

# Not a paper: the local data sets are the inputs by design.
deviation "local_data" {
  what      = "every data stage's input"
  paper     = "no paper (a fixture of every stage type)"
  ours      = "tiny slices of the data directory's sets"
  why       = "the fingerprints pin what each stage type writes for a fixed input"
  stand_ins = ["nli", "wiki", "bbc", "brown", "semeval2016_cqa"]
}

stage "sts" {
  uses  = "data.sts"
  tasks = ["stsb"]
  split = "dev"
}

stage "sts_sentences" {
  uses   = "data.sts_sentences"
  tasks  = ["stsb"]
  splits = ["dev"]
}

stage "nli" {
  uses  = "data.nli"
  files = ["snli_dev"]
}

stage "wiki" {
  uses  = "data.sentences"
  limit = 300
}

stage "news" {
  uses  = "data.documents"
  limit = 40
}

stage "rerank" {
  uses = "data.rerank"
}

stage "triplet_sentences" {
  uses     = "data.triplet_sentences"
  triplets = stage.nli.triplets
  columns  = ["anchor"]
}

stage "glove" {
  uses = "encode.glove_avg"
}

stage "tfidf" {
  uses         = "encode.tfidf"
  corpus       = stage.wiki.sentences
  max_features = 500
}

stage "vectors" {
  uses = "encode.file"
  path = "fingerprint_vectors.jsonl"
}

stage "mask_rake" {
  uses   = "text.mask_phrases"
  input  = stage.wiki.sentences
  method = "rake"
  top_k  = 2
}

stage "mask_np" {
  uses   = "text.mask_phrases"
  input  = stage.wiki.sentences
  method = "np"
}

stage "span_corrupt" {
  uses       = "text.span_corrupt"
  input      = stage.wiki.sentences
  pack_words = 40
  copies     = 2
  seed       = 7
}

stage "unigram_vocab" {
  uses       = "text.unigram_vocab"
  input      = stage.wiki.sentences
  vocab_size = 150
  sentinels  = 10
}

stage "eda" {
  uses                = "text.eda"
  input               = stage.mask_rake.pairs
  synonym_replacement = 0.2
  random_deletion     = 0.1
  random_swap         = 0.1
  seed                = 7
}

stage "unsup" {
  uses          = "train.simcse_unsup"
  data          = stage.wiki.sentences
  dev           = stage.sts.pairs
  layers        = 1
  hidden        = 16
  heads         = 2
  intermediate  = 32
  max_position  = 40
  vocab         = "train"
  vocab_size    = 300
  batch_size    = 8
  max_steps     = 3
  eval_every    = 3
  pooling       = "mean"
  learning_rate = 1e-3
  seed          = 7
}

stage "sup" {
  uses          = "train.simcse_sup"
  data          = stage.nli.triplets
  init          = stage.unsup.model
  batch_size    = 8
  max_steps     = 2
  max_triplets  = 40
  pooling       = "mean"
  learning_rate = 1e-3
  seed          = 7
}

stage "paser" {
  uses           = "train.paser"
  data           = stage.mask_rake.pairs
  layers         = 1
  hidden         = 16
  heads          = 2
  intermediate   = 32
  max_position   = 40
  vocab          = "train"
  vocab_size     = 300
  decoder_layers = 1
  batch_size     = 8
  max_steps      = 2
  pooling        = "mean"
  learning_rate  = 1e-3
  seed           = 7
}

stage "paser_sup" {
  uses          = "train.paser_sup"
  triplets      = stage.nli.triplets
  masked        = stage.mask_rake.pairs
  init          = stage.paser.model
  batch_size    = 8
  max_steps     = 2
  max_triplets  = 40
  pooling       = "mean"
  learning_rate = 1e-3
  seed          = 7
}

stage "eval_sts" {
  uses    = "evaluate.sts"
  encoder = stage.sup.model
  data    = stage.sts.pairs
}

stage "eval_rerank" {
  uses    = "evaluate.rerank"
  encoder = stage.tfidf.encoder
  data    = stage.rerank.queries
}

stage "eval_retrieval" {
  uses    = "evaluate.retrieval"
  encoder = stage.glove.encoder
  data    = stage.news.documents
}

stage "eval_density" {
  uses    = "evaluate.cosine_density"
  encoder = stage.paser_sup.model
  data    = stage.sts.pairs
}

# The synth.* stages ask a loopback chat-completions server that the test
# starts (its address in var.llm_url); its answers are a fixed function of
# each request.
variable "llm_url" {
  default = "http://127.0.0.1:1/v1"
}

stage "synth_sentences" {
  uses                = "synth.sentences"
  examples            = stage.wiki.sentences
  caption_examples    = stage.triplet_sentences.sentences
  base_url            = var.llm_url
  model               = "fingerprint"
  api_key_env         = ""
  requests_per_minute = 0
  tokens_per_minute   = 0
  genres              = ["fiction", "short image captions"]
  calls_per_genre     = 2
  seed                = 7
}

stage "synth_annotate" {
  uses                = "synth.annotate"
  input               = stage.synth_sentences.sentences
  exemplars           = stage.nli.triplets
  base_url            = var.llm_url
  model               = "fingerprint"
  api_key_env         = ""
  requests_per_minute = 0
  tokens_per_minute   = 0
  seed                = 7
}

stage "synth_mix" {
  uses     = "synth.mix"
  a        = stage.nli.triplets
  b        = stage.synth_annotate.triplets
  max_a    = 5
  sample_b = true
  seed     = 7
}

stage "corpus" {
  uses     = "data.corpus"
  sources  = ["wiki", "brown"]
  dedupe   = true
  dev_size = 20
  seed     = 7
}

stage "mlm" {
  uses          = "train.mlm"
  data          = stage.wiki.sentences
  layers        = 1
  hidden        = 16
  heads         = 2
  intermediate  = 32
  max_position  = 40
  vocab         = "bpe"
  vocab_size    = 400
  batch_size    = 8
  max_steps     = 2
  learning_rate = 1e-3
  seed          = 7
}

stage "fewshot_split" {
  uses       = "data.fewshot_split"
  documents  = stage.news.documents
  validation = 8
  test       = 8
  labels     = 10
  seed       = 7
}

stage "sample" {
  uses      = "data.sample"
  documents = stage.news.documents
  size      = 5
  seed      = 7
}

stage "conpono_pairs" {
  uses      = "annotate.conpono"
  documents = stage.news.documents
  window    = 1
}

stage "ict_pairs" {
  uses      = "annotate.ict"
  documents = stage.news.documents
  window    = 1
}

stage "infonce" {
  uses          = "train.infonce"
  data          = stage.conpono_pairs.pairs
  validation    = stage.fewshot_split.validation
  layers        = 1
  hidden        = 16
  heads         = 2
  intermediate  = 32
  max_position  = 40
  vocab         = "train"
  vocab_size    = 300
  batch_size    = 8
  max_steps     = 3
  eval_every    = 3
  pooling       = "mean"
  similarity    = "cosine"
  temperature   = 0.05
  learning_rate = 1e-3
  seed          = 7
}

stage "idc_pairs" {
  uses      = "annotate.idc"
  model     = stage.infonce.model
  documents = stage.news.documents
}

stage "idc_kmeans_pairs" {
  uses      = "annotate.idc_kmeans"
  model     = stage.infonce.model
  documents = stage.news.documents
  clusters  = 4
  seed      = 7
}

stage "headline" {
  uses          = "train.headline"
  data          = stage.fewshot_split.labeled
  validation    = stage.fewshot_split.validation
  init          = stage.infonce.model
  batch_size    = 4
  epochs        = 1
  max_sentences = 2
  pooling       = "mean"
  learning_rate = 1e-3
  seed          = 7
}

stage "causal_lm" {
  uses          = "train.causal_lm"
  data          = stage.wiki.sentences
  dev           = stage.corpus.dev
  from_scratch  = true
  layers        = 1
  hidden        = 16
  heads         = 2
  context       = 512
  vocab         = "train"
  vocab_size    = 300
  max_length    = 16
  batch_size    = 4
  max_steps     = 2
  eval_every    = 2
  learning_rate = 1e-3
  seed          = 7
}

stage "perplexity" {
  uses  = "evaluate.perplexity"
  model = stage.causal_lm.model
  data  = stage.corpus.dev
}

stage "complete" {
  uses           = "generate.complete"
  model          = stage.causal_lm.model
  data           = stage.corpus.dev
  template       = "[X] In other words,"
  max_prompts    = 3
  samples        = 2
  max_new_tokens = 5
  top_k          = 5
  top_p          = 0.9
  seed           = 7
}

# The offline provider: fine-tuning chats for the language model above, and
# synth.annotate answered by it in-process.
stage "synth_chat_corpus" {
  uses               = "synth.chat_corpus"
  lm                 = stage.causal_lm.model
  triplets           = stage.nli.triplets
  exclude            = stage.triplet_sentences.sentences
  sentences          = stage.wiki.sentences
  max_exclude        = 3
  max_triplets       = 6
  pool_size          = 6
  shots              = 2
  lists              = 2
  genres             = ["fiction"]
  sentences_per_call = 2
  example_sentences  = 2
  list_max_tokens    = 64
  seed               = 7
}

stage "synth_annotate_local" {
  uses        = "synth.annotate"
  input       = stage.synth_sentences.sentences
  exemplars   = stage.nli.triplets
  provider    = "local"
  lm          = stage.causal_lm.model
  max_tokens  = 6
  pool_size   = 6
  shots       = 2
  concurrency = 4
  seed        = 7
}

# DINO: generation with self-debiasing on the tiny LM ("e" as the quote so
# that a random model ends its sentences), post-processing, rendering, the
# bi-encoder regression.
stage "dino_pairs" {
  uses           = "generate.dino_pairs"
  model          = stage.causal_lm.model
  data           = stage.corpus.dev
  max_x1         = 3
  quote          = "e"
  max_new_tokens = 6
  max_tries      = 2
  lambda         = 100
  seed           = 7
}

stage "dino_x1" {
  uses           = "generate.dino_x1"
  model          = stage.causal_lm.model
  quote          = "e"
  count          = 3
  max_rounds     = 4
  max_new_tokens = 30
  seed           = 7
}

stage "dino_distinct" {
  uses = "pairs.drop_identical"
  data = stage.dino_pairs.pairs
}

stage "dino_smooth" {
  uses = "pairs.smooth"
  data = stage.dino_distinct.pairs
}

stage "dino_augment" {
  uses = "pairs.augment"
  data = stage.dino_smooth.pairs
  seed = 7
}

stage "dino_split" {
  uses = "pairs.split"
  data = stage.dino_augment.pairs
  seed = 7
}

stage "dino_render" {
  uses         = "pairs.render_instructions"
  data         = stage.nli.triplets
  max_triplets = 5
  seed         = 7
}

stage "dino_cosine" {
  uses         = "train.cosine_mse"
  data         = stage.dino_split.train
  from_scratch = true
  layers       = 1
  hidden       = 16
  heads        = 2
  intermediate = 32
  max_position = 64
  vocab        = "train"
  vocab_size   = 120
  max_length   = 16
  batch_size   = 4
  max_steps    = 2
  seed         = 7
}

stage "repool" {
  uses    = "encode.pooling"
  encoder = stage.mlm.model
  pooling = "cls_before_pooler"
}

stage "entail_instances" {
  uses       = "text.seq2seq"
  data       = stage.nli.triplets
  source     = "Write two sentences that are entailment. Sentence 1: \"[X1]\" Sentence 2:"
  target     = "[X2]"
  hypothesis = "positive"
}

stage "seq2seq" {
  uses              = "train.seq2seq"
  data              = stage.entail_instances.instances
  dev               = stage.entail_instances.instances
  from_scratch      = true
  layers            = 1
  hidden            = 16
  heads             = 2
  ff                = 32
  vocab_size        = 300
  sentinels         = 4
  max_source_length = 24
  max_target_length = 12
  batch_size        = 4
  max_steps         = 2
  eval_every        = 2
  learning_rate     = 1e-3
  max_instances     = 40
  seed              = 7
}

stage "t5_contrastive" {
  uses          = "train.t5_contrastive"
  data          = stage.nli.triplets
  dev           = stage.sts.pairs
  init          = stage.seq2seq.model
  max_length    = 24
  batch_size    = 4
  max_steps     = 2
  eval_every    = 2
  max_triplets  = 20
  learning_rate = 1e-3
  seed          = 7
}

stage "t5_entail" {
  uses           = "generate.complete"
  model          = stage.seq2seq.model
  data           = stage.corpus.dev
  template       = "Write two sentences that are entailment. Sentence 1: \"[X]\" Sentence 2:"
  max_prompts    = 3
  max_new_tokens = 5
  temperature    = 1
  top_p          = 0.9
  seed           = 7
}

stage "t5_contra" {
  uses           = "generate.complete"
  model          = stage.seq2seq.model
  data           = stage.corpus.dev
  template       = "Write two sentences that are contradictory. Sentence 1: \"[X]\" Sentence 2:"
  max_prompts    = 3
  max_new_tokens = 5
  temperature    = 1
  top_p          = 0.9
  seed           = 7
}

stage "quality_check" {
  uses   = "synth.quality_check"
  model  = stage.seq2seq.model
  entail = stage.t5_entail.completions
  contra = stage.t5_contra.completions
  alpha  = 0
  seed   = 7
}

stage "synth_sample" {
  uses     = "synth.sample"
  data     = stage.nli.triplets
  fraction = 0.5
  seed     = 7
}

stage "span_corruption" {
  uses          = "train.span_corruption"
  data          = stage.wiki.sentences
  tokenizer     = stage.unigram_vocab.tokenizer
  from_scratch  = true
  layers        = 1
  hidden        = 16
  heads         = 2
  ff            = 32
  sentinels     = 10
  max_length    = 16
  max_sentences = 40
  batch_size    = 4
  max_steps     = 2
  learning_rate = 1e-3
  seed          = 7
}

stage "span_heldout" {
  uses       = "evaluate.span_corruption"
  model      = stage.span_corruption.model
  data       = stage.wiki.sentences
  max_length = 16
  seed       = 7
}

stage "rerank_train" {
  uses  = "data.rerank"
  split = "train_part2"
}

stage "rerank_sentences" {
  uses    = "data.rerank_sentences"
  queries = stage.rerank_train.queries
  exclude = stage.rerank.queries
  max     = 12
  seed    = 7
}

stage "retrieval_pairs" {
  uses      = "synth.retrieval_pairs"
  model     = stage.seq2seq.model
  data      = stage.rerank_sentences.sentences
  top_k     = 2
  threshold = 0.5
  seed      = 7
}

stage "scatter" {
  uses     = "figure.scatter"
  m1       = stage.eval_sts.metrics
  m2       = stage.eval_sts.metrics
  labels   = ["sup", "sup again"]
  annotate = "stsb"
}

# The authors' released artifacts: tiny Hugging Face checkpoints
# (testdata/hf, written by TestWriteHFFixtures) loaded as they are, and
# released datasets in their published layouts (testdata/released), each
# handed to a stage that takes what a trained model or our own generation
# gives.
stage "hf_bert" {
  uses       = "model.hf_encoder"
  checkpoint = "hf/bert"
  pooling    = "cls"
}

stage "eval_hf_bert" {
  uses    = "evaluate.sts"
  encoder = stage.hf_bert.model
  data    = stage.sts.pairs
}

stage "hf_t5_encoder" {
  uses       = "model.hf_t5_encoder"
  checkpoint = "hf/t5"
  max_length = 24
}

stage "hf_gpt2" {
  uses       = "model.hf_lm"
  checkpoint = "hf/gpt2"
}

stage "hf_t5_lm" {
  uses       = "model.hf_lm"
  checkpoint = "hf/t5"
}

stage "ppl_hf_gpt2" {
  uses  = "evaluate.perplexity"
  model = stage.hf_gpt2.model
  data  = stage.corpus.dev
}

stage "released_dino" {
  uses = "data.released_dino"
  path = "released/sts-dino-x2.jsonl"
}

stage "released_dino_distinct" {
  uses = "pairs.drop_identical"
  data = stage.released_dino.pairs
}

stage "released_syncse" {
  uses = "data.released_syncse"
  path = "released/syncse-partial-nli.csv"
}

stage "released_gense" {
  uses  = "data.released_gense"
  path  = "released/synli.tsv"
  limit = 1
}
