package rows

// GeneratedPair is a labelled sentence pair of a generated dataset
// (DINO's STS-L): the pair, its (possibly smoothed) label, and where it
// came from. It is a pairs artifact row (registry.KindPairs) with
// provenance keys beside sentence1, sentence2 and label.
type GeneratedPair struct {
	Sentence1 string  `json:"sentence1"`
	Sentence2 string  `json:"sentence2"`
	Label     float64 `json:"label"`
	// Instruction is the label of the instruction that produced the pair
	// (for augmented pairs: 0, the label they are given).
	Instruction float64 `json:"instruction"`
	// Origin is "generated" (x2 continued from I_y(x1)) or "augmented"
	// (x2 drawn from another entry, labelled 0).
	Origin string `json:"origin"`
	// X1 is the index of sentence1 among the generation's inputs; Try
	// (0-based) and Sample say which draw produced x2 (generated rows);
	// Seed is the generation's seed.
	X1     int   `json:"x1"`
	Try    int   `json:"try"`
	Sample int   `json:"sample"`
	Seed   int64 `json:"seed"`
}
