// Package metrics computes the evaluation numbers the five papers report,
// following the reference implementations they were produced with (SentEval
// as modified by SimCSE, MTEB v1, scipy, scikit-learn, Wang & Isola's code).
// testdata/golden.py recomputes every function here with numpy, scipy and
// scikit-learn; the Go tests assert agreement to 1e-6.
//
// Design choices:
//
//   - Inputs are the []float32 vectors encoders return; every sum is
//     accumulated in float64 and in a fixed order, so results are identical
//     run after run even where rows are processed in parallel.
//   - Primitive functions (Cosine, Pearson, Spearman, AveragePrecision, ...)
//     return raw values (a correlation in [-1, 1]). Protocol results
//     (STSResult, RerankResult, RetrievalResult) are percentages (x100), as
//     the papers print them, because the STS "Avg" column is defined on the
//     percentages rounded to two decimals.
//   - Undefined values follow scipy: Pearson or Spearman of a constant
//     input, or of fewer than two values, is NaN. The protocol functions turn
//     such a NaN into an error naming the task, because a metrics file must
//     never carry a silent NaN.
//   - Cosine with a zero vector is 0, which is what every reference does in
//     effect: SentEval wraps its cosine in np.nan_to_num, and
//     sentence-transformers' cos_sim normalises with torch's eps. A
//     bag-of-words encoder legitimately returns a zero vector for a sentence
//     of unknown words; a non-finite vector is a bug that callers reject
//     before calling in here.
//   - Alignment and uniformity normalise like torch.nn.functional.normalize
//     (a zero vector stays zero).
//   - The O(n^2 d) metrics (Uniformity over all pairs, Retrieval over all
//     candidates) take their cosines from a similarity matrix computed in
//     float64 by a blocked matrix multiply (an AVX2 micro-kernel on amd64,
//     pure Go elsewhere), or through an inverted index when the vectors are
//     sparse (TF-IDF). Both give every similarity the same bits -- a
//     sequential float64 sum in dimension order, a pure function of the two
//     vectors -- so ties stay exact and the path never shows in a result.
//     float32 sgemm would be 2-3x faster but could reorder near-tied
//     retrieval candidates; the float64 product stays within 1e-15 of the
//     per-pair dot products it replaced (gram.go, gram_test.go).
//
// See the doc comment of each protocol function for its exact semantics,
// including how ties are ranked.
package metrics
