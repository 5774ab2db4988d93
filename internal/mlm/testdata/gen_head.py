"""Golden values of BERT's masked-language-model head and loss, computed by
PyTorch in float64 from the published definition (Hugging Face's
BertLMPredictionHead: dense -> exact GELU -> LayerNorm -> decoder tied to the
word embeddings, plus a bias; CrossEntropyLoss with ignore_index -100,
averaged over the predicted positions), for mlm_test.go.

Run: /usr/bin/python3 gen_head.py > head.json
"""
import json
import torch
import torch.nn.functional as F

torch.manual_seed(3)
V, D, N, EPS = 13, 8, 6, 1e-12
f32 = lambda *s, scale=0.5: (torch.randn(*s) * scale).float()
w = {
    "cls.predictions.transform.dense.weight": f32(D, D),
    "cls.predictions.transform.dense.bias": f32(D, scale=0.1),
    "cls.predictions.transform.LayerNorm.weight": 1 + f32(D, scale=0.1),
    "cls.predictions.transform.LayerNorm.bias": f32(D, scale=0.1),
    "cls.predictions.bias": f32(V, scale=0.1),
    "embeddings.word_embeddings.weight": f32(V, D),
}
x = f32(N, D, scale=1.0)
labels = [3, 0, 12, 7, 7, 1]
d = {k: v.double() for k, v in w.items()}
h = F.linear(x.double(), d["cls.predictions.transform.dense.weight"], d["cls.predictions.transform.dense.bias"])
h = F.gelu(h)
h = F.layer_norm(h, (D,), d["cls.predictions.transform.LayerNorm.weight"], d["cls.predictions.transform.LayerNorm.bias"], EPS)
logits = h @ d["embeddings.word_embeddings.weight"].T + d["cls.predictions.bias"]
loss = F.cross_entropy(logits, torch.tensor(labels))
acc = (logits.argmax(-1) == torch.tensor(labels)).double().mean()
json.dump({
    "vocab": V, "hidden": D,
    "weights": {k: v.flatten().tolist() for k, v in w.items()},
    "x": x.flatten().tolist(), "labels": labels,
    "logits": logits.flatten().tolist(), "loss": loss.item(), "accuracy": acc.item(),
}, __import__("sys").stdout)
