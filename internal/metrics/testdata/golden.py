#!/usr/bin/python3
"""Reference values for package repro/internal/metrics.

Recomputes every metric with numpy, scipy and scikit-learn (Debian's
python3-numpy, python3-scipy, python3-sklearn), following the reference code
the papers used: SentEval/SimCSE for STS, MTEB v1 RerankingEvaluator for
reranking, Wang & Isola for alignment/uniformity. Writes golden.json beside
this script. Run:  /usr/bin/python3 testdata/golden.py

All vectors are float32 values (as encoders produce them); JSON holds their
exact float64 representation. NaN is written as null.
"""
import json
import math
import os
import warnings

import numpy as np
import scipy
import sklearn
from scipy.spatial.distance import pdist
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import average_precision_score

warnings.simplefilter("ignore")  # constant-input warnings are expected
rng = np.random.default_rng(20240601)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def lst(a):
    """float32 array -> nested list of Python floats (exact)."""
    return np.asarray(a, dtype=np.float64).tolist()


def num(x):
    x = float(x)
    return None if math.isnan(x) else x


def senteval_cos(a, b):
    # SentEval (SimCSE fork) sts.py: np.nan_to_num(cosine(np.nan_to_num(a), np.nan_to_num(b)))
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(all="ignore"):
        c = np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.nan_to_num(c))


def torch_normalize(x):
    # torch.nn.functional.normalize(x, dim=1, eps=1e-12)
    x = np.asarray(x, dtype=np.float64)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(n, 1e-12)


out = {"versions": {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__}}

# ---- correlations -------------------------------------------------------
corr_cases = []


def corr_case(name, x, y):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if len(x) >= 2:
        try:
            p = pearsonr(x, y)[0]
        except ValueError:  # scipy refuses NaN input; the Go code returns NaN
            p = float("nan")
        s = spearmanr(x, y)[0]
    else:  # scipy raises for n < 2; the Go code returns NaN
        p = s = float("nan")
    corr_cases.append({"name": name, "x": [num(v) for v in x], "y": [num(v) for v in y], "pearson": num(p), "spearman": num(s),
                       "rank_x": scipy.stats.rankdata(x).tolist() if not np.isnan(x).any() else None})


corr_case("simple", [1, 2, 3, 4, 5], [5, 6, 7, 8, 7])
corr_case("negative", [1, 2, 3, 4], [4, 3, 2, 1])
corr_case("ties", [1, 2, 2, 3, 3, 3, 4], [0.5, 0.1, 0.9, 0.3, 0.3, 0.8, 0.2])
corr_case("ties_both", [1, 1, 2, 2, 3], [2, 2, 1, 1, 5])
corr_case("constant_x", [3, 3, 3, 3], [1, 2, 3, 4])
corr_case("constant_y", [1, 2, 3, 4], [0.7, 0.7, 0.7, 0.7])
corr_case("nan_x", [1, float("nan"), 3, 4], [1, 2, 3, 4])
corr_case("two", [0.1, 0.2], [3.0, 1.0])
corr_case("one", [0.1], [3.0])
xs = rng.normal(size=500)
corr_case("random_500_rounded_gold", xs, np.round(xs + rng.normal(size=500), 0))
corr_case("random_300", rng.normal(size=300), rng.normal(size=300))
out["correlation"] = corr_cases

# ---- cosine ---------------------------------------------------------------
cos_cases = []
for name, a, b in [
    ("random", f32(rng.normal(size=16)), f32(rng.normal(size=16))),
    ("zero_left", f32(np.zeros(8)), f32(rng.normal(size=8))),
    ("both_zero", f32(np.zeros(8)), f32(np.zeros(8))),
    ("parallel", f32([1, 2, 3]), f32([2, 4, 6])),
    ("opposite", f32([1, -2, 0.5]), f32([-1, 2, -0.5])),
    ("large", f32(rng.normal(size=768) * 1e3), f32(rng.normal(size=768) * 1e-3)),
]:
    cos_cases.append({"name": name, "a": lst(a), "b": lst(b), "cos": senteval_cos(a, b)})
out["cosine"] = cos_cases

