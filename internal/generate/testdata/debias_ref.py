"""Reference values for SelfDebias (debias_test.go), computed with torch the
way DINO's released code applies self-debiasing (timoschick/dino,
modeling.py: softmax of the label prompt and of each counterlabel prompt,
delta = p_y - max counterlabel p, alpha = max(exp(lambda * delta), eps) where
delta < 0, renormalise, log). Run: /usr/bin/python3 debias_ref.py > debias_ref.json
"""
import json
import torch

torch.manual_seed(0)
cases = []
for lam, eps, n_cl in [(100.0, 0.01, 2), (10.0, 0.01, 1), (10.0, 0.0, 2), (0.0, 0.01, 2)]:
    logits = (torch.randn(1 + n_cl, 12, dtype=torch.float64) * 2.0).float()
    p = torch.softmax(logits[0].double(), -1)
    bias = torch.softmax(logits[1:].double(), -1).max(0).values
    delta = p - bias
    alpha = torch.where(delta < 0, torch.clamp(torch.exp(lam * delta), min=eps), torch.ones_like(delta))
    q = p * alpha
    q = q / q.sum()
    cases.append({"lambda": lam, "epsilon": eps, "logits": logits.tolist(), "want": torch.log(q).tolist()})
print(json.dumps(cases, indent=1))
