package annotate

import (
	"context"
	"fmt"

	"repro/internal/infocse"
	"repro/registry"
)

// IDCParams are annotate.idc's parameters.
type IDCParams struct {
	TopK       int    `cty:"top_k" doc:"keep the edge s_i-s_j when s_j is among the top_k of s_i or s_i among those of s_j (paper: K = 1)"`
	Similarity string `cty:"similarity" doc:"edge weight: dot (the inner product of eq. 2) or cosine"`
	MaxLength  int    `cty:"max_length" doc:"a transformer model reads at most this many token ids per sentence (paper: 32); 0 = the model's own limit"`
}

func idcType() *registry.StageType {
	return &registry.StageType{
		Name:    "annotate.idc",
		Version: 1,
		Doc: `InfoCSE's intra-document clustering (section 3.1, eq. 2-4, Algorithm 2): each document's
sentences form a complete graph weighted by the model's embeddings (inner product; cosine as an
option); an edge survives when either sentence is among the other's top_k; the connected components
are clusters, and every unordered pair inside a cluster is one positive pair (anchor = the earlier
sentence). Ties go to the lower index, so the output is determined by the model. One-sentence
documents are skipped and counted.`,
		Params:  IDCParams{TopK: 1, Similarity: string(infocse.Dot), MaxLength: 32},
		Inputs:  []registry.Port{modelPort, documentsPort, extraPort},
		Outputs: outputs,
		Tensor:  true,
		Run:     runIDC,
	}
}

// Validate checks annotate.idc's parameters.
func (p *IDCParams) Validate() error {
	var c registry.Checks
	c.Add(p.TopK >= 1, "top_k", "%d must be at least 1 (each sentence keeps the edges to its top_k neighbours)", p.TopK)
	c.OneOf("similarity", p.Similarity, string(infocse.Dot), string(infocse.Cosine))
	c.NonNegative("max_length", p.MaxLength)
	return c.Result()
}

func runIDC(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*IDCParams)
	sim := infocse.Similarity(p.Similarity)
	docs, c, vs, err := encodeDocuments(ctx, env, p.MaxLength)
	if err != nil {
		return err
	}
	out, st, err := clusterDocuments(docs, func(i int) ([][]int, error) {
		return infocse.Partition(c.vectorsOf(i, vs), p.TopK, sim)
	})
	if err != nil {
		return err
	}
	return finish(env, "annotate.idc", out, st, nil)
}

// KMeansParams are annotate.idc_kmeans's parameters.
type KMeansParams struct {
	Clusters      int    `cty:"clusters" doc:"K global clusters over every sentence of the corpus (paper: 10)"`
	Similarity    string `cty:"similarity" doc:"dot: cluster the embeddings as they are; cosine: L2-normalise them first"`
	MaxIterations int    `cty:"max_iterations" doc:"Lloyd iterations at most (stops earlier when no assignment changes)"`
	MaxLength     int    `cty:"max_length" doc:"a transformer model reads at most this many token ids per sentence (paper: 32); 0 = the model's own limit"`
}

func kmeansType() *registry.StageType {
	return &registry.StageType{
		Name:    "annotate.idc_kmeans",
		Version: 1,
		Doc: `IDC (K-means), InfoCSE Table 3's alternative to partition clustering: K global clusters
over all sentences of all documents (k-means++ seeding from the stage's seed, Lloyd iterations
until no assignment changes), then each document's sentences grouped by their global cluster;
every unordered pair inside a group is a positive pair. Global clusters left empty are counted
(stats: empty_clusters), as are one-sentence documents.`,
		Params:  KMeansParams{Clusters: 10, Similarity: string(infocse.Dot), MaxIterations: 100, MaxLength: 32},
		Inputs:  []registry.Port{modelPort, documentsPort, extraPort},
		Outputs: outputs,
		Seeded:  true,
		Tensor:  true,
		Run:     runKMeans,
	}
}

// Validate checks annotate.idc_kmeans's parameters.
func (p *KMeansParams) Validate() error {
	var c registry.Checks
	c.Positive("clusters", p.Clusters)
	c.Positive("max_iterations", p.MaxIterations)
	c.OneOf("similarity", p.Similarity, string(infocse.Dot), string(infocse.Cosine))
	c.NonNegative("max_length", p.MaxLength)
	return c.Result()
}

func runKMeans(ctx context.Context, env *registry.Env) error {
	p := env.Params.(*KMeansParams)
	sim := infocse.Similarity(p.Similarity)
	docs, c, vs, err := encodeDocuments(ctx, env, p.MaxLength)
	if err != nil {
		return err
	}
	env.Report(0, 0, "k-means")
	km, err := infocse.KMeans(vs, p.Clusters, sim, uint64(env.Seed), p.MaxIterations)
	if err != nil {
		return fmt.Errorf("clusters: %v", err)
	}
	env.Logger().Info("k-means", "clusters", p.Clusters, "iterations", km.Iterations, "converged", km.Converged,
		"inertia", km.Inertia, "empty_clusters", km.Empty)
	out, st, _ := clusterDocuments(docs, func(i int) ([][]int, error) {
		labels := make([]int, len(c.doc[i]))
		for k, j := range c.doc[i] {
			labels[k] = km.Labels[j]
		}
		return infocse.GroupByCluster(labels), nil
	})
	converged := 0 // metrics.json holds numbers only
	if km.Converged {
		converged = 1
	}
	return finish(env, "annotate.idc_kmeans", out, st, map[string]any{
		"kmeans_iterations": km.Iterations, "kmeans_converged": converged, "empty_clusters": km.Empty,
	})
}
