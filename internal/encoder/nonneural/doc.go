// Package nonneural holds three real, non-neural sentence encoders that
// implement encoder.Encoder and live in encoder artifacts (encoder.json plus
// their files):
//
//   - glove_avg: the mean of the GloVe vectors of a sentence's known words
//     (the SentEval bag-of-words baseline). The artifact keeps the whole
//     vector table as little-endian float32 (vectors.f32) beside a
//     vocabulary (vocab.txt, one word a line), so opening it is one read
//     and no text parsing. See Tokenize for the tokeniser.
//   - tfidf: TF-IDF bag of words, fitted on a sentence corpus exactly like
//     scikit-learn's TfidfVectorizer defaults (lowercase, token pattern
//     (?u)\b\w\w+\b, raw counts, smooth idf = ln((1+n)/(1+df)) + 1, L2
//     norm), limited to max_features terms. Vectors are returned dense
//     (encoder.Encoder's contract); the max_features limit (default 20000) is
//     what keeps that affordable.
//   - file: vectors a user computed with any tool, read from JSONL rows
//     {"text": ..., "vector": [...]}; each sentence maps to its vector by
//     exact text and a sentence without one is an error naming it.
//
// Register makes encoder.Open understand the three types; it is called
// explicitly (registry/builtin, or registry/encode's Register), never from
// init.
package nonneural

import "repro/internal/encoder"

// Encoder type names as written in encoder.json.
const (
	TypeGloVeAvg = "glove_avg"
	TypeTFIDF    = "tfidf"
	TypeFile     = "file"
)

// Register registers the three encoder types with package encoder.
func Register() {
	encoder.RegisterType(TypeGloVeAvg, openGloVe)
	encoder.RegisterType(TypeTFIDF, openTFIDF)
	encoder.RegisterType(TypeFile, openFile)
}
