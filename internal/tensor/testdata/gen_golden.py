"""Golden values for repro/internal/tensor's operators, computed by PyTorch
(Debian python3-torch) in float64 from float32 inputs.

Run: /usr/bin/python3 gen_golden.py > golden.json
"""
import json
import math
import torch
import torch.nn.functional as F

torch.manual_seed(1234)


def rnd(*shape):
    return torch.randn(*shape, dtype=torch.float32)


def flat(t):
    return [float(v) for v in t.detach().to(torch.float64).reshape(-1)]


def attention(q, k, v, B, H, Tq, Tk, key_lens, causal, scale=None, bias=None):
    """bias: None, or (H*Tq, Tk) shared by the batch, or (B*H*Tq, Tk)."""
    D = q.shape[1]
    dh = D // H
    q = q.to(torch.float64).reshape(B, Tq, H, dh).transpose(1, 2)
    k = k.to(torch.float64).reshape(B, Tk, H, dh).transpose(1, 2)
    v = v.to(torch.float64).reshape(B, Tk, H, dh).transpose(1, 2)
    s = q @ k.transpose(-1, -2)
    s = s / math.sqrt(dh) if scale is None else s * scale
    if bias is not None:
        s = s + bias.reshape(-1, H, Tq, Tk)  # broadcasts over the batch when shared
    mask = torch.zeros(B, 1, Tq, Tk, dtype=torch.bool)
    for b in range(B):
        mask[b, :, :, key_lens[b]:] = True
    if causal:
        mask |= torch.triu(torch.ones(Tq, Tk, dtype=torch.bool), diagonal=1)
    s = s.masked_fill(mask, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return (p @ v).transpose(1, 2).reshape(B * Tq, D)


cases = []
for name, B, H, Tq, Tk, lens, causal in [
    ("padded", 2, 2, 4, 4, [2, 4], False),
    ("causal", 2, 2, 4, 4, [3, 4], True),
    ("cross", 2, 4, 3, 5, [5, 2], False),
]:
    D = 8
    q, k, v = rnd(B * Tq, D), rnd(B * Tk, D), rnd(B * Tk, D)
    out = attention(q, k, v, B, H, Tq, Tk, lens, causal)
    cases.append({"op": "attention", "name": name, "B": B, "H": H, "Tq": Tq, "Tk": Tk, "D": D,
                  "key_lens": lens, "causal": causal,
                  "q": flat(q), "k": flat(k), "v": flat(v), "out": flat(out)})

x, g, b = rnd(3, 8) * 3 + 1, rnd(8), rnd(8)
ln = F.layer_norm(x.double(), (8,), g.double(), b.double(), eps=1e-12)
cases.append({"op": "layernorm", "rows": 3, "cols": 8, "eps": 1e-12,
              "x": flat(x), "g": flat(g), "b": flat(b), "out": flat(ln)})

x = rnd(4, 6) * 3
cases.append({"op": "gelu", "rows": 4, "cols": 6, "x": flat(x), "out": flat(F.gelu(x.double()))})
cases.append({"op": "log_softmax", "rows": 4, "cols": 6, "x": flat(x),
              "out": flat(F.log_softmax(x.double(), dim=-1))})

x = rnd(5, 7) * 2
tg = torch.tensor([3, -100, 0, 6, -100])
xd = x.double().requires_grad_()
ce = F.cross_entropy(xd, tg, ignore_index=-100)
ce.backward()
cases.append({"op": "cross_entropy", "rows": 5, "cols": 7, "x": flat(x), "targets": tg.tolist(),
              "out": [float(ce)], "grad": flat(xd.grad)})

x = rnd(3, 5)
y = rnd(4, 5)
cases.append({"op": "cosine", "a_rows": 3, "b_rows": 4, "cols": 5, "a": flat(x), "b": flat(y),
              "out": flat(F.normalize(x.double(), dim=-1) @ F.normalize(y.double(), dim=-1).T)})

# Operators of the language models (GPT-2: tanh GELU, T5: ReLU, RMS norm,
# unscaled attention with a relative position bias). The bias gradient is
# torch's autograd of sum(out * G) for a fixed G.
x = rnd(4, 6) * 3
cases.append({"op": "gelu_tanh", "rows": 4, "cols": 6, "x": flat(x),
              "out": flat(F.gelu(x.double(), approximate="tanh"))})
cases.append({"op": "relu", "rows": 4, "cols": 6, "x": flat(x), "out": flat(F.relu(x.double()))})

x, g = rnd(3, 8) * 2 + 0.5, rnd(8)
xd = x.double().requires_grad_()
gy = rnd(3, 8)
# T5LayerNorm: variance = mean(x^2); x * rsqrt(variance + eps) * weight
rms = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * g.double()
(rms * gy.double()).sum().backward()
cases.append({"op": "rms_norm", "rows": 3, "cols": 8, "eps": 1e-6, "x": flat(x), "g": flat(g), "a": flat(gy),
              "out": flat(rms), "grad": flat(xd.grad)})

for name, B, H, Tq, Tk, lens, causal, scale, shared in [
    ("bias shared unscaled", 2, 2, 3, 5, [5, 3], False, 1.0, True),
    ("bias per sequence causal", 2, 2, 4, 4, [4, 3], True, None, False),
]:
    D = 8
    q, k, v = rnd(B * Tq, D), rnd(B * Tk, D), rnd(B * Tk, D)
    bias = rnd(H * Tq if shared else B * H * Tq, Tk) * 2
    bd = bias.double().requires_grad_()
    out = attention(q, k, v, B, H, Tq, Tk, lens, causal, scale, bd)
    G = rnd(B * Tq, D)
    (out * G.double()).sum().backward()
    cases.append({"op": "attention", "name": name, "B": B, "H": H, "Tq": Tq, "Tk": Tk, "D": D,
                  "key_lens": lens, "causal": causal, "scale": scale or 0.0, "bias": flat(bias), "a": flat(G),
                  "q": flat(q), "k": flat(k), "v": flat(v), "out": flat(out), "grad": flat(bd.grad)})

print(json.dumps({"generator": "torch " + torch.__version__, "cases": cases}, indent=1))
