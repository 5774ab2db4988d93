package evaluate

import (
	"context"
	"fmt"
	"strings"

	"repro/internal/metrics"
	"repro/internal/rows"
	"repro/registry"
)

// RetrievalParams are evaluate.retrieval's parameters.
type RetrievalParams struct {
	Query           string `cty:"query" doc:"which side is the query: \"document\" (InfoCSE: retrieve the headline of a document) or \"headline\""`
	K               []int  `cty:"k" doc:"the k of recall@k"`
	MergeDuplicates bool   `cty:"merge_duplicates" doc:"documents with identical bodies, or identical headlines, count as the same answer"`
	BatchSize       int    `cty:"batch_size" doc:"sentences per Encode call"`
	// Added after results were cached: the default ranks as before.
	Similarity string `cty:"similarity" key:"added" doc:"how candidates are ranked: cosine, or dot (the inner product InfoCSE trains and clusters with, eq. 1 and 2)"`
}

func retrievalType() *registry.StageType {
	return &registry.StageType{
		Name:    "evaluate.retrieval",
		Version: 1,
		Doc: `Headline retrieval as InfoCSE evaluates it: a document's vector is the mean of its
sentence vectors; each query (by default the document) must retrieve its true counterpart (its
headline) among ALL candidates by cosine (or, with similarity = "dot", by the inner product); rK = recall@K x100 for each K in k, n = queries,
mean_rank = mean rank of the counterpart. Ties are counted pessimistically (a wrong candidate
scoring equal to the counterpart ranks above it).

Duplicates: BBC News repeats some stories (the source's dup_of field). The documents artifact
has no dup_of, and this stage expects one of two things: the loader dropped the duplicates (the
data README's first option, 2089 documents), or it kept them and merge_duplicates (default true)
is on: then documents with identical sentences, or identical headlines, form one class and any
member of the query's class counts as correct (the README's "count either duplicate as
correct"). Since dup_of is defined by identical bodies, this reproduces it from content alone;
duplicates = number of documents merged into an earlier one's class.`,
		Params:  RetrievalParams{Query: "document", K: []int{5, 10, 20}, MergeDuplicates: true, BatchSize: defaultBatch, Similarity: "cosine"},
		Inputs:  []registry.Port{encoderPort, {Name: "data", Kind: registry.KindDocuments, Doc: "documents with headlines"}},
		Outputs: []registry.Port{metricsPort},
		Tensor:  true,
		Light:   true,
		Run:     runRetrieval,
	}
}

func runRetrieval(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*RetrievalParams)
	enc, data, err := openInputs(env, "data")
	if err != nil {
		return err
	}
	path := data.Path(registry.FileDocuments)
	docs, err := rows.Read[rows.Document](path)
	if err != nil {
		return err
	}
	if len(docs) < 2 {
		return fmt.Errorf("%s: %d document(s): retrieval needs at least 2", path, len(docs))
	}
	set := newSentenceSet()
	heads := make([]int, len(docs))
	sents := make([][]int, len(docs))
	ids := map[string]int{}
	for i, d := range docs {
		where := fmt.Sprintf("%s row %d (id %q)", path, i+1, d.ID)
		if prev, dup := ids[d.ID]; dup && d.ID != "" {
			return fmt.Errorf("%s: id repeats row %d", where, prev+1)
		}
		ids[d.ID] = i
		if d.Headline == "" {
			return fmt.Errorf("%s: no headline", where)
		}
		if len(d.Sentences) == 0 {
			return fmt.Errorf("%s: no sentences", where)
		}
		heads[i] = set.add(d.Headline, where+", headline")
		for k, s := range d.Sentences {
			if s == "" {
				return fmt.Errorf("%s: sentence %d is empty", where, k+1)
			}
			sents[i] = append(sents[i], set.add(s, fmt.Sprintf("%s, sentence %d", where, k+1)))
		}
	}
	vs, err := set.encode(ctx, env, enc, p.BatchSize)
	if err != nil {
		return err
	}
	docVecs, headVecs := make([][]float32, len(docs)), make([][]float32, len(docs))
	var bufs [][]float32 // scratch for expanding a document's compact sentence vectors
	for i := range docs {
		for len(bufs) < len(sents[i]) {
			bufs = append(bufs, make([]float32, vs.dim))
		}
		sv := make([][]float32, len(sents[i]))
		for k, j := range sents[i] {
			sv[k] = vs.at(j, bufs[k])
		}
		if docVecs[i], err = metrics.MeanVector(sv); err != nil {
			return fmt.Errorf("%s row %d: %v", path, i+1, err)
		}
		headVecs[i] = vs.at(heads[i], nil)
	}
	var class []int
	merged := 0
	if p.MergeDuplicates {
		class, merged = duplicateClasses(docs)
	}
	q, c := docVecs, headVecs
	if p.Query == "headline" {
		q, c = headVecs, docVecs
	}
	env.Report(0, 0, "ranking")
	retrieval := metrics.Retrieval
	if p.Similarity == "dot" {
		retrieval = metrics.RetrievalDot
	}
	res, err := retrieval(q, c, p.K, class)
	if err != nil {
		return fmt.Errorf("evaluate.retrieval: %v", err)
	}
	out := map[string]any{"n": res.N, "mean_rank": res.MeanRank, "duplicates": merged}
	for k, r := range res.Recall {
		out[fmt.Sprintf("r%d", k)] = r
	}
	return registry.WriteMetrics(env, "metrics", out)
}

// duplicateClasses gives documents with the same body (sentences) or the
// same headline one class id (union-find over both equalities), and counts
// the documents merged into an earlier one.
func duplicateClasses(docs []rows.Document) ([]int, int) {
	parent := make([]int, len(docs))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(i, j int) {
		ri, rj := find(i), find(j)
		if ri != rj {
			parent[max(ri, rj)] = min(ri, rj) // keep the earliest as the root
		}
	}
	byHead, byBody := map[string]int{}, map[string]int{}
	for i, d := range docs {
		if j, ok := byHead[d.Headline]; ok {
			union(i, j)
		} else {
			byHead[d.Headline] = i
		}
		body := strings.Join(d.Sentences, "\n")
		if j, ok := byBody[body]; ok {
			union(i, j)
		} else {
			byBody[body] = i
		}
	}
	class := make([]int, len(docs))
	merged := 0
	for i := range docs {
		class[i] = find(i)
		if class[i] != i {
			merged++
		}
	}
	return class, merged
}
