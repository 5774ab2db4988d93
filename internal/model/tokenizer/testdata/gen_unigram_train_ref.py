#!/usr/bin/python3
"""Reference for the Go Unigram trainer (unigram_train.go): python
sentencepiece 0.1.97 trains a unigram model on the Wikipedia sentences of
the data directory (unlabeled/wiki.txt.gz) with nmt_nfkc, T5's special
layout and the vocabulary size below, then segments the held-out
sentences (the first 3000 golden sentences: STS12-16 and SICK test text)
and records the average number of pieces per sentence and the share of
<unk> pieces, which the Go test compares with its own trained model.

    REPRO_DATA_DIR=/work/shared/data /usr/bin/python3 gen_unigram_train_ref.py
"""
import gzip
import io
import json
import os

import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("REPRO_DATA_DIR", "/work/shared/data")
VOCAB = 2000

with gzip.open(os.path.join(DATA, "unlabeled", "wiki.txt.gz"), "rt", encoding="utf-8") as f:
    corpus = [l.strip() for l in f if l.strip()]
held = []
with gzip.open(os.path.join(HERE, "spm", "golden.jsonl.gz"), "rt", encoding="utf-8") as f:
    for line in f:
        r = json.loads(line)
        if r["model"] == "t5like" and len(held) < 3000:
            held.append(r["text"])
buf = io.BytesIO()
spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus), model_writer=buf, vocab_size=VOCAB,
                               model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                               input_sentence_size=0, num_threads=1, minloglevel=2,
                               normalization_rule_name="nmt_nfkc")
m = spm.SentencePieceProcessor(model_proto=buf.getvalue())
pieces = unk = 0
for s in held:
    ids = m.encode(s)
    pieces += len(ids)
    unk += sum(1 for i in ids if i == m.unk_id())
out = {"corpus": "unlabeled/wiki.txt.gz", "sentences": len(corpus), "vocab_size": VOCAB,
       "held_out": len(held), "pieces_per_sentence": pieces / len(held), "unk_share": unk / pieces,
       "sentencepiece": spm.__version__}
with open(os.path.join(HERE, "unigram_train_ref.json"), "w") as f:
    json.dump(out, f, indent=1)
print(out)