# ---- STS protocol (SimCSE "all" setting) -----------------------------------
dim = 8
tasks = {
    "sts12": ["MSRpar", "MSRvid", "SMTeuroparl"],
    "sts13": ["FNWN", "headlines"],
    "sts14": ["images", "OnWN"],
    "sts15": ["belief", "headlines"],
    "sts16": ["plagiarism"],
    "stsb": ["test"],
    "sickr": ["test"],
}
sts_pairs = []
for task, subs in tasks.items():
    for si, sub in enumerate(subs):
        n = 15 + 7 * si
        a = f32(rng.normal(size=(n, dim)))
        noise = f32(rng.normal(size=(n, dim)))
        t = rng.uniform(0, 1, size=n)
        b = f32(a * t[:, None] + noise * (1 - t[:, None]) + 0.3 * si)
        gold = np.round(t * 5, 1)  # one decimal, so ties occur
        if sub == "MSRvid":
            b[0] = 0  # a zero vector: SentEval cosine 0
            b[1] = a[1]  # identical pair
            b[2] = a[2]  # another exact cosine-1 tie
        for i in range(n):
            sts_pairs.append({"task": task, "subset": sub, "a": lst(a[i]), "b": lst(b[i]), "gold": float(gold[i])})
exp_tasks = {}
for task, subs in tasks.items():
    rows = [p for p in sts_pairs if p["task"] == task]
    sys_ = [senteval_cos(p["a"], p["b"]) for p in rows]
    gs = [p["gold"] for p in rows]
    res = {"spearman": spearmanr(sys_, gs)[0] * 100, "pearson": pearsonr(sys_, gs)[0] * 100, "n": len(rows), "subsets": {}}
    for sub in subs:
        r2 = [p for p in rows if p["subset"] == sub]
        s2 = [senteval_cos(p["a"], p["b"]) for p in r2]
        g2 = [p["gold"] for p in r2]
        res["subsets"][sub] = {"spearman": spearmanr(s2, g2)[0] * 100, "pearson": pearsonr(s2, g2)[0] * 100, "n": len(r2)}
    exp_tasks[task] = res
# SimCSE evaluation.py: scores.append("%.2f" % (v * 100)); avg = sum(float(s)) / len(scores)
seven = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"]
avg = sum(float("%.2f" % exp_tasks[t]["spearman"]) for t in seven) / 7
avg5 = sum(float("%.2f" % exp_tasks[t]["spearman"]) for t in seven[:5]) / 5
out["sts"] = {"pairs": sts_pairs, "tasks": exp_tasks, "avg": avg, "sts12_16": avg5}

round_cases = []
for v in [76.245, 76.255, 0.125, 0.135, 80.005, 79.994999, -12.345, 1e-9, 99.999]:
    round_cases.append({"v": v, "r": float("%.2f" % v)})
out["round2"] = round_cases

# ---- reranking (MTEB v1 RerankingEvaluator) ----------------------------------
rr = []
for qi in range(8):
    npos = int(rng.integers(0, 4)) if qi != 0 else 2
    nneg = int(rng.integers(0, 8)) if qi != 0 else 5
    if qi == 1:
        npos, nneg = 3, 0  # dropped: no negative
    if qi == 2:
        npos, nneg = 0, 4  # dropped: no positive
    q = f32(rng.normal(size=dim))
    pos = f32(rng.normal(size=(npos, dim)) + q * 0.5)
    neg = f32(rng.normal(size=(nneg, dim)))
    if qi == 0:
        neg[0] = pos[0]  # exact tie between a positive and a negative
        neg[1] = pos[0]
    if qi == 3 and npos > 0 and nneg > 0:
        neg[0] = 0  # zero vector: cosine 0
    rr.append({"query": lst(q), "positive": lst(pos.reshape(npos, dim)), "negative": lst(neg.reshape(nneg, dim))})
# a query with 14 candidates, the only positive ranked 12th: MRR@10 = 0
q = f32(rng.normal(size=dim))
cands = f32(rng.normal(size=(14, dim)))
cs = np.array([senteval_cos(q, c) for c in cands])
order = np.argsort(-cs, kind="stable")
pos_idx = order[11]
rr.append({"query": lst(q), "positive": lst(cands[[pos_idx]]), "negative": lst(np.delete(cands, pos_idx, axis=0))})

aps, mrrs, per = [], [], []
dropped = 0
for inst in rr:
    if len(inst["positive"]) == 0 or len(inst["negative"]) == 0:
        dropped += 1
        per.append(None)
        continue
    docs = inst["positive"] + inst["negative"]
    is_rel = [True] * len(inst["positive"]) + [False] * len(inst["negative"])
    scores = np.array([senteval_cos(inst["query"], d) for d in docs])
    ap = average_precision_score(is_rel, scores)
    order = np.argsort(-scores, kind="stable")
    mrr = 0.0
    for rank, idx in enumerate(order[:10]):
        if is_rel[idx]:
            mrr = 1 / (rank + 1)
            break
    aps.append(ap)
    mrrs.append(mrr)
    per.append({"ap": float(ap), "mrr10": mrr, "scores": scores.tolist(), "relevant": is_rel})
