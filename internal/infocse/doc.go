// Package infocse holds the data side of InfoCSE (Yang et al., "A Mutually
// Reinforced Framework for Pretrained Sentence Embeddings"): the ways its
// experiments turn documents into positive sentence pairs, the few-shot
// split of a labelled corpus, and the headline-recall metric its training
// selects models by. It knows nothing of HCL, artifacts or the runner; the
// encoder that embeds sentences is the caller's business.
//
// Positive pairs, all within one document and named by sentence index:
//
//   - Partition (section 3.1, eq. 2-4, Algorithm 2): the sentences of a
//     document form a complete graph weighted by the inner product of their
//     embeddings (or the cosine); an edge survives when either end is among
//     the other's top-K; connected components are the clusters, and every
//     unordered pair inside a cluster is a positive, once.
//   - KMeans + GroupByCluster (Table 3, "IDC (K-means)"): K global clusters
//     over every sentence of the corpus (k-means++ seeding, Lloyd
//     iterations), a document's sentences grouped by their global cluster.
//   - ConponoPairs: CONPONO-style initialisation, neighbouring sentences
//     within a window. ICTContext: the Inverse Cloze Task's context, the
//     sentences around one sentence with the sentence itself removed.
//
// Design choices:
//
//   - Determinism without ties to chance: similarities are accumulated in
//     float64 in a fixed order (so w_ij == w_ji bit for bit), top-K ties go
//     to the lower index, clusters are listed by their first sentence and
//     pairs in index order. K-means draws from its own seeded PCG generator
//     and breaks distance ties by the lower cluster index.
//   - Degenerate input is counted, not fatal: a one-sentence document has
//     no pair (Stats.Skipped), a sentence alone in its cluster is a
//     singleton. Only what makes the request meaningless is an error (K < 1,
//     ragged vectors, more clusters than points).
//   - The few-shot split fixes the validation and test documents by the seed
//     alone; the labelled training documents are a prefix of the remaining
//     pool in the same seeded order, so 1,000 labels are a subset of all of
//     them and every label budget is scored on the same test set.
package infocse
