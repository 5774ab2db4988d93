"""Golden AdamW trajectory from PyTorch (Debian python3-torch): one 3x4
parameter, five steps with fixed gradients, float32 as the Go code.

Run: /usr/bin/python3 gen_adamw.py > adamw.json
"""
import json
import torch

torch.manual_seed(3)
w = torch.randn(3, 4, dtype=torch.float32)
grads = [torch.randn(3, 4, dtype=torch.float32) for _ in range(5)]
p = torch.nn.Parameter(w.clone())
opt = torch.optim.AdamW([p], lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1)
traj = []
for g in grads:
    p.grad = g.clone()
    opt.step()
    traj.append([float(v) for v in p.detach().reshape(-1)])
print(json.dumps({"generator": "torch " + torch.__version__, "lr": 1e-2, "weight_decay": 0.1,
                  "init": [float(v) for v in w.reshape(-1)],
                  "grads": [[float(v) for v in g.reshape(-1)] for g in grads],
                  "trajectory": traj}, indent=1))
