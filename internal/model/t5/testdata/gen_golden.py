"""Small random T5 checkpoints in Hugging Face's exact layout, with golden
encoder outputs and decoder logits, for repro/internal/model/t5's tests.

The forward pass below is written from transformers' modeling_t5.py
(T5LayerNorm, T5DenseActDense / T5DenseGatedActDense, T5Attention with
_relative_position_bucket and compute_bias, T5LayerSelfAttention,
T5LayerCrossAttention, T5LayerFF, T5Stack and T5ForConditionalGeneration
with the d_model**-0.5 rescale of a tied output layer), in plain PyTorch, in
eval mode: transformers itself is not installed here. safetensors files are
written by hand in the format's layout.

Variants: v1.0 (relu, tied output, t5-small's layout), v1.1 (gated-gelu,
separate lm_head, num_decoder_layers != num_layers, as Flan-T5) and v1.1
sharded in two files with model.safetensors.index.json and the per-stack
embed_tokens copies some checkpoints carry.

Run: /usr/bin/python3 gen_golden.py   (writes the directories and golden.json here)
"""
import json
import math
import os
import struct

import torch
import torch.nn.functional as F

torch.manual_seed(20261124)


def new_gelu(x):  # transformers.activations.NewGELUActivation
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def act_of(proj):  # T5Config: "gated-gelu" means gelu_new
    parts = proj.split("-")
    name = parts[-1]
    if proj == "gated-gelu":
        name = "gelu_new"
    return {"relu": F.relu, "gelu": F.gelu, "gelu_new": new_gelu}[name], parts[0] == "gated"


def rms_norm(x, w, eps):  # T5LayerNorm
    var = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(var + eps))


