"""Golden outputs of a tiny BERT-shaped encoder and decoder computed by
PyTorch's own nn.TransformerEncoderLayer / nn.TransformerDecoderLayer
(post-LN, exact GELU) in float64, with weights stored under the Hugging
Face names repro's transformer package uses.

Run: /usr/bin/python3 gen_tiny.py > tiny.json
"""
import json
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(11)
V, D, H, I, L, P, TV, EPS, PAD = 23, 8, 2, 16, 2, 12, 2, 1e-12, 0
params = {}


def p(name, *shape, scale=0.3):
    t = (torch.randn(*shape, dtype=torch.float32) * scale)
    params[name] = t
    return t.double()


def ln_params(prefix):
    g = 1 + p(prefix + ".weight", D, scale=0.1) - 1
    b = p(prefix + ".bias", D, scale=0.1)
    return g, b


def embeddings(prefix, ids, types):
    word = p(prefix + "embeddings.word_embeddings.weight", V, D)
    pos = p(prefix + "embeddings.position_embeddings.weight", P, D)
    x = word[ids] + pos[torch.arange(ids.shape[1])][None]
    if types is not None:
        tt = p(prefix + "embeddings.token_type_embeddings.weight", TV, D)
        x = x + tt[types]
    g, b = ln_params(prefix + "embeddings.LayerNorm")
    return F.layer_norm(x, (D,), g, b, EPS), word


def attn_into(mha, prefix):
    q, qb = p(prefix + ".self.query.weight", D, D), p(prefix + ".self.query.bias", D)
    k, kb = p(prefix + ".self.key.weight", D, D), p(prefix + ".self.key.bias", D)
    v, vb = p(prefix + ".self.value.weight", D, D), p(prefix + ".self.value.bias", D)
    mha.in_proj_weight.data = torch.cat([q, k, v])
    mha.in_proj_bias.data = torch.cat([qb, kb, vb])
    mha.out_proj.weight.data = p(prefix + ".output.dense.weight", D, D)
    mha.out_proj.bias.data = p(prefix + ".output.dense.bias", D)


def ln_into(norm, prefix):
    g, b = ln_params(prefix)
    norm.weight.data, norm.bias.data = g, b


def ffn_into(layer, prefix):
    layer.linear1.weight.data = p(prefix + ".intermediate.dense.weight", I, D)
    layer.linear1.bias.data = p(prefix + ".intermediate.dense.bias", I)
    layer.linear2.weight.data = p(prefix + ".output.dense.weight", D, I)
    layer.linear2.bias.data = p(prefix + ".output.dense.bias", D)


seqs = [[2, 5, 7, 9, 3], [2, 11, 3], [2, 4, 4, 8]]
T = max(map(len, seqs))
ids = torch.tensor([s + [PAD] * (T - len(s)) for s in seqs])
types = torch.tensor([[0] * 3 + [1] * (T - 3)] * len(seqs))
lens = [len(s) for s in seqs]
pad_mask = torch.tensor([[t >= n for t in range(T)] for n in lens])

with torch.no_grad():
    x, word = embeddings("", ids, types)
    hidden = [x]
    for i in range(L):
        pre = "encoder.layer.%d" % i
        layer = nn.TransformerEncoderLayer(D, H, I, dropout=0.0, activation="gelu", layer_norm_eps=EPS,
                                           batch_first=True, norm_first=False).double().eval()
        attn_into(layer.self_attn, pre + ".attention")
        ln_into(layer.norm1, pre + ".attention.output.LayerNorm")
        ffn_into(layer, pre)
        ln_into(layer.norm2, pre + ".output.LayerNorm")
        x = layer(x, src_key_padding_mask=pad_mask)
        hidden.append(x)
    pw, pb = p("pooler.dense.weight", D, D), p("pooler.dense.bias", D)
    m = (~pad_mask).double()[..., None]
    mean = (x * m).sum(1) / m.sum(1)
    first_last = ((hidden[1] + hidden[-1]) / 2 * m).sum(1) / m.sum(1)
    cls = torch.tanh(x[:, 0] @ pw.T + pb)

    # Decoder: 1 layer, own position embeddings, tied word embeddings,
    # memory = 4 rows per sequence (PaSeR's decoding signal layout).
    tgt = [[2, 6, 7], [2, 9], [2, 4, 5]]
    Tt = max(map(len, tgt))
    tids = torch.tensor([s + [PAD] * (Tt - len(s)) for s in tgt])
    tlens = [len(s) for s in tgt]
    tmask = torch.tensor([[t >= n for t in range(Tt)] for n in tlens])
    dpos = p("decoder.embeddings.position_embeddings.weight", P, D)
    g, b = ln_params("decoder.embeddings.LayerNorm")
    y = F.layer_norm(word[tids] + dpos[torch.arange(Tt)][None], (D,), g, b, EPS)
    memory = torch.randn(len(seqs), 4, D, dtype=torch.float32)
    dl = nn.TransformerDecoderLayer(D, H, I, dropout=0.0, activation="gelu", layer_norm_eps=EPS,
                                    batch_first=True, norm_first=False).double().eval()
    pre = "decoder.encoder.layer.0"
    attn_into(dl.self_attn, pre + ".attention")
    ln_into(dl.norm1, pre + ".attention.output.LayerNorm")
    attn_into(dl.multihead_attn, pre + ".crossattention")
    ln_into(dl.norm2, pre + ".crossattention.output.LayerNorm")
    ffn_into(dl, pre)
    ln_into(dl.norm3, pre + ".output.LayerNorm")
    causal = torch.triu(torch.ones(Tt, Tt, dtype=torch.bool), diagonal=1)
    y = dl(y, memory.double(), tgt_mask=causal, tgt_key_padding_mask=tmask)
    obias = p("decoder.cls.predictions.bias", V)
    logits = y @ word.T + obias


def flat(t):
    return [float(v) for v in t.reshape(-1)]


print(json.dumps({
    "generator": "torch " + torch.__version__,
    "config": {"vocab_size": V, "hidden_size": D, "num_hidden_layers": L, "num_attention_heads": H,
               "intermediate_size": I, "max_position_embeddings": P, "type_vocab_size": TV,
               "layer_norm_eps": EPS, "pad_token_id": PAD, "add_pooling_layer": True},
    "params": {k: flat(v) for k, v in params.items()},
    "seqs": seqs, "types": flat(types.double()), "tgt": tgt, "memory": flat(memory),
    "lens": lens, "last": flat(x), "first": flat(hidden[1]), "mean": flat(mean),
    "first_last": flat(first_last), "cls": flat(cls), "logits": flat(logits),
}, indent=1))
