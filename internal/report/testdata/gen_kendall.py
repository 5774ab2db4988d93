"""Golden Kendall tau-b values for agreement_test.go, from
scipy.stats.kendalltau (default variant "b"): cases with ties on either
side, both, constant vectors, and PaSeR's Table 4 columns against arbitrary
values.

Run: /usr/bin/python3 gen_kendall.py > kendall.json
"""
import json
import math
import random

from scipy.stats import kendalltau

random.seed(5)
cases = [
    ([1, 2, 3, 4], [1, 2, 3, 4]),
    ([1, 2, 3, 4], [4, 3, 2, 1]),
    ([1, 2, 2, 3], [1, 2, 3, 3]),
    ([1, 1, 1, 1], [1, 2, 3, 4]),
    ([53.26, 53.43, 51.78, 48.91, 49.25, 48.53], [73.8, 74.2, 74.2, 77.7, 77.2, 77.3]),
    ([47.62, 48.53, 47.76, 46.23, 46.52, 44.62], [74.5, 75.0, 75.5, 79.3, 77.5, 77.6]),
    ([2.0, 1.0], [1.0, 1.0]),
]
for n in (5, 8, 13):
    x = [random.choice([0.5, 1.0, 1.5, 2.0, 2.5]) for _ in range(n)]
    y = [round(random.gauss(0, 1), 1) for _ in range(n)]
    cases.append((x, y))
out = []
for x, y in cases:
    t = kendalltau(x, y).statistic
    out.append({"x": x, "y": y, "tau": None if math.isnan(t) else t})
json.dump(out, __import__("sys").stdout, indent=1)