def bucket(rel, bidirectional, num_buckets, max_distance):  # T5Attention._relative_position_bucket
    buckets = 0
    if bidirectional:
        num_buckets //= 2
        buckets += (rel > 0).to(torch.long) * num_buckets
        rel = torch.abs(rel)
    else:
        rel = -torch.min(rel, torch.zeros_like(rel))
    max_exact = num_buckets // 2
    is_small = rel < max_exact
    large = max_exact + (torch.log(rel.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return buckets + torch.where(is_small, rel, large)


def compute_bias(cfg, table, q, k, bidirectional):  # T5Attention.compute_bias
    ctx = torch.arange(q, dtype=torch.long)[:, None]
    mem = torch.arange(k, dtype=torch.long)[None, :]
    b = bucket(mem - ctx, bidirectional, cfg["relative_attention_num_buckets"], cfg["relative_attention_max_distance"])
    return F.embedding(b, table).permute([2, 0, 1]).unsqueeze(0)  # [1, H, q, k]


def attention(cfg, p, pre, x, kv, bias):  # T5Attention.forward without cache
    B, T, _ = x.shape
    H, dk = cfg["num_heads"], cfg["d_kv"]

    def shape(s):
        return s.view(B, -1, H, dk).transpose(1, 2)

    q = shape(x @ p[pre + ".q.weight"].T)
    k = shape(kv @ p[pre + ".k.weight"].T)
    v = shape(kv @ p[pre + ".v.weight"].T)
    scores = torch.matmul(q, k.transpose(3, 2)) + bias  # unscaled
    w = F.softmax(scores.float(), dim=-1)
    o = torch.matmul(w, v).transpose(1, 2).contiguous().view(B, -1, H * dk)
    return o @ p[pre + ".o.weight"].T


def ff(cfg, p, pre, x):  # T5LayerFF
    act, gated = act_of(cfg["feed_forward_proj"])
    h = rms_norm(x, p[pre + ".layer_norm.weight"], cfg["layer_norm_epsilon"])
    if gated:
        h = act(h @ p[pre + ".DenseReluDense.wi_0.weight"].T) * (h @ p[pre + ".DenseReluDense.wi_1.weight"].T)
    else:
        h = act(h @ p[pre + ".DenseReluDense.wi.weight"].T)
    return x + h @ p[pre + ".DenseReluDense.wo.weight"].T


def ext_mask(mask):  # get_extended_attention_mask: 0 where visible, finfo.min elsewhere
    return (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min


def forward(cfg, p, src, src_mask, dec, dec_mask):
    eps = cfg["layer_norm_epsilon"]
    # Encoder (T5Stack, is_decoder=False).
    x = F.embedding(src, p["shared.weight"])
    S = src.shape[1]
    bias = compute_bias(cfg, p["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], S, S, True) + ext_mask(src_mask)
    for i in range(cfg["num_layers"]):
        pre = "encoder.block.%d" % i
        h = rms_norm(x, p[pre + ".layer.0.layer_norm.weight"], eps)
        x = x + attention(cfg, p, pre + ".layer.0.SelfAttention", h, h, bias)
        x = ff(cfg, p, pre + ".layer.1", x)
    enc = rms_norm(x, p["encoder.final_layer_norm.weight"], eps)
    # Decoder (T5Stack, is_decoder=True): causal mask times the padding mask.
    T = dec.shape[1]
    causal = torch.tril(torch.ones(T, T))[None, None] * dec_mask[:, None, None, :].float()
    self_bias = compute_bias(cfg, p["decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], T, T, False) + \
        (1.0 - causal) * torch.finfo(torch.float32).min
    cross_bias = ext_mask(src_mask)
    y = F.embedding(dec, p["shared.weight"])
    for i in range(cfg["num_decoder_layers"]):
        pre = "decoder.block.%d" % i
        h = rms_norm(y, p[pre + ".layer.0.layer_norm.weight"], eps)
        y = y + attention(cfg, p, pre + ".layer.0.SelfAttention", h, h, self_bias)
        h = rms_norm(y, p[pre + ".layer.1.layer_norm.weight"], eps)
        y = y + attention(cfg, p, pre + ".layer.1.EncDecAttention", h, enc, cross_bias)
        y = ff(cfg, p, pre + ".layer.2", y)
    y = rms_norm(y, p["decoder.final_layer_norm.weight"], eps)
    if cfg["tie_word_embeddings"]:
        y = y * (cfg["d_model"] ** -0.5)
        logits = y @ p["shared.weight"].T
    else:
        logits = y @ p["lm_head.weight"].T
    return enc, logits


def params(cfg):
    V, D, I, F_, H = cfg["vocab_size"], cfg["d_model"], cfg["num_heads"] * cfg["d_kv"], cfg["d_ff"], cfg["num_heads"]
    _, gated = act_of(cfg["feed_forward_proj"])

    def r(*shape, s=0.3):
        return torch.randn(*shape) * s

    p = {"shared.weight": r(V, D, s=1.0)}
    for stack, n in (("encoder", cfg["num_layers"]), ("decoder", cfg["num_decoder_layers"])):
        for i in range(n):
            pre = "%s.block.%d" % (stack, i)
            attns = [".layer.0.SelfAttention"] + ([".layer.1.EncDecAttention"] if stack == "decoder" else [])
            for a in attns:
                for w in "qkv":
                    p[pre + a + ".%s.weight" % w] = r(I, D)
                p[pre + a + ".o.weight"] = r(D, I)
            if i == 0:
                p[pre + ".layer.0.SelfAttention.relative_attention_bias.weight"] = r(cfg["relative_attention_num_buckets"], H, s=1.0)
            for l in range(len(attns)):
                p[pre + ".layer.%d.layer_norm.weight" % l] = 1 + r(D, s=0.1)
            fl = pre + ".layer.%d" % len(attns)
            if gated:
                p[fl + ".DenseReluDense.wi_0.weight"] = r(F_, D)
                p[fl + ".DenseReluDense.wi_1.weight"] = r(F_, D)
            else:
                p[fl + ".DenseReluDense.wi.weight"] = r(F_, D)
            p[fl + ".DenseReluDense.wo.weight"] = r(D, F_)
            p[fl + ".layer_norm.weight"] = 1 + r(D, s=0.1)
        p[stack + ".final_layer_norm.weight"] = 1 + r(D, s=0.1)
    if not cfg["tie_word_embeddings"]:
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


BASE = {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "vocab_size": 53, "d_model": 16,
        "d_kv": 4, "d_ff": 24, "num_layers": 2, "num_decoder_layers": 2, "num_heads": 3,
        "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128, "dropout_rate": 0.1,
        "layer_norm_epsilon": 1e-6, "initializer_factor": 1.0, "feed_forward_proj": "relu",
        "tie_word_embeddings": True, "is_encoder_decoder": True, "pad_token_id": 0, "eos_token_id": 1,
        "decoder_start_token_id": 0}

VARIANTS = [
    ("tiny-v1_0", {}, "plain"),
    ("tiny-v1_1", {"feed_forward_proj": "gated-gelu", "tie_word_embeddings": False, "num_decoder_layers": 3,
                   "relative_attention_num_buckets": 8, "relative_attention_max_distance": 20}, "plain"),
    ("tiny-sharded", {"feed_forward_proj": "gated-gelu", "tie_word_embeddings": False}, "sharded"),
]

# Two sources (the second padded) and two decoder inputs (the first
# padded); the first source is long enough for the bucket boundaries.
SRC = [[(7 * i + 3) % 51 + 2 for i in range(70)], [(5 * i + 1) % 51 + 2 for i in range(9)]]
DEC = [[0, 5, 9, 4], [0, 11, 7, 30, 2, 17]]


def pad(seqs):
    T = max(len(s) for s in seqs)
    ids = torch.tensor([s + [0] * (T - len(s)) for s in seqs])
    mask = torch.tensor([[1] * len(s) + [0] * (T - len(s)) for s in seqs])
    return ids, mask


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    golden = {"src": SRC, "dec": DEC, "models": {}, "buckets": {}}
    rel = torch.arange(-200, 201)
    for nb, md in ((32, 128), (8, 20)):
        for bidir in (True, False):
            key = "%d/%d/%s" % (nb, md, "bidirectional" if bidir else "causal")
            golden["buckets"][key] = bucket(rel, bidir, nb, md).tolist()
    golden["bucket_rel_from"] = -200
    src, sm = pad(SRC)
    dec, dm = pad(DEC)
    for name, delta, layout in VARIANTS:
        cfg = dict(BASE, **delta)
        p = params(cfg)
        with torch.no_grad():
            enc, logits = forward(cfg, p, src, sm, dec, dm)
        d = os.path.join(here, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
        if layout == "sharded":
            t = dict(p)
            t["encoder.embed_tokens.weight"] = p["shared.weight"]
            t["decoder.embed_tokens.weight"] = p["shared.weight"]
            names = sorted(t)
            shards = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
                      "model-00002-of-00002.safetensors": names[len(names) // 2:]}
            for shard, ns in shards.items():
                write_safetensors(os.path.join(d, shard), {n: t[n] for n in ns})
            wm = {n: s for s, ns in shards.items() for n in ns}
            with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
                json.dump({"metadata": {}, "weight_map": wm}, f, indent=2)
        else:
            write_safetensors(os.path.join(d, "model.safetensors"), p)
        golden["models"][name] = {
            "encoder": [enc[b, :len(SRC[b])].reshape(-1).tolist() for b in range(len(SRC))],
            "logits": [logits[b, :len(DEC[b])].reshape(-1).tolist() for b in range(len(DEC))],
        }
    with open(os.path.join(here, "golden.json"), "w") as f:
        json.dump(golden, f)


if __name__ == "__main__":
    main()
