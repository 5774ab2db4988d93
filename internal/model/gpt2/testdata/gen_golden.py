"""Small random GPT-2 checkpoints in Hugging Face's exact layout, with golden
logits, for repro/internal/model/gpt2's loader test.

The forward pass below is written from transformers' modeling_gpt2.py
(GPT2Attention._attn / _split_heads / _merge_heads, GPT2MLP, GPT2Block,
GPT2Model.forward, GPT2LMHeadModel with the tied lm_head) and
pytorch_utils.Conv1D (y = x @ weight + bias, weight [in, out]), in plain
PyTorch: transformers itself is not installed here. safetensors files are
written by hand in the format's layout (8-byte little-endian header length,
JSON header padded with spaces to a multiple of 8, raw little-endian data).

Run: /usr/bin/python3 gen_golden.py   (writes the directories and golden.json here)
"""
import json
import math
import os
import struct

import torch
import torch.nn.functional as F

torch.manual_seed(20240612)


def conv1d(x, w, b):  # transformers.pytorch_utils.Conv1D.forward
    size_out = x.size()[:-1] + (w.size(-1),)
    return torch.addmm(b, x.view(-1, x.size(-1)), w).view(size_out)


def new_gelu(x):  # transformers.activations.NewGELUActivation
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


ACT = {"gelu_new": new_gelu, "gelu": F.gelu, "relu": F.relu}


def split_heads(t, H, dh):
    return t.view(t.size()[:-1] + (H, dh)).permute(0, 2, 1, 3)


def merge_heads(t, H, dh):
    t = t.permute(0, 2, 1, 3).contiguous()
    return t.view(t.size()[:-2] + (H * dh,))


def forward(cfg, p, ids, mask):
    """GPT2LMHeadModel.forward(input_ids, attention_mask) -> logits, in eval mode."""
    B, T = ids.shape
    D, H = cfg["n_embd"], cfg["n_head"]
    dh = D // H
    # GPT2Model: position_ids = arange(T); the attention mask becomes an
    # additive (1 - mask) * finfo.min broadcast over heads and queries.
    pos = torch.arange(T).unsqueeze(0)
    x = p["wte.weight"][ids] + p["wpe.weight"][pos]
    amask = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool)).view(1, 1, T, T)
    for i in range(cfg["n_layer"]):
        h = f"h.{i}."
        r = x
        a = F.layer_norm(x, (D,), p[h + "ln_1.weight"], p[h + "ln_1.bias"], cfg["layer_norm_epsilon"])
        q, k, v = conv1d(a, p[h + "attn.c_attn.weight"], p[h + "attn.c_attn.bias"]).split(D, dim=2)
        q, k, v = split_heads(q, H, dh), split_heads(k, H, dh), split_heads(v, H, dh)
        w = torch.matmul(q, k.transpose(-1, -2))
        if cfg.get("scale_attn_weights", True):
            w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype)
        if cfg.get("scale_attn_by_inverse_layer_idx", False):
            w = w / float(i + 1)
        w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
        w = w + amask
        w = F.softmax(w, dim=-1)
        a = merge_heads(torch.matmul(w, v), H, dh)
        a = conv1d(a, p[h + "attn.c_proj.weight"], p[h + "attn.c_proj.bias"])
        x = a + r
        r = x
        m = F.layer_norm(x, (D,), p[h + "ln_2.weight"], p[h + "ln_2.bias"], cfg["layer_norm_epsilon"])
        m = conv1d(ACT[cfg["activation_function"]](conv1d(m, p[h + "mlp.c_fc.weight"], p[h + "mlp.c_fc.bias"])),
                   p[h + "mlp.c_proj.weight"], p[h + "mlp.c_proj.bias"])
        x = r + m
    x = F.layer_norm(x, (D,), p["ln_f.weight"], p["ln_f.bias"], cfg["layer_norm_epsilon"])
    head = p["wte.weight"] if cfg.get("tie_word_embeddings", True) else p["lm_head.weight"]
    return x @ head.T


