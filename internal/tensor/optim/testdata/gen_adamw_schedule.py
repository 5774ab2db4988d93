#!/usr/bin/python3
"""Golden values for train's AdamW, linear schedule and clipping, from
PyTorch (Debian python3-torch): torch.optim.AdamW +
LambdaLR(get_linear_schedule_with_warmup's lambda) + clip_grad_norm_.

Two parameters (the second exempt from weight decay), a fixed sequence of
gradients, 6 updates, warm-up 2, max grad norm 1.0. Writes adamw_schedule_golden.json.
"""
import json
import torch

torch.set_default_dtype(torch.float32)
g = torch.Generator().manual_seed(0)
w = torch.randn(3, 4, generator=g)
b = torch.randn(4, generator=g)
grads = [(torch.randn(3, 4, generator=g) * s, torch.randn(4, generator=g) * s) for s in (0.1, 2.0, 0.5, 3.0, 0.05, 1.0)]

init = {"w": w.flatten().tolist(), "b": b.flatten().tolist()}
pw = torch.nn.Parameter(w.clone())
pb = torch.nn.Parameter(b.clone())
lr, warmup, total = 1e-2, 2, 6
opt = torch.optim.AdamW([{"params": [pw], "weight_decay": 0.1}, {"params": [pb], "weight_decay": 0.0}],
                        lr=lr, betas=(0.9, 0.999), eps=1e-8)


def lam(step):
    if step < warmup:
        return float(step) / float(max(1, warmup))
    return max(0.0, float(total - step) / float(max(1, total - warmup)))


sched = torch.optim.lr_scheduler.LambdaLR(opt, lam)
norms, lrs = [], []
for gw, gb in grads:
    pw.grad = gw.clone()
    pb.grad = gb.clone()
    lrs.append(opt.param_groups[0]["lr"])
    norms.append(float(torch.nn.utils.clip_grad_norm_([pw, pb], 1.0)))
    opt.step()
    sched.step()

json.dump({
    "init": init,
    "grads": [{"w": gw.flatten().tolist(), "b": gb.flatten().tolist()} for gw, gb in grads],
    "lrs": lrs,
    "norms": norms,
    "final": {"w": pw.detach().flatten().tolist(), "b": pb.detach().flatten().tolist()},
}, open("adamw_schedule_golden.json", "w"), indent=1)
