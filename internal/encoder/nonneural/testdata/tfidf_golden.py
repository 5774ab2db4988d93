#!/usr/bin/python3
"""Golden TF-IDF values from scikit-learn's TfidfVectorizer (default settings).

Regenerate with:  /usr/bin/python3 testdata/tfidf_golden.py > testdata/tfidf_golden.json
(Debian python3-sklearn 1.2.1, numpy 1.24.2 were used.)
"""
import json
from collections import Counter

import numpy as np
import sklearn
from sklearn.feature_extraction.text import TfidfVectorizer

corpus = [
    "A man is playing a guitar.",
    "A man is playing the guitar loudly, and the crowd cheers.",
    "Two women are embracing while holding to-go packages.",
    "The cat sat on the mat; the dog sat on the log.",
    "Café owners in Zürich raised prices by 10% in 2016.",
    "snake_case tokens and CamelCase Tokens are words too",
    "I don't think it's a problem: x y z are single letters.",
    "The stock market fell 3.5 points on Tuesday; the dog slept.",
    "A woman is slicing an onion, a man is playing a flute.",
    "Guitar guitar GUITAR!",
]
queries = [
    "A man plays the guitar.",
    "The dog and the cat sat together on the mat.",
    "Zürich café prices in 2016",
    "x y z",                       # no token of two word characters: zero vector
    "qwerty asdfgh",               # out of vocabulary only: zero vector
    "guitar guitar man",
]

cases = []
for max_features in (None, 7):
    vec = TfidfVectorizer(max_features=max_features)
    vec.fit(corpus)
    if max_features is not None:
        # The Go side breaks ties at the cut alphabetically; make sure the
        # case has none, so both orders agree.
        analyzer = vec.build_analyzer()
        tf = Counter(t for d in corpus for t in analyzer(d))
        counts = sorted(tf.values(), reverse=True)
        assert counts[max_features - 1] > counts[max_features], "tie at the max_features cut"
    vocab = list(vec.get_feature_names_out())
    X = vec.transform(queries).toarray()
    cases.append({
        "max_features": max_features,
        "vocabulary": vocab,
        "idf": [float(x) for x in vec.idf_],
        "vectors": [[float(x) for x in row] for row in X],
    })

json.dump({"sklearn": sklearn.__version__, "corpus": corpus, "queries": queries, "cases": cases},
          __import__("sys").stdout, indent=1, ensure_ascii=False)
print()
