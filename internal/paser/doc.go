// Package paser is PaSeR's training objective (Wu and Zhao, "Sentence
// Representation Learning with Generative Objective rather than Contrastive
// Objective", sections 3.2-3.3) as a library: a sentence encoder, a
// Transformer decoder that shares its word embeddings, and the losses that
// train them. It knows nothing of stages or artifacts; registry/train's
// train.paser and train.paser_sup call it.
//
// The model (Model) holds:
//
//   - the sentence encoder (repro/internal/model/transformer.Encoder) and
//     its tokenizer, pooled by Config.Pooling: "cls" (the first token
//     through BERT's pooler, the paper's default), "mean" (the paper's
//     "Top1 avg"), "top2_avg" or "first_last_avg" (Table 9);
//   - a post-LN Transformer decoder of Config.DecoderLayers layers (paper
//     default 6) whose input and output word embeddings ARE the encoder's
//     (one parameter; gradients of both uses sum into it), with fresh
//     position embeddings, randomly initialised as the paper says;
//   - BERT's MLM head, also tied to the word embeddings, when Config.MLM.
//
// Design choices (each is the simplest reading of the paper that a
// standard decoder supports):
//
//   - Decoding signal (eq. 2) [Es, Es', m*|Es-Es'|, n*|Es*Es'|]. The
//     default (MemorySlots) hands the decoder the four D-wide parts as a
//     memory of four rows that cross-attention reads: exactly the
//     row-major [B, 4D] concatenation viewed as [B, 4, D], which is how a
//     Hugging Face BertLMHeadModel decoder takes a 4D-wide signal as
//     encoder_hidden_states, and it needs no extra parameter. MemoryProject
//     instead maps the concatenated [B, 4D] vector through one Linear(4D, D)
//     to a single memory row. m and n scale the two difference parts as the
//     paper's scaling factors do (best m = n = 10, Table 8).
//   - s and s' go through the encoder in ONE forward pass (a 2B-row
//     batch): dropout masks still differ per row, and the batch shares the
//     matrix products.
//   - Decoder targets (eq. 3). The masked phrases, most important first,
//     are tokenised and joined as BOS p0 SEP p1 SEP ... pk SEP, BOS being
//     the tokenizer's CLS id ([CLS], or <s> for RoBERTa vocabularies) and
//     SEP its SEP id ([SEP], </s>): SEP ends each phrase, so the decoder
//     learns where phrases end and when to stop. Teacher forcing feeds the
//     sequence without its last id and predicts it shifted by one. A pair
//     without phrases (a sentence of stopwords) still teaches "BOS -> SEP".
//     Sequences longer than Config.MaxTargetLength are cut and end in SEP.
//     The loss is the mean token cross-entropy over the batch (eq. 3's sum
//     divided by the token count, the usual normalisation, so the learning
//     rate does not depend on phrase lengths).
//   - MLM (eq. 4) runs on a separately masked copy of s in its own forward
//     pass, as SimCSE's auxiliary MLM does, so the sentence vectors that
//     feed the decoder come from the uncorrupted s. Masking is BERT's:
//     each non-special token with probability MLMProbability (0.15); of
//     those 80% become the mask token, 10% a uniformly random vocabulary id,
//     10% stay. A batch where no token was drawn gets one drawn position
//     (otherwise its MLM loss is undefined). L_total = L_MLM + L_generative.
//   - Supervised PaSeR (eq. 5): L = L_contrastive + alpha * L_generative,
//     L_contrastive being supervised SimCSE with hard negatives
//     (repro/internal/tensor/loss.SimCSESup) on NLI triplets, encoded in one
//     3B-row pass, and L_generative the loss above on masked pairs of NLI
//     sentences; no MLM (eq. 5 has none).
//
// Randomness (dropout, MLM masking) comes only from the *rand.Rand the
// caller passes, and initialisation from a generator seeded by New's seed,
// so the same seed gives bit-identical training (repro/internal/tensor's
// fixed-order Backward does the rest).
package paser
