// Package train holds the train.* stage types: SimCSE's unsupervised
// (train.simcse_unsup) and supervised (train.simcse_sup) objectives over a
// repro/internal/encoder/pooled sentence encoder, trained by the shared loop of
// repro/internal/trainer and written as a "transformer" encoder artifact;
// PaSeR's (paser.go); and masked-LM pretraining (train.mlm, mlm.go), whose
// artifact is that same kind of encoder with its MLM head, the `init` the
// mini profiles start from; the causal LM trainer (causal_lm.go); and the
// text-to-text family (t5.go, span.go, t5enc.go): train.seq2seq,
// train.span_corruption and train.t5_contrastive over a
// repro/internal/model/t5 model, whose artifacts are Hugging Face T5
// directories (a language model, or a "t5" sentence encoder).
//
// Design choices:
//
//   - The stage blocks carry SimCSE's settings as defaults (learning rate,
//     batch, max length 32, temperature 0.05, epochs, evaluation every 250
//     steps, "cls" pooling with the MLP head, mlp_only_train for unsup),
//     and the architecture parameters default to BERT-base's shape, so the
//     paper profile only names hf_checkpoint (bert-base-uncased or
//     roberta-base, a local Hugging Face directory) and a mini profile
//     only shrinks the architecture and the steps.
//   - Where the model comes from, in order: the optional `init` input (a
//     transformer encoder artifact, to continue training), else
//     hf_checkpoint, else a from-scratch model of the given architecture
//     with a bert-base-uncased or trained WordPiece vocabulary and
//     optional GloVe word embeddings. SimCSE's MLP head is a new layer,
//     so with "cls" pooling a Hugging Face checkpoint's pre-trained pooler
//     is re-initialised (seeded); an `init` model keeps its own.
//   - Model selection: with the optional `dev` input (STS-B dev pairs)
//     the trainer evaluates every eval_every updates and the saved model is
//     the best one by Spearman; without it the last weights are saved.
//   - Every run is seeded (weights, data order, dropout), deterministic on
//     CPU, and resumable from env.Work: a killed run continues where its
//     last state snapshot left off and ends bit-identical.
//
// The helpers in model.go (ModelSpec/BuildModel, LoadDev, LoopSpec with
// Fit/FitParams, ReadSentences, ReadTriplets, SaveModel) are what other
// training types of this family (PaSeR's, DINO's bi-encoder, ...) reuse:
// they hold no SimCSE logic. The larger recipes live in internal/
// (internal/mlm, internal/clm, internal/seq2seq, internal/contrastive) and
// every type trains through trainer.Drive, which keeps the resumable state
// and the run's journal in env.Work; the types here decode parameters,
// read inputs, build the model and call a recipe.
package train

import (
	"repro/internal/dataset"
	"repro/internal/encoder/pooled"
	"repro/registry"
)

// Register adds the train.* stage types to r and registers the
// "transformer" encoder type with package encoder, so the artifacts they write open
// in this process.
func Register(r *registry.Registry) {
	pooled.Register()
	r.Add(simcseUnsupType())
	r.Add(simcseSupType())
	r.Add(infonceType())
	r.Add(headlineType())
}

// catalogue resolves the vocabulary and GloVe datasets; tests point it at
// their data directory.
var catalogue = dataset.Default
