#!/usr/bin/python3
"""Golden values for internal/plot's Silverman bandwidth and Gaussian KDE.

Independent implementation: the bandwidth from NumPy (std with ddof=1,
np.percentile's default linear quantiles), the density from
scipy.stats.gaussian_kde with its bandwidth factor set so the kernel's
standard deviation equals that bandwidth (scipy scales the data's ddof=1
covariance by factor**2).

Run:  /usr/bin/python3 kde_golden.py > kde_golden.json
"""
import json

import numpy as np
from scipy.stats import gaussian_kde


def silverman(x):
    x = np.asarray(x, dtype=float)
    s = x.std(ddof=1)
    iqr = np.percentile(x, 75) - np.percentile(x, 25)
    spread = min(s, iqr / 1.34) if iqr > 0 else s
    return 0.9 * spread * len(x) ** -0.2


rng = np.random.default_rng(20240601)
cases = {
    "three_points": [0.0, 1.0, 2.0],
    "skewed": [0.1, 0.15, 0.2, 0.22, 0.3, 0.31, 0.35, 0.9, 0.95],
    # bimodal: IQR/1.34 < s, so the min() branch matters
    "bimodal": list(np.round(np.concatenate([rng.normal(-0.5, 0.1, 40),
                                              rng.normal(0.6, 0.05, 40)]), 6)),
    "cosines": list(np.round(np.clip(rng.normal(0.55, 0.2, 200), -1, 1), 6)),
    # half the values tied: IQR is 0, so the rule falls back to s
    "ties": [0.5] * 10 + [0.1, 0.9, 0.3, 0.7, 0.5, 0.2, 0.8],
}

out = []
for name, sample in cases.items():
    x = np.asarray(sample, dtype=float)
    h = silverman(x)
    kde = gaussian_kde(x, bw_method=h / x.std(ddof=1))
    at = np.linspace(x.min() - 2 * h, x.max() + 2 * h, 9)
    out.append({
        "name": name,
        "sample": [float(v) for v in x],
        "bandwidth": float(h),
        "at": [float(v) for v in at],
        "density": [float(v) for v in kde(at)],
    })
print(json.dumps(out, indent=1))
