"""Golden values for the STS "mean" setting (mean_test.go): per task, the
mean over its subsets of scipy's Spearman (x100), and the mean of the five
years each rounded to two decimals. Run:
/usr/bin/python3 mean_golden.py > mean_golden.json
"""
import json
import numpy as np
from scipy.stats import spearmanr

rng = np.random.default_rng(7)
pairs = []
years = {"sts12": ["MSRpar", "MSRvid", "SMTeuroparl"], "sts13": ["FNWN", "headlines"],
         "sts14": ["deft-forum", "images", "tweet-news"], "sts15": ["answers-forums", "belief"],
         "sts16": ["postediting", "question-question"]}
for task, subsets in years.items():
    for sub in subsets:
        n = int(rng.integers(8, 20))
        gold = np.round(rng.uniform(0, 5, n), 1)
        sys = gold * rng.uniform(0.1, 1.0) + rng.normal(0, 1.5, n)
        for g, s in zip(gold, sys):
            pairs.append({"task": task, "subset": sub, "gold": float(g), "sys": float(s)})
means = {}
for task, subsets in years.items():
    vals = []
    for sub in subsets:
        ps = [p for p in pairs if p["task"] == task and p["subset"] == sub]
        vals.append(100 * spearmanr([p["sys"] for p in ps], [p["gold"] for p in ps]).correlation)
    means[task] = float(np.mean(vals))
avg = float(np.mean([float("%.2f" % means[t]) for t in years]))
print(json.dumps({"pairs": pairs, "mean": means, "avg": avg}, indent=1))