def params(cfg):
    """Random weights with GPT-2's shapes (std 0.2 so that the layers matter)."""
    D, V, P, L = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"], cfg["n_layer"]
    inner = cfg.get("n_inner") or 4 * D
    r = lambda *s: torch.randn(*s) * 0.2
    p = {"wte.weight": r(V, D), "wpe.weight": r(P, D)}
    for i in range(L):
        h = f"h.{i}."
        p.update({
            h + "ln_1.weight": 1 + r(D), h + "ln_1.bias": r(D),
            h + "attn.c_attn.weight": r(D, 3 * D), h + "attn.c_attn.bias": r(3 * D),
            h + "attn.c_proj.weight": r(D, D), h + "attn.c_proj.bias": r(D),
            h + "ln_2.weight": 1 + r(D), h + "ln_2.bias": r(D),
            h + "mlp.c_fc.weight": r(D, inner), h + "mlp.c_fc.bias": r(inner),
            h + "mlp.c_proj.weight": r(inner, D), h + "mlp.c_proj.bias": r(D),
        })
    p["ln_f.weight"], p["ln_f.bias"] = 1 + r(D), r(D)
    if not cfg.get("tie_word_embeddings", True):
        p["lm_head.weight"] = r(V, D)
    return p


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().to(torch.float32)
        b = t.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


BASE = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 61, "n_positions": 12,
        "n_embd": 16, "n_layer": 2, "n_head": 4, "n_inner": None, "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-5, "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1,
        "initializer_range": 0.02, "bos_token_id": 60, "eos_token_id": 60, "n_ctx": 12}

# (directory, config changes, layout): "hub" = names without prefix and the
# old attn.bias / attn.masked_bias buffers (as openai-community/gpt2's file);
# "prefixed" = GPT2LMHeadModel.save_pretrained names ("transformer." prefix),
# sharded in two files with model.safetensors.index.json.
VARIANTS = [
    ("tiny-hub", {}, "hub"),
    ("tiny-sharded", {"tie_word_embeddings": True}, "prefixed-sharded"),
    ("tiny-untied", {"tie_word_embeddings": False, "activation_function": "gelu", "n_inner": 24,
                     "scale_attn_by_inverse_layer_idx": True, "layer_norm_epsilon": 1e-6, "n_layer": 3}, "prefixed"),
    ("tiny-relu", {"activation_function": "relu", "scale_attn_weights": False}, "hub"),
]

here = os.path.dirname(os.path.abspath(__file__))
lens = [7, 12, 3]
T = max(lens)
golden = {"generator": "torch " + torch.__version__, "models": []}
for name, changes, layout in VARIANTS:
    cfg = dict(BASE, **changes)
    p = params(cfg)
    ids = torch.randint(0, cfg["vocab_size"], (len(lens), T))
    mask = torch.zeros(len(lens), T, dtype=torch.long)
    for b, n in enumerate(lens):
        mask[b, :n] = 1
        ids[b, n:] = cfg["eos_token_id"]  # padding; masked
    with torch.no_grad():
        logits = forward(cfg, {k: v.double() for k, v in p.items()}, ids, mask.double())
    d = os.path.join(here, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    if layout == "hub":
        t = dict(p)
        for i in range(cfg["n_layer"]):
            t[f"h.{i}.attn.bias"] = torch.tril(torch.ones(cfg["n_positions"], cfg["n_positions"])).view(1, 1, cfg["n_positions"], cfg["n_positions"])
            t[f"h.{i}.attn.masked_bias"] = torch.tensor(-1e4)
        write_safetensors(os.path.join(d, "model.safetensors"), t)
    else:
        t = {("transformer." + k if not k.startswith("lm_head.") else k): v for k, v in p.items()}
        if layout == "prefixed-sharded":
            names = sorted(t)
            shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
                      "model-00002-of-00002.safetensors": names[len(names) // 2:]}
            for shard, ns in shards.items():
                write_safetensors(os.path.join(d, shard), {n: t[n] for n in ns})
            wm = {n: s for s, ns in shards.items() for n in ns}
            with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
                json.dump({"metadata": {"total_size": 4 * sum(v.numel() for v in t.values())}, "weight_map": wm}, f, indent=2)
        else:
            write_safetensors(os.path.join(d, "model.safetensors"), t)
    out = []
    for b, n in enumerate(lens):
        out.append([[float(v) for v in logits[b, i]] for i in range(n)])
    golden["models"].append({"dir": name, "ids": [ids[b, :n].tolist() for b, n in enumerate(lens)], "logits": out})

with open(os.path.join(here, "golden.json"), "w") as f:
    json.dump(golden, f)
