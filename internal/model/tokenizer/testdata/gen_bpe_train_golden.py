#!/usr/bin/python3
"""Golden merges for TrainBPE (bpe_train_test.go).

An independent, deliberately naive implementation of byte-level BPE training
(Sennrich et al. 2016 over GPT-2's pre-tokens, as Hugging Face's
ByteLevelBPETrainer does): count the pre-tokens of the corpus (GPT-2's
regex, run with the `regex` module), write each as its bytes mapped through
GPT-2's bytes_to_unicode, then repeatedly recount every adjacent pair over
all words (weighted by word count) and merge the most frequent one, ties
going to the smallest (a, b) pair of strings, until the vocabulary (5
special tokens + 256 byte symbols + merges) reaches VOCAB or no pair occurs
twice.

Usage: /usr/bin/python3 gen_bpe_train_golden.py DATA_DIR > bpe_train_golden.json
"""
import collections
import gzip
import json
import sys

import re

DATA = sys.argv[1]
SENTENCES = 1500
VOCAB = 5 + 256 + 300

PAT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""", re.ASCII)


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


def main():
    b2u = bytes_to_unicode()
    with gzip.open(DATA + "/unlabeled/wiki.txt.gz", "rt", encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.isascii()][:SENTENCES]
    counts = collections.Counter()
    for s in lines:
        for w in PAT.findall(s):
            counts[w] += 1
    words = {w: [b2u[b] for b in w.encode("utf-8")] for w in counts}
    size = 5 + 256
    merges = []
    while size < VOCAB:
        pairs = collections.Counter()
        for w, syms in words.items():
            for a, b in zip(syms, syms[1:]):
                pairs[(a, b)] += counts[w]
        if not pairs:
            break
        best = max(pairs.values())
        if best < 2:
            break
        a, b = min(p for p, c in pairs.items() if c == best)
        merges.append([a, b])
        for w, syms in words.items():
            out, i = [], 0
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            words[w] = out
        size += 1
    json.dump({"sentences": SENTENCES, "vocab_size": VOCAB, "merges": merges}, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


main()
