"""Reference for internal/model/gpt2's BenchmarkLMStep: one causal-LM training step of a GPT-2-shaped
model (pre-LN, learned positions, tied output layer, tanh GELU, dropout 0.1 on embeddings, attention
probabilities and residual branches) in plain PyTorch, random weights: 16 windows of 128 tokens,
next-token cross-entropy, AdamW (lr 1e-4, weight decay 0.01).

Run: /usr/bin/python3 bench/torch_gpt2_step.py [threads] [layers width heads vocab batch seq]
Defaults: 2 threads; 6 384 6 50257 16 128. Prints the median step time after two warm-up steps.
Needs Debian's python3-torch."""
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 2
L, D, H, V, B, T = ([int(a) for a in sys.argv[2:8]] + [6, 384, 6, 50257, 16, 128][len(sys.argv[2:8]):])[:6]
torch.set_num_threads(THREADS)
torch.manual_seed(0)
P = 0.1


class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.ln1, s.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        s.qkv, s.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        s.fc, s.out = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(s, x):
        b, t, _ = x.shape
        q, k, v = s.qkv(s.ln1(x)).split(D, dim=2)
        q, k, v = [z.view(b, t, H, D // H).transpose(1, 2) for z in (q, k, v)]
        att = (q @ k.transpose(-2, -1)) / math.sqrt(D // H)
        att = att.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        att = F.dropout(att.softmax(-1), P, s.training)
        y = (att @ v).transpose(1, 2).reshape(b, t, D)
        x = x + F.dropout(s.proj(y), P, s.training)
        return x + F.dropout(s.out(F.gelu(s.fc(s.ln2(x)), approximate="tanh")), P, s.training)


class LM(nn.Module):
    def __init__(s):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(V, D), nn.Embedding(T, D)
        s.blocks = nn.ModuleList(Block() for _ in range(L))
        s.ln = nn.LayerNorm(D)

    def forward(s, ids):
        x = F.dropout(s.wte(ids) + s.wpe.weight[None, : ids.shape[1]], P, s.training)
        for b in s.blocks:
            x = b(x)
        return s.ln(x) @ s.wte.weight.T


m = LM()
m.train()
opt = torch.optim.AdamW(m.parameters(), 1e-4, weight_decay=0.01)
ids = torch.randint(0, V, (B, T))
ts = []
for i in range(6):
    t0 = time.perf_counter()
    logits = m(ids)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    ts.append(time.perf_counter() - t0)
ts = sorted(ts[2:])
print(f"torch {torch.__version__} threads={THREADS} GPT-2 LM step L={L} D={D} H={H} V={V} B={B} T={T}: median {ts[len(ts)//2]:.3f} s/step")
