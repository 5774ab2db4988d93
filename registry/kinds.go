package registry

// Artifact kinds. Every artifact is a directory; the constants' docs say
// which files it holds. JSONL rows are UTF-8 JSON objects, one per line, so a
// user can open every artifact without repro.
const (
	// KindSentences: sentences.jsonl, rows {"text": str}.
	KindSentences Kind = "sentences"
	// KindSTS: pairs.jsonl, rows {"task": str, "subset": str,
	// "sentence1": str, "sentence2": str, "score": float}, for one or more
	// STS tasks and one split.
	KindSTS Kind = "sts_pairs"
	// KindTriplets: triplets.jsonl, rows {"anchor", "positive", "negative"}
	// (negative may be "").
	KindTriplets Kind = "triplets"
	// KindPairs: pairs.jsonl, rows {"sentence1", "sentence2", "label": float}
	// (training pairs: positives, scored pairs, masked pairs carry more keys).
	KindPairs Kind = "pairs"
	// KindMaskedPairs: pairs.jsonl, rows {"sentence": s, "masked": s'
	// (masked phrases replaced by one "[MASK]" per word), "targets":
	// [phrase, ...] most important first} (PaSeR's duplicate-and-mask).
	KindMaskedPairs Kind = "masked_pairs"
	// KindSeq2Seq: instances.jsonl, rows {"source": str, "target": str}:
	// text-to-text training instances (teacher forcing on the target).
	KindSeq2Seq Kind = "seq2seq"
	// KindDocuments: documents.jsonl, rows {"id", "category", "headline",
	// "sentences": [str]}.
	KindDocuments Kind = "documents"
	// KindDocPairs: pairs.jsonl, rows {"doc": document id, "anchor": str,
	// "positive": str}: positive pairs from inside one document (InfoCSE's
	// intra-document clusters, CONPONO neighbours, ICT sentence and
	// context); pairs of one doc are never each other's negatives.
	KindDocPairs Kind = "doc_pairs"
	// KindRerank: queries.jsonl, rows {"id", "query", "positive": [str],
	// "negative": [str]}.
	KindRerank Kind = "rerank"
	// KindEncoder: encoder.json ({"type": ..., ...}) plus the files that
	// encoder type needs (vectors, safetensors weights, tokenizer files).
	// Opened with internal/encoder.Open.
	KindEncoder Kind = "encoder"
	// KindLanguageModel: a language model as a Hugging Face directory any
	// tool can open without repro -- config.json (the family's HF keys,
	// model_type "gpt2" or "t5"; repro's own fields under "repro"),
	// model.safetensors, the tokenizer files (vocab.json, merges.txt,
	// tokenizer_config.json) -- plus training.json (how it was trained).
	// Opened with internal/model/lm.Open. Not a sentence encoder.
	KindLanguageModel Kind = "language_model"
	// KindTokenizer: a tokenizer directory in Hugging Face's layout:
	// spiece.model + tokenizer_config.json (SentencePiece, T5's
	// tokenizer), or vocab.txt, or vocab.json + merges.txt; plus
	// pieces.tsv (piece<TAB>score per id) to read it. Opened with
	// checkpoint.LoadTokenizer.
	KindTokenizer Kind = "tokenizer"
	// KindCompletions: completions.jsonl, rows {"prompt_index", "input",
	// "prompt", "sample", "seed", "text", "stop_reason", "stop_string",
	// "tokens", "sampling": {...}} (see rows.Completion), plus samples.md, a
	// readable excerpt.
	KindCompletions Kind = "completions"
	// KindMetrics: metrics.json, a JSON object of numbers (possibly nested
	// objects of numbers); `stage.S.metrics.a.b` in HCL reads key a, then b.
	KindMetrics Kind = "metrics"
	// KindReport: report.md plus any figures (PNG) it links to.
	KindReport Kind = "report"
)

// Conventional file names inside artifacts of the kinds above.
const (
	FileSentences = "sentences.jsonl"
	FilePairs     = "pairs.jsonl"
	FileTriplets  = "triplets.jsonl"
	FileDocuments = "documents.jsonl"
	FileInstances = "instances.jsonl"
	FileQueries   = "queries.jsonl"
	FileEncoder   = "encoder.json"
	FileMetrics   = "metrics.json"
	// FileStats is the generation counts inside a DINO pairs artifact.
	FileStats = "stats.json"
	// FileCompletions is a completions artifact's rows; FileSamples its
	// markdown excerpt, which the run's report includes.
	FileCompletions = "completions.jsonl"
	FileSamples     = "samples.md"
	FileReport      = "report.md"
	// FileWhyEmpty, beside an artifact's rows, says in one line why the
	// producing stage wrote none (a filter that kept nothing); readers
	// that need rows quote it in their error.
	FileWhyEmpty = "why_empty.txt"
)
