package tokenizer

import "testing"

// BenchmarkWordPieceSTSB tokenizes the STS-B training sentences.
func BenchmarkWordPieceSTSB(b *testing.B) {
	tok := bertUncased(b)
	sents := readSTSB(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range sents {
			tok.Encode(s, 128)
		}
	}
	b.ReportMetric(float64(b.N*len(sents))/b.Elapsed().Seconds(), "sentences/s")
}

// BenchmarkTrainWordPiece learns an 8192-piece vocabulary from STS-B train.
func BenchmarkTrainWordPiece(b *testing.B) {
	sents := readSTSB(b)
	for i := 0; i < b.N; i++ {
		if _, err := TrainWordPiece(sents, TrainOptions{VocabSize: 8192, Basic: BasicOptions{Lowercase: true}}); err != nil {
			b.Fatal(err)
		}
	}
}
