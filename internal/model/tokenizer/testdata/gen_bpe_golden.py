#!/usr/bin/python3
"""Golden GPT-2 byte-level BPE ids for bpe_test.go.

An independent implementation of OpenAI's GPT-2 encoder (encoder.py:
bytes_to_unicode, the pre-tokenization regex run with the `regex` module,
lowest-rank-first merges), written from the reference logic and run over real
STS / NLI sentences plus edge cases.

Usage: /usr/bin/python3 gen_bpe_golden.py DATA_DIR > bpe_golden.jsonl
"""
import json
import sys

import regex as re

DATA = sys.argv[1]


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


PAT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def main():
    vocab = json.load(open(f"{DATA}/tokenizers/gpt2/vocab.json", encoding="utf-8"))
    merges = [tuple(l.split()) for l in open(f"{DATA}/tokenizers/gpt2/merges.txt", encoding="utf-8").read().split("\n")[1:] if l]
    ranks = {m: i for i, m in enumerate(merges)}
    b2u = bytes_to_unicode()

    def bpe(token):
        word = tuple(token)
        while len(word) > 1:
            pairs = set(zip(word, word[1:]))
            best = min(pairs, key=lambda p: ranks.get(p, float("inf")))
            if best not in ranks:
                break
            a, b = best
            out = []
            i = 0
            while i < len(word):
                if i + 1 < len(word) and word[i] == a and word[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            word = tuple(out)
        return word

    def encode(text):
        ids = []
        for tok in PAT.findall(text):
            tok = "".join(b2u[b] for b in tok.encode("utf-8"))
            ids.extend(vocab[t] for t in bpe(tok))
        return ids

    texts = []
    for rel, cols, every, limit in [("sts/STSB/test.tsv", [1, 2], 29, 60), ("sts/STS14/deft-forum.tsv", [1], 13, 30),
                                    ("sts/STS15/answers-forums.tsv", [2], 11, 30), ("nli/mnli_dev_matched.tsv", [0, 1], 37, 50),
                                    ("sts/STS12/surprise.SMTnews.tsv", [1], 9, 20)]:
        out = []
        with open(f"{DATA}/{rel}", encoding="utf-8") as f:
            next(f)
            for i, line in enumerate(f):
                if i % every == 0:
                    fs = line.rstrip("\n").split("\t")
                    out.extend(fs[c] for c in cols)
                if len(out) >= limit:
                    break
        texts += out
    texts += [
        "I'm sure they'll say it's fine; we've done what you'd expect, 'twas THEIR'S.",
        "Café déjà vu — naïve résumé 東京 😀 emoji",
        "  leading and trailing spaces  ",
        "tabs\tand\nnewlines\n\nhere",
        "numbers 12345 3.14 1,000,000 and ½",
        "symbols!!! ??? ... $%^&*()",
        "multiple     spaces between",
        "",
    ]
    for t in texts:
        print(json.dumps({"text": t, "ids": encode(t)}, ensure_ascii=False))


main()
