// Package pooled is the trained sentence encoder: a tokenizer, a
// BERT/RoBERTa-shaped transformer encoder (repro/internal/model/transformer)
// and a pooling, with the longest input it reads. It is what the training
// stages build and train, what they save as an encoder artifact, and what
// every evaluation opens through repro/internal/encoder ("type":
// "transformer").
//
// Three ways to get a Model:
//
//   - New: from scratch, for the mini profile. The vocabulary is either a
//     vocab.txt (bert-base-uncased's, from the data catalogue) or a
//     WordPiece vocabulary trained on the training sentences
//     (TrainVocab). InitGloVeScaled optionally copies GloVe vectors into
//     the word embeddings of whole-word pieces (entries that are neither
//     "##" continuations nor special tokens). GloVe 6B is 100-dimensional; a
//     model whose hidden size is larger gets the vectors in its leading 100
//     columns and keeps its random initialisation in the rest (the
//     embedding layer norm that follows rescales the sum). That choice needs
//     no extra projection layer, so the checkpoint stays a plain BERT that
//     Hugging Face tools open; a hidden size below 100 is refused.
//   - FromHF: a local Hugging Face BERT or RoBERTa directory
//     (config.json, model.safetensors, vocab.txt or vocab.json+merges.txt),
//     the paper profile's path, through repro/internal/model/checkpoint.
//   - Load: a directory written by Save (also what encoder.Open uses).
//
// Pooling follows SimCSE. "cls" is the first token through an MLP (dense +
// tanh), which is BERT's pooler layer: SimCSE's simcse_to_huggingface
// renames its "mlp" to "pooler", so the pooler weights ARE the SimCSE head.
// Unsupervised SimCSE trains with that head and evaluates without it
// (mlp_only_train); the training stage therefore trains with "cls" and
// saves the model with "cls_before_pooler" (EvalPooling).
//
// Save writes a checkpoint directory (model.safetensors, config.json with
// the pooling and length under "repro", tokenizer files) plus
// encoder.json {"type": "transformer", "pooling", "max_length"}.
//
// Encode runs in evaluation mode (no dropout), in batches of BatchSize
// sentences taken in order of token length so that little padding is
// computed; results return in input order and do not depend on the
// batching, up to float32 rounding in the matrix kernels' blocking.
package pooled
