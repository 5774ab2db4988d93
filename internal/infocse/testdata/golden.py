"""Golden values for internal/infocse, computed independently of the Go code.

Partition: numpy for the weights, a stable argsort for top-K (ties to the
lower index), scipy.sparse.csgraph.connected_components for the clusters.
K-means: scikit-learn's KMeans (Lloyd, tol=0: iterate until no label
changes) from fixed initial centers.

Run with /usr/bin/python3 (numpy, scipy, scikit-learn):
    /usr/bin/python3 golden.py > golden.json
"""
import json
import sys

import numpy as np
import scipy
import sklearn
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from sklearn.cluster import KMeans


def partition(v, k, sim):
    x = v.astype(np.float64)
    if sim == "cosine":
        n = np.linalg.norm(x, axis=1, keepdims=True)
        x = np.where(n > 0, x / np.where(n > 0, n, 1), x)
    w = x @ x.T
    n = len(x)
    adj = np.zeros((n, n), dtype=bool)
    for i in range(n):
        others = [j for j in range(n) if j != i]
        # stable sort on -w keeps the lower index first among equal weights
        order = sorted(others, key=lambda j: -w[i, j])
        for j in order[:k]:
            adj[i, j] = adj[j, i] = True
    _, lab = connected_components(csr_matrix(adj), directed=False)
    # canonical: clusters ordered by their lowest member
    clusters, seen = [], {}
    for i, l in enumerate(lab):
        if l not in seen:
            seen[l] = len(clusters)
            clusters.append([])
        clusters[seen[l]].append(i)
    pairs = sum(len(c) * (len(c) - 1) // 2 for c in clusters)
    return clusters, pairs


def f32list(a):
    return [[float(x) for x in row] for row in a.astype(np.float32)]


rng = np.random.default_rng(20240601)
cases = []
for size in [1, 2, 3, 5, 8, 13, 21, 30]:
    for dim in [4, 16]:
        v = rng.standard_normal((size, dim)).astype(np.float32)
        # a few sentences close to another one, as in a real document
        if size > 3:
            v[size - 1] = v[0] + np.float32(0.05) * rng.standard_normal(dim).astype(np.float32)
        for k in [1, 2, 3]:
            for sim in ["dot", "cosine"]:
                clusters, pairs = partition(v, k, sim)
                cases.append({"name": f"n{size}_d{dim}_k{k}_{sim}", "vectors": f32list(v), "k": k,
                              "similarity": sim, "clusters": clusters, "pairs": pairs})

# Exact ties: integer vectors whose inner products repeat, so the top-1 choice
# is decided by the tie rule alone.
ties = np.array([[1, 0], [0, 1], [1, 0], [0, 1], [1, 1], [-1, 0]], dtype=np.float32)
for k in [1, 2]:
    for sim in ["dot", "cosine"]:
        clusters, pairs = partition(ties, k, sim)
        cases.append({"name": f"ties_k{k}_{sim}", "vectors": f32list(ties), "k": k, "similarity": sim,
                      "clusters": clusters, "pairs": pairs})

kmeans = []
for n, dim, k in [(60, 3, 4), (200, 8, 10), (300, 12, 10)]:
    centers = rng.standard_normal((k, dim)) * 4
    x = np.concatenate([c + rng.standard_normal((n // k, dim)) for c in centers]).astype(np.float32)
    x64 = x.astype(np.float64)
    init = x64[rng.choice(len(x64), size=k, replace=False)]
    km = KMeans(n_clusters=k, init=init, n_init=1, algorithm="lloyd", tol=0.0, max_iter=300).fit(x64)
    kmeans.append({"name": f"n{n}_d{dim}_k{k}", "points": f32list(x), "init": init.tolist(),
                   "labels": km.labels_.tolist(), "centers": km.cluster_centers_.tolist(),
                   "inertia": float(km.inertia_), "iterations": int(km.n_iter_)})

json.dump({"versions": {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__},
           "partition": cases, "kmeans": kmeans}, sys.stdout)
