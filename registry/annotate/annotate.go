// Package annotate holds the annotate.* stage types: each turns documents
// into positive sentence pairs (registry.KindDocPairs) for InfoCSE's
// contrastive training, with the algorithms of repro/internal/infocse.
//
//	annotate.idc          intra-document clustering by graph partition (the current model's embeddings)
//	annotate.idc_kmeans   IDC with K global k-means clusters (Table 3's ablation)
//	annotate.conpono      neighbouring sentences within a window (CONPONO-style initialisation)
//	annotate.ict          a sentence and its context without it (Inverse Cloze Task)
//
// Shared design:
//
//   - Every type reads `documents` and, optionally, `extra` (more unlabeled
//     documents: the Brown Corpus beside BBC News); headlines are ignored,
//     so annotation never sees a label.
//   - A document of fewer than two sentences yields no pair and is counted
//     (stats: skipped), never an error; a run that yields no pair at all is
//     an error that says why, since an empty training set would only fail
//     later and further from the cause.
//   - Besides the pairs, each writes `stats` (metrics.json): documents,
//     skipped, sentences, clusters, clusters per document, singletons,
//     pairs, the largest cluster. They are logged too, so a round's
//     annotation can be compared with the next one's.
//   - The clustering types encode each distinct sentence once, with the
//     encoder's own evaluation pooling and length limit.
package annotate

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"repro/internal/encoder"
	"repro/internal/encoder/pooled"
	"repro/internal/infocse"
	"repro/internal/rows"
	"repro/registry"
)

// Register adds the annotate.* stage types to r.
func Register(r *registry.Registry) {
	r.Add(idcType())
	r.Add(kmeansType())
	r.Add(conponoType())
	r.Add(ictType())
}

var (
	documentsPort = registry.Port{Name: "documents", Kind: registry.KindDocuments, Doc: "documents to draw positive pairs from (headlines are not read)"}
	extraPort     = registry.Port{Name: "extra", Kind: registry.KindDocuments, Optional: true, Doc: "more unlabeled documents, appended after documents (e.g. the Brown Corpus)"}
	modelPort     = registry.Port{Name: "model", Kind: registry.KindEncoder, Doc: "the current sentence encoder: its embeddings weight the sentence graph"}
	outputs       = []registry.Port{
		{Name: "pairs", Kind: registry.KindDocPairs, Doc: "pairs.jsonl: doc, anchor, positive"},
		{Name: "stats", Kind: registry.KindMetrics, Doc: "metrics.json: documents, skipped, sentences, clusters, clusters_per_document, singletons, pairs, largest"},
	}
)

// readDocuments reads documents and the optional extra documents. An
// empty sentence is an error naming its row: it would embed as nothing.
func readDocuments(env *registry.Env) ([]rows.Document, error) {
	var out []rows.Document
	for _, name := range []string{"documents", "extra"} {
		a, ok := env.Inputs[name]
		if !ok {
			if name == "documents" {
				return nil, fmt.Errorf("input %q is not connected", name)
			}
			continue
		}
		path := a.Path(registry.FileDocuments)
		docs, err := rows.Read[rows.Document](path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for i, d := range docs {
			for k, s := range d.Sentences {
				if strings.TrimSpace(s) == "" {
					return nil, fmt.Errorf("%s: %s row %d (id %q): sentence %d is empty", name, path, i+1, d.ID, k+1)
				}
			}
		}
		out = append(out, docs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("documents: no documents")
	}
	return out, nil
}

// corpus indexes the distinct sentences of documents so that each is
// encoded once.
type corpus struct {
	texts []string
	doc   [][]int // per document, its sentences as indices into texts
}

func newCorpus(docs []rows.Document) *corpus {
	c := &corpus{doc: make([][]int, len(docs))}
	index := map[string]int{}
	for i, d := range docs {
		for _, s := range d.Sentences {
			j, ok := index[s]
			if !ok {
				j = len(c.texts)
				index[s] = j
				c.texts = append(c.texts, s)
			}
			c.doc[i] = append(c.doc[i], j)
		}
	}
	return c
}

// encodeChunk is how many sentences go to the encoder per call: progress
// and cancellation are checked between calls.
const encodeChunk = 2048

// encode embeds every distinct sentence with the `model` input, checking
// that each vector has the encoder's dimension and finite values. A
// transformer encoder reads at most maxLength token ids per sentence when
// maxLength > 0 (InfoCSE's 32, whatever the model was saved with).
func (c *corpus) encode(ctx context.Context, env *registry.Env, maxLength int) ([][]float32, error) {
	a, err := env.Input("model")
	if err != nil {
		return nil, err
	}
	enc, err := encoder.Open(a.Dir)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if m, ok := enc.(*pooled.Model); ok && maxLength > 0 {
		m.MaxLength = maxLength
	}
	dim := enc.Dim()
	out := make([][]float32, 0, len(c.texts))
	for lo := 0; lo < len(c.texts); lo += encodeChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+encodeChunk, len(c.texts))
		vs, err := enc.Encode(ctx, c.texts[lo:hi])
		if err != nil {
			return nil, fmt.Errorf("model: encoding sentences %d-%d of %d: %w", lo+1, hi, len(c.texts), err)
		}
		if len(vs) != hi-lo {
			return nil, fmt.Errorf("model: the encoder returned %d vectors for %d sentences", len(vs), hi-lo)
		}
		for k, v := range vs {
			if len(v) != dim {
				return nil, fmt.Errorf("model: a %d-dimensional vector (Dim() = %d) for %q", len(v), dim, c.texts[lo+k])
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return nil, fmt.Errorf("model: a non-finite value for %q", c.texts[lo+k])
				}
			}
		}
		out = append(out, vs...)
		env.Report(hi, len(c.texts), "encoding")
	}
	return out, nil
}

