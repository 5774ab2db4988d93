"""Golden values for repro/internal/tensor/loss, computed by PyTorch
(Debian python3-torch) in float64 from float32 inputs: each loss's value
and its gradient with respect to every input.

Run: /usr/bin/python3 gen_losses.py > losses.json
"""
import json
import torch
import torch.nn.functional as F

torch.manual_seed(7)
N, D, V = 6, 5, 9


def rnd(*shape):
    return torch.randn(*shape, dtype=torch.float32)


def flat(t):
    return [float(v) for v in t.detach().reshape(-1)]


def case(name, inputs, fn, **extra):
    xs = [x.double().requires_grad_() for x in inputs]
    loss = fn(*xs)
    loss.backward()
    out = {"name": name, "inputs": [flat(x) for x in inputs], "rows": [x.shape[0] for x in inputs],
           "cols": [x.shape[1] for x in inputs], "loss": float(loss), "grads": [flat(x.grad) for x in xs]}
    out.update(extra)
    return out


cases = []
ar = torch.arange(N)
cases.append(case("simcse_unsup", [rnd(N, D), rnd(N, D)],
                  lambda a, b: F.cross_entropy(F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T / 0.05, ar),
                  temp=0.05))
cases.append(case("simcse_sup", [rnd(N, D), rnd(N, D), rnd(N, D)],
                  lambda a, p, n: F.cross_entropy(
                      F.normalize(a, dim=-1) @ F.normalize(torch.cat([p, n]), dim=-1).T / 0.05, ar),
                  temp=0.05))
cases.append(case("infonce", [rnd(N, D) * 0.5, rnd(N, D) * 0.5],
                  lambda a, p: F.cross_entropy(a @ p.T, ar), temp=1.0))
cases.append(case("infonce_temp", [rnd(N, D) * 0.5, rnd(N, D) * 0.5],
                  lambda a, p: F.cross_entropy(a @ p.T / 0.1, ar), temp=0.1))
labels = [0.9, 0.1, 0.5, 0.1, 0.9, 0.3]
cases.append(case("cosine_mse", [rnd(N, D), rnd(N, D)],
                  lambda a, b: F.mse_loss(F.cosine_similarity(a, b, dim=-1), torch.tensor(labels, dtype=torch.float64)),
                  labels=labels))
targets = [3, -100, 0, 8, 2, -100]
cases.append(case("token_ce", [rnd(N, V) * 2],
                  lambda x: F.cross_entropy(x, torch.tensor(targets), ignore_index=-100), targets=targets))
# InfoCSE's masked InfoNCE: candidates of the anchor's own group (document)
# other than its positive are no negatives (masked to -inf before softmax).
groups = [0, 0, 1, 1, 1, 2]
same = torch.tensor([[groups[i] == groups[j] and i != j for j in range(N)] for i in range(N)])
cases.append(case("infonce_masked", [rnd(N, D) * 0.5, rnd(N, D) * 0.5],
                  lambda a, p: F.cross_entropy((a @ p.T).masked_fill(same, float("-inf")), ar),
                  temp=1.0, groups=groups))
cases.append(case("infonce_masked_cosine", [rnd(N, D), rnd(N, D)],
                  lambda a, p: F.cross_entropy(
                      (F.normalize(a, dim=-1) @ F.normalize(p, dim=-1).T / 0.05).masked_fill(same, float("-inf")), ar),
                  temp=0.05, groups=groups, cosine=True))
print(json.dumps({"generator": "torch " + torch.__version__, "cases": cases}, indent=1))
