// Package mlm is masked-language-model pretraining of the BERT/RoBERTa-shaped
// encoder (repro/internal/model/transformer) with BERT's recipe (Devlin et
// al. 2019): 15% of the tokens are chosen for prediction, 80% of those
// replaced by the mask token, 10% by a random token, 10% left as they are;
// whole-word masking (all pieces of a chosen word) as an option; masks drawn
// afresh every time a sentence is seen (RoBERTa's dynamic masking). The
// head is BERT's (dense + GELU + layer norm, tied to the word embeddings);
// the loss is scored at the chosen positions only. BERT's second objective,
// next-sentence prediction (nsp.go), is an option: pairs of sentences, the
// second the text's next sentence half the time, classified from the
// pooler's output -- the only pretraining signal that reaches [CLS].
//
// Design choices:
//
//   - Single sentences, not packed 512-token segments: every use of the
//     model downstream encodes one sentence framed [CLS] ... [SEP] (32
//     tokens in the papers' fine-tuning), and the local corpora are
//     sentence lists, some without document order (the Wikipedia lines).
//     GroupByLength batches sentences of similar length so that padding
//     costs little. With next-sentence prediction the unit is a pair of
//     sentences, BERT's [CLS] A [SEP] B [SEP], taken from the sentence
//     list in order: its document boundaries are not kept, so about one
//     "next" pair in twenty crosses from one BBC article into the next (BERT's
//     own random "not next" sentences are sometimes from the same document:
//     both objectives tolerate a little label noise).
//   - The trained model is saved as a Hugging Face masked-LM checkpoint that
//     is also a sentence-encoder artifact (Save): the rest of the pipeline
//     treats it as it treats bert-base (the loaders skip the head), and a
//     training stage that continues pretraining gets its head back
//     (FromEncoder).
//   - Evaluation (Evaluate) masks held-out sentences with a fixed seed, so
//     that perplexity and accuracy are comparable across steps and runs.
//
// The library knows nothing of stages; registry/train's train.mlm is the
// adapter.
package mlm
