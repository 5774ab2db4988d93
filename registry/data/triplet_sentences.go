package data

import (
	"context"
	"fmt"
	"path/filepath"

	"repro/internal/rows"
	"repro/registry"
)

// TripletSentencesParams are data.triplet_sentences's parameters.
type TripletSentencesParams struct {
	Columns []string `cty:"columns" doc:"which sentences of each triplet: anchor, positive, negative"`
}

// tripletSentencesType turns triplets into a sentence corpus: supervised
// PaSeR masks the phrases of the NLI sentences it trains on, and the
// masking stage reads sentences.
func tripletSentencesType() *registry.StageType {
	return &registry.StageType{
		Name:    "data.triplet_sentences",
		Version: 1,
		Doc:     "The sentences of NLI triplets as a corpus (the chosen columns, row by row, each distinct sentence kept at its first occurrence).",
		Params:  TripletSentencesParams{Columns: []string{"anchor", "positive", "negative"}},
		Inputs:  []registry.Port{{Name: "triplets", Kind: registry.KindTriplets, Doc: "triplets.jsonl"}},
		Outputs: []registry.Port{{Name: "sentences", Kind: registry.KindSentences, Doc: "sentences.jsonl"}},
		Run: func(ctx context.Context, env *registry.Env) error {
			p := env.Params.(*TripletSentencesParams)
			in, err := env.Input("triplets")
			if err != nil {
				return err
			}
			ts, err := rows.Read[rows.Triplet](in.Path(registry.FileTriplets))
			if err != nil {
				return err
			}
			seen := map[string]bool{}
			var out []rows.Sentence
			for _, t := range ts {
				for _, c := range p.Columns {
					s := map[string]string{"anchor": t.Anchor, "positive": t.Positive, "negative": t.Negative}[c]
					if s == "" || seen[s] {
						continue
					}
					seen[s] = true
					out = append(out, rows.Sentence{Text: s})
				}
			}
			if len(out) == 0 {
				return fmt.Errorf("%s: no sentences in the chosen columns", in.Path(registry.FileTriplets))
			}
			return rows.Write(filepath.Join(env.Output("sentences"), registry.FileSentences), out)
		},
	}
}
