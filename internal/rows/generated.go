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
	// X2IDs are the token ids generated for x2 (generated rows, when the
	// stage's token_ids is on; absent otherwise): decoded, they give x2
	// before its surrounding spaces are trimmed, then the closing quote
	// and whatever else the token that completed it held. PromptIDs are
	// I_y(x1)'s ids as the model read them.
	X2IDs     []int `json:"x2_ids,omitempty"`
	PromptIDs []int `json:"prompt_ids,omitempty"`
}
