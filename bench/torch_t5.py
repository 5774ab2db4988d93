"""Reference for internal/model/t5's benchmarks: T5-small (v1.0 shape: 6+6 layers, d_model 512,
8 heads of 64, d_ff 2048, ReLU, tied output with the d_model**-0.5 rescale, relative position bias
of 32 buckets up to distance 128, RMS norm, vocabulary 32128), written in plain PyTorch from
Hugging Face's modeling_t5.py (transformers is not installed here), random weights.

  step:      one training step, batch 32, sources of 64 and targets of 32 tokens, dropout 0.1,
             token cross-entropy, AdamW (go test -bench TrainStep ./internal/model/t5)
  generate:  32 prompts of 24 tokens, 40 new tokens each, encoder once, cross-attention K/V once,
             self-attention KV cache, top-k 5 then top-p 0.9 (go test -bench Generate)

Run: /usr/bin/python3 bench/torch_t5.py step|generate [threads]   (default 2 threads)
Prints the median of the timed repetitions after a warm-up. Needs Debian's python3-torch."""
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = sys.argv[1] if len(sys.argv) > 1 else "step"
THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 2
torch.set_num_threads(THREADS)
torch.manual_seed(0)
V, D, H, DK, FF, L, NB, MD, P = 32128, 512, 8, 64, 2048, 6, 32, 128, 0.1


def bucket(rel, bidirectional):
    nb, b = NB, 0
    if bidirectional:
        nb //= 2
        b = (rel > 0).long() * nb
        rel = rel.abs()
    else:
        rel = -torch.min(rel, torch.zeros_like(rel))
    me = nb // 2
    large = me + (torch.log(rel.float() / me) / math.log(MD / me) * (nb - me)).long()
    large = torch.min(large, torch.full_like(large, nb - 1))
    return b + torch.where(rel < me, rel, large)


class RMS(nn.Module):
    def __init__(s):
        super().__init__()
        s.w = nn.Parameter(torch.ones(D))

    def forward(s, x):
        return s.w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


class Attn(nn.Module):
    def __init__(s, rel=False):
        super().__init__()
        s.q, s.k, s.v = (nn.Linear(D, H * DK, bias=False) for _ in range(3))
        s.o = nn.Linear(H * DK, D, bias=False)
        s.rel = nn.Embedding(NB, H) if rel else None

    def heads(s, x):
        return x.view(x.shape[0], -1, H, DK).transpose(1, 2)

    def forward(s, x, kv=None, bias=None, cache=None):
        q = s.heads(s.q(x))
        if cache is not None and "ck" in cache:  # cross-attention K/V computed once
            k, v = cache["ck"], cache["cv"]
        else:
            src = x if kv is None else kv
            k, v = s.heads(s.k(src)), s.heads(s.v(src))
            if cache is not None and kv is None:  # self-attention cache
                if "k" in cache:
                    k, v = torch.cat([cache["k"], k], 2), torch.cat([cache["v"], v], 2)
                cache["k"], cache["v"] = k, v
            elif cache is not None:
                cache["ck"], cache["cv"] = k, v
        sc = q @ k.transpose(-1, -2)
        if bias is not None:
            sc = sc + bias
        w = F.dropout(sc.float().softmax(-1), P, s.training)
        return s.o((w @ v).transpose(1, 2).reshape(x.shape[0], -1, H * DK))

    def bias(s, q, k, bidirectional, q0=0):
        rel = torch.arange(k)[None, :] - torch.arange(q0, q0 + q)[:, None]
        b = s.rel(bucket(rel, bidirectional)).permute(2, 0, 1)[None]
        if not bidirectional:
            b = b.masked_fill(rel[None, None] > 0, float("-inf"))
        return b


class FFN(nn.Module):
    def __init__(s):
        super().__init__()
        s.wi, s.wo = nn.Linear(D, FF, bias=False), nn.Linear(FF, D, bias=False)

    def forward(s, x):
        return s.wo(F.dropout(F.relu(s.wi(x)), P, s.training))


class Block(nn.Module):
    def __init__(s, dec, rel):
        super().__init__()
        s.n1, s.sa, s.n3, s.ff = RMS(), Attn(rel), RMS(), FFN()
        s.dec = dec
        if dec:
            s.n2, s.ca = RMS(), Attn()

    def forward(s, x, bias, enc=None, cache=None):
        x = x + F.dropout(s.sa(s.n1(x), bias=bias, cache=None if cache is None else cache[0]), P, s.training)
        if s.dec:
            x = x + F.dropout(s.ca(s.n2(x), kv=enc, cache=None if cache is None else cache[1]), P, s.training)
        return x + F.dropout(s.ff(s.n3(x)), P, s.training)


class T5(nn.Module):
    def __init__(s):
        super().__init__()
        s.shared = nn.Embedding(V, D)
        s.enc = nn.ModuleList(Block(False, i == 0) for i in range(L))
        s.dec = nn.ModuleList(Block(True, i == 0) for i in range(L))
        s.en, s.dn = RMS(), RMS()

    def encode(s, src):
        x = F.dropout(s.shared(src), P, s.training)
        bias = s.enc[0].sa.bias(src.shape[1], src.shape[1], True)
        for b in s.enc:
            x = b(x, bias)
        return F.dropout(s.en(x), P, s.training)

    def decode(s, dec, enc, caches=None, q0=0):
        y = F.dropout(s.shared(dec), P, s.training)
        bias = s.dec[0].sa.bias(dec.shape[1], q0 + dec.shape[1], False, q0)
        for i, b in enumerate(s.dec):
            y = b(y, bias, enc, None if caches is None else caches[i])
        y = F.dropout(s.dn(y), P, s.training) * D ** -0.5
        return y @ s.shared.weight.T


def sample(logits, k=5, p=0.9):
    top, idx = logits.topk(k, -1)
    probs = top.softmax(-1)
    probs = probs.masked_fill(probs.cumsum(-1) - probs > p, 0)
    return idx.gather(-1, torch.multinomial(probs, 1))


m = T5()
if MODE == "step":
    B, S, T = 32, 64, 32
    opt = torch.optim.AdamW(m.parameters(), 1e-4, weight_decay=0.01)
    src, tgt = torch.randint(2, V, (B, S)), torch.randint(2, V, (B, T))
    dec_in = torch.cat([torch.zeros(B, 1, dtype=torch.long), tgt[:, :-1]], 1)
    m.train()
    ts = []
    for i in range(4):
        t0 = time.perf_counter()
        logits = m.decode(dec_in, m.encode(src))
        loss = F.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        ts.append(time.perf_counter() - t0)
    ts = sorted(ts[1:])
    print(f"torch {torch.__version__} threads={THREADS} T5-small train step B=32 S=64 T=32: median {ts[len(ts)//2]:.3f} s/step ({ts})")
else:
    B, PL, N = 32, 24, 40
    m.eval()
    prompts = torch.randint(2, V, (B, PL))
    ts = []
    with torch.no_grad():
        for i in range(3):
            t0 = time.perf_counter()
            enc = m.encode(prompts)
            caches = [({}, {}) for _ in range(L)]
            tok = torch.zeros(B, 1, dtype=torch.long)
            for j in range(N):
                logits = m.decode(tok, enc, caches, j)[:, -1]
                tok = sample(logits)
            ts.append(time.perf_counter() - t0)
    ts = sorted(ts[1:])
    med = ts[len(ts) // 2]
    print(f"torch {torch.__version__} threads={THREADS} T5-small generate B=32 prompt=24 new=40: {B*N/med:.1f} tokens/s (median {med:.3f} s)")
