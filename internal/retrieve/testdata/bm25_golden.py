"""Golden BM25 scores for internal/retrieve, computed independently of the Go code.

Okapi BM25 with Lucene's idf, written out from the formula with numpy over a
dense term-document count matrix (no inverted index, no shared code):

    score(q, d) = sum_{t in q} idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))

Analysis: lower case, maximal runs of [a-z0-9] (the corpus is ASCII, where this
equals the Go side's letters-and-digits runs). Run: /usr/bin/python3 bm25_golden.py > bm25_golden.json
"""
import json
import re

import numpy as np

CORPUS = [
    "A man is playing a guitar.",
    "A young man getting ready to release a red kite.",
    "A man getting ready to fly a kite.",
    "A man in a yard getting ready to play with a kite",
    "One of the hotel's rooms",
    "One of the 300 modular hotel rooms",
    "The grand hotel Birmingham, one of the hotel rooms",
    "Stocks fell sharply on Monday as oil prices rose.",
    "Oil prices rose 5% on Monday; stocks fell.",
    "The cat sat on the mat.",
    "The cat sat on the mat.",
    "Kite kite kite: a kite festival with one hundred kites and a red red kite.",
    "...",
]
QUERIES = [
    "A young man getting ready to release a red kite.",
    "One of the hotel's rooms",
    "oil prices",
    "the the cat",
    "quantum chromodynamics",
    "red kite kite",
]
SETTINGS = [(1.2, 0.75), (0.9, 0.4), (2.0, 0.0), (0.0, 1.0)]


def tokens(s):
    return re.findall(r"[a-z0-9]+", s.lower())


def main():
    docs = [tokens(d) for d in CORPUS]
    vocab = sorted({t for d in docs for t in d} | {t for q in QUERIES for t in tokens(q)})
    col = {t: i for i, t in enumerate(vocab)}
    tf = np.zeros((len(vocab), len(docs)), dtype=np.float64)
    for j, d in enumerate(docs):
        for t in d:
            tf[col[t], j] += 1
    dl = np.array([len(d) for d in docs], dtype=np.float64)
    N = len(docs)
    avgdl = dl.mean()
    n = (tf > 0).sum(axis=1).astype(np.float64)
    idf = np.log(1 + (N - n + 0.5) / (n + 0.5))
    out = {"corpus": CORPUS, "queries": QUERIES, "avgdl": avgdl,
           "idf": {t: idf[col[t]] for t in vocab if n[col[t]] > 0}, "settings": []}
    for k1, b in SETTINGS:
        norm = k1 * (1 - b + b * dl / avgdl)
        scores = []
        for q in QUERIES:
            s = np.zeros(N)
            for t in tokens(q):
                i = col[t]
                if n[i] == 0:
                    continue
                # tf = 0 contributes nothing (with k1 = 0 the ratio would be 0/0).
                with np.errstate(invalid="ignore", divide="ignore"):
                    s += np.where(tf[i] > 0, idf[i] * tf[i] * (k1 + 1) / (tf[i] + norm), 0.0)
            scores.append(s.tolist())
        out["settings"].append({"k1": k1, "b": b, "scores": scores})
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
