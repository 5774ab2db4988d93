#!/usr/bin/python3
"""Independent RAKE reference for internal/text/rake (golden values).

Reimplements, from Rose et al. (2010) and rake-nltk's metric
DEGREE_TO_FREQUENCY_RATIO, the scoring that rake.go implements, with a
regular-expression tokenizer written independently of the Go one:
  candidates = maximal runs of non-stopword words (SMART list, ../smart.txt),
  deg(w) = sum over candidate occurrences of sum over co-occurring words
           (itself included) -- rake-nltk's co-occurrence graph row sum,
  freq(w) = occurrences, score(w) = deg/freq, phrase = sum of word scores,
  distinct phrases ranked by score, ties by first occurrence.

Usage: /usr/bin/python3 rake_golden.py DATA_DIR > golden.jsonl
Input: the first 60 sentence1 of STS-B test, STS14 headlines, SICK-R test
and STS12 MSRpar (real sentences of the kind PaSeR masks), plus the abstract
that Rose et al. use as their worked example (repeated words exercise the
degree and frequency counts).
"""
import collections
import itertools
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STOP = set()
with open(os.path.join(HERE, "..", "smart.txt"), encoding="utf-8") as f:
    for line in f:
        line = line.strip()
        if line and not line.startswith("#"):
            STOP.add(line)

AL = r"[^\W_]"
WORD = AL + r"+(?:(?:['\u2019](?=[^\W\d_])|-(?=" + AL + r")|(?<=\d)[.,](?=\d))" + AL + r"+)*"
TOKEN = re.compile("(" + WORD + r")|(\S)")


def tokenize(s):
    return [(m.group(0), m.group(1) is not None) for m in TOKEN.finditer(s)]


def norm(w):
    return w.lower().replace("\u2019", "'")


def rake(s):
    toks = tokenize(s)
    phrases, cur = [], []
    for tok, is_word in toks:
        if is_word and norm(tok) not in STOP:
            cur.append(tok)
        else:
            if cur:
                phrases.append(cur)
            cur = []
    if cur:
        phrases.append(cur)
    graph = collections.defaultdict(lambda: collections.defaultdict(int))
    freq = collections.Counter()
    for p in phrases:
        ws = [norm(w) for w in p]
        freq.update(ws)
        for w, c in itertools.product(ws, ws):
            graph[w][c] += 1
    degree = {w: sum(graph[w].values()) for w in graph}
    seen, ranked = {}, []
    for p in phrases:
        key = " ".join(norm(w) for w in p)
        if key in seen:
            continue
        score = 0.0
        for w in key.split(" "):
            score += degree[w] / freq[w]
        seen[key] = True
        ranked.append({"key": key, "text": " ".join(p), "score": score})
    ranked.sort(key=lambda r: -r["score"])  # stable: ties keep first occurrence
    return ranked


ROSE = ("Compatibility of systems of linear constraints over the set of natural numbers. "
        "Criteria of compatibility of a system of linear Diophantine equations, strict inequations, "
        "and nonstrict inequations are considered. Upper bounds for components of a minimal set of "
        "solutions and algorithms of construction of minimal generating sets of solutions for all "
        "types of systems are given. These criteria and the corresponding algorithms for constructing "
        "a minimal supporting set of solutions can be used in solving all the considered types of "
        "systems and systems of mixed types.")


def first_sentences(path, n):
    out = []
    with open(path, encoding="utf-8") as f:
        next(f)
        for line in f:
            out.append(line.rstrip("\n").split("\t")[1])
            if len(out) == n:
                break
    return out


def main():
    data = sys.argv[1]
    sents = []
    for rel in ("sts/STSB/test.tsv", "sts/STS14/headlines.tsv", "sts/SICKR/test.tsv",
                "sts/STS12/MSRpar.tsv"):
        sents += first_sentences(os.path.join(data, rel), 60)
    sents.append(ROSE)
    for s in sents:
        print(json.dumps({"sentence": s, "phrases": rake(s)}, ensure_ascii=False))


if __name__ == "__main__":
    main()
