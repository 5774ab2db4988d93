// Package syncse holds SynCSE's data synthesis (Zhang, Lan and He,
// "Contrastive Learning of Sentence Embeddings from Scratch", section 2 and
// Appendices A-C) as a library: the paper's prompt pools, genres and topics
// (prompts.go, with the placeholders the copy lost restored), the planning
// of every chat call -- sentences from scratch over genres x six topics in
// a one-shot chat, positives and hard negatives in a five-shot multi-turn
// chat with one prompt and five exemplars sampled per call -- and the
// reading of the answers (numbered lists, one-sentence labels), with the
// 32-word filter and deduplication keys.
//
// Every random choice is a pure function of what it is about (see
// Chooser): which prompt, exemplars, topics and one-shot example a call
// gets depends on the seed, the input (or genre) and the call's index, not
// on the other calls, so adding inputs or genres leaves existing calls --
// and so their cached answers -- untouched.
//
// Multi-turn format: a labelling call is the prompt as the system message,
// each exemplar as a user turn (its input) answered by an assistant turn
// (its label), then the input as the last user turn; a sentence call is
// the prompt asking for ExampleCount sentences, an assistant turn with the
// example as a numbered list, then the prompt asking for Count sentences.
// The paper shows the format only in its Figure 2, which the copy here does
// not have; this is its text's description ("a few-shot prompt in a
// multi-turn chat format", one-shot for sentences).
//
// The package knows nothing of HCL, artifacts or providers: it plans
// llm.Requests and parses the answers.
package syncse