out["rerank"] = {"queries": rr, "per_query": per, "map": float(np.mean(aps)) * 100, "mrr10": float(np.mean(mrrs)) * 100,
                 "kept": len(aps), "dropped": dropped}

# sklearn AP on hand-made score lists with heavy ties
ap_cases = []
for rel, sc in [
    ([1, 0, 1, 0, 0], [0.9, 0.9, 0.5, 0.5, 0.1]),
    ([0, 0, 1], [0.3, 0.3, 0.3]),
    ([1, 1, 0, 0], [0.1, 0.2, 0.3, 0.4]),
    ([1, 0, 0, 1, 0, 1], [0.8, 0.7, 0.7, 0.7, 0.2, 0.2]),
]:
    ap_cases.append({"relevant": [bool(r) for r in rel], "scores": sc, "ap": float(average_precision_score(rel, sc))})
out["average_precision"] = ap_cases

# ---- retrieval (InfoCSE: doc = mean of sentence vectors; recall@k) ---------
ndoc = 40
docs = []
heads = []
for i in range(ndoc):
    ns = int(rng.integers(1, 5))
    topic = rng.normal(size=dim)
    sents = f32(topic + rng.normal(size=(ns, dim)) * 1.5)
    docs.append(sents)
    heads.append(f32(topic + rng.normal(size=dim) * 1.5))
heads[5] = heads[4].copy()  # duplicate headline: a tie
heads[7] = f32(np.zeros(dim))  # zero headline: all cosines 0
docs[9] = docs[8].copy()  # duplicate document body
doc_vecs = np.stack([np.asarray(d, dtype=np.float64).mean(axis=0) for d in docs]).astype(np.float32)
classes = list(range(ndoc))
classes[5] = 4
classes[9] = 8


def recall(qv, cv, ks, cls):
    qn = torch_normalize(qv)
    cn = torch_normalize(cv)
    S = qn @ cn.T
    n = len(qv)
    cls = np.asarray(cls)
    ranks = []
    for i in range(n):
        correct = cls == cls[i]
        best = S[i][correct].max()
        ranks.append(1 + int(np.sum(S[i][~correct] >= best)))
    ranks = np.array(ranks)
    return {str(k): float(np.mean(ranks <= k) * 100) for k in ks}, float(ranks.mean())


ks = [1, 5, 10, 20]
r_plain, mr_plain = recall(doc_vecs, np.stack(heads), ks, list(range(ndoc)))
r_cls, mr_cls = recall(doc_vecs, np.stack(heads), ks, classes)
r_rev, mr_rev = recall(np.stack(heads), doc_vecs, ks, list(range(ndoc)))
out["retrieval"] = {
    "documents": [lst(d) for d in docs], "headlines": [lst(h) for h in heads], "doc_vectors": lst(doc_vecs),
    "classes": classes, "ks": ks,
    "doc_to_head": {"recall": r_plain, "mean_rank": mr_plain},
    "doc_to_head_classes": {"recall": r_cls, "mean_rank": mr_cls},
    "head_to_doc": {"recall": r_rev, "mean_rank": mr_rev},
}

# ---- alignment / uniformity (Wang & Isola, alpha 2, t 2) ---------------------
xa = f32(rng.normal(size=(30, dim)))
xb = f32(xa + rng.normal(size=(30, dim)) * 0.3)
xa[3] = 0  # zero vector stays zero under F.normalize
na, nb = torch_normalize(xa), torch_normalize(xb)
align = float(np.mean(np.sum((na - nb) ** 2, axis=1)))
ux = f32(rng.normal(size=(50, dim)))
ux[10] = 0
ux[11] = ux[12]  # duplicate point: distance 0
unif = float(np.log(np.mean(np.exp(-2 * pdist(torch_normalize(ux), "euclidean") ** 2))))
out["geometry"] = {"a": lst(xa), "b": lst(xb), "alignment": align, "x": lst(ux), "uniformity": unif}

# ---- cosine density (PaSeR Appendix C / Table 10) ----------------------------
gold = np.concatenate([rng.uniform(0, 5, size=200), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 5.0]])
gold = np.round(gold, 2)
sysd = np.clip(gold / 5 + rng.normal(size=len(gold)) * 0.1, -1, 1)
levels = []
for lo in range(5):
    hi = lo + 1
    m = (gold >= lo) & ((gold < hi) if hi < 5 else (gold <= hi))
    v = sysd[m]
    levels.append({"lo": lo, "hi": hi, "n": int(m.sum()), "mean": float(v.mean()), "var": float(v.var())})
out["density"] = {"sys": sysd.tolist(), "gold": gold.tolist(), "levels": levels}

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1, allow_nan=False)
print("wrote", path)