// encodeDocuments reads the documents and embeds their distinct
// sentences with the model.
func encodeDocuments(ctx context.Context, env *registry.Env, maxLength int) ([]rows.Document, *corpus, [][]float32, error) {
	docs, err := readDocuments(env)
	if err != nil {
		return nil, nil, nil, err
	}
	c := newCorpus(docs)
	vs, err := c.encode(ctx, env, maxLength)
	if err != nil {
		return nil, nil, nil, err
	}
	return docs, c, vs, nil
}

// vectorsOf returns document i's sentence vectors.
func (c *corpus) vectorsOf(i int, vs [][]float32) [][]float32 {
	out := make([][]float32, len(c.doc[i]))
	for k, j := range c.doc[i] {
		out[k] = vs[j]
	}
	return out
}

// pairRows turns index pairs of document d into rows.
func pairRows(d rows.Document, ps []infocse.Pair) []rows.DocPair {
	out := make([]rows.DocPair, len(ps))
	for k, p := range ps {
		out[k] = rows.DocPair{Doc: d.ID, Anchor: d.Sentences[p.I], Positive: d.Sentences[p.J]}
	}
	return out
}

// clusterDocuments clusters every document of at least two sentences with
// cluster (one-sentence documents are counted as skipped) and turns each
// cluster's pairs into rows.
func clusterDocuments(docs []rows.Document, cluster func(i int) ([][]int, error)) ([]rows.DocPair, infocse.Stats, error) {
	var st infocse.Stats
	var out []rows.DocPair
	for i, d := range docs {
		if len(d.Sentences) < 2 {
			st.Add(len(d.Sentences), nil, 0)
			continue
		}
		clusters, err := cluster(i)
		if err != nil {
			return nil, st, fmt.Errorf("document %d (id %q): %v", i+1, d.ID, err)
		}
		ps := infocse.ClusterPairs(clusters)
		st.Add(len(d.Sentences), clusters, len(ps))
		out = append(out, pairRows(d, ps)...)
	}
	return out, st, nil
}

// perDocument runs pairs over every document of at least two sentences
// (one-sentence documents are counted as skipped) and finishes the stage.
func perDocument(env *registry.Env, what string, pairs func(d rows.Document) []rows.DocPair) error {
	docs, err := readDocuments(env)
	if err != nil {
		return err
	}
	var st infocse.Stats
	var out []rows.DocPair
	for _, d := range docs {
		if len(d.Sentences) < 2 {
			st.Add(len(d.Sentences), nil, 0)
			continue
		}
		ps := pairs(d)
		st.Add(len(d.Sentences), nil, len(ps))
		out = append(out, ps...)
	}
	return finish(env, what, out, st, nil)
}

// finish logs the statistics and writes both outputs; no pair at all is
// an error explaining where every document went.
func finish(env *registry.Env, what string, pairs []rows.DocPair, st infocse.Stats, extra map[string]any) error {
	m := map[string]any{
		"documents": st.Documents, "skipped": st.Skipped, "no_pairs": st.NoPairs, "sentences": st.Sentences,
		"clusters": st.Clusters, "clusters_per_document": st.ClustersPerDocument(), "singletons": st.Singletons,
		"pairs": st.Pairs, "largest": st.Largest,
	}
	for k, v := range extra {
		m[k] = v
	}
	args := []any{"documents", st.Documents, "skipped_one_sentence", st.Skipped, "no_pairs", st.NoPairs,
		"clusters", st.Clusters, "clusters_per_document", fmt.Sprintf("%.2f", st.ClustersPerDocument()),
		"singletons", st.Singletons, "pairs", st.Pairs, "largest_cluster", st.Largest}
	env.Logger().Info(what, args...)
	if len(pairs) == 0 {
		return fmt.Errorf("%s: no positive pair from %d documents (%d skipped with fewer than two sentences, %d with every sentence in a cluster of its own): nothing to train on",
			what, st.Documents, st.Skipped, st.NoPairs)
	}
	if err := rows.Write(filepath.Join(env.Output("pairs"), registry.FilePairs), pairs); err != nil {
		return err
	}
	return registry.WriteMetrics(env, "stats", m)
}
