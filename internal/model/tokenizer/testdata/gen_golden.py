#!/usr/bin/python3
"""Golden WordPiece tokenisations for tokenizer_test.go.

An independent re-implementation of transformers' BertTokenizer (slow,
tokenization_bert.py: BasicTokenizer + WordpieceTokenizer, with the added-token
split of PreTrainedTokenizer.tokenize for special tokens), written from the
reference logic, run over real STS / NLI sentences plus edge cases.

Usage: /usr/bin/python3 gen_golden.py DATA_DIR > wordpiece_golden.jsonl
"""
import json
import sys
import unicodedata

DATA = sys.argv[1]
SPECIALS = ["[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"]


def load_vocab(path):
    vocab = {}
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            vocab[line.rstrip("\n")] = i
    return vocab


def is_whitespace(c):
    if c in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(c) == "Zs"


def is_control(c):
    if c in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(c).startswith("C")


def is_punct(c):
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def basic(text):
    out = []
    for c in text:
        cp = ord(c)
        if cp == 0 or cp == 0xFFFD or is_control(c):
            continue
        if is_whitespace(c):
            out.append(" ")
        elif is_cjk(cp):
            out.append(" " + c + " ")
        else:
            out.append(c)
    text = unicodedata.normalize("NFC", "".join(out))
    words = []
    for tok in text.strip().split():
        tok = tok.lower()
        tok = "".join(c for c in unicodedata.normalize("NFD", tok) if unicodedata.category(c) != "Mn")
        cur = []
        pieces = []
        for c in tok:
            if is_punct(c):
                if cur:
                    pieces.append("".join(cur))
                    cur = []
                pieces.append(c)
            else:
                cur.append(c)
        if cur:
            pieces.append("".join(cur))
        words.extend(pieces)
    return " ".join(words).split()


def wordpiece(word, vocab):
    chars = list(word)
    if len(chars) > 100:
        return ["[UNK]"]
    out = []
    start = 0
    while start < len(chars):
        end = len(chars)
        cur = None
        while start < end:
            sub = "".join(chars[start:end])
            if start > 0:
                sub = "##" + sub
            if sub in vocab:
                cur = sub
                break
            end -= 1
        if cur is None:
            return ["[UNK]"]
        out.append(cur)
        start = end
    return out


def split_specials(text):
    segs = []
    while text:
        best = None
        for s in SPECIALS:
            i = text.find(s)
            if i >= 0 and (best is None or i < best[0]):
                best = (i, s)
        if best is None:
            segs.append((text, False))
            break
        i, s = best
        if i > 0:
            segs.append((text[:i], False))
        segs.append((s, True))
        text = text[i + len(s):]
    return segs


def encode(text, vocab):
    pieces = []
    for seg, lit in split_specials(text):
        if lit:
            pieces.append(seg)
            continue
        for w in basic(seg):
            pieces.extend(wordpiece(w, vocab))
    return [vocab["[CLS]"]] + [vocab.get(p, vocab["[UNK]"]) for p in pieces] + [vocab["[SEP]"]]


def tsv_sentences(rel, cols, every, limit):
    out = []
    with open(f"{DATA}/{rel}", encoding="utf-8") as f:
        next(f)
        for i, line in enumerate(f):
            if i % every:
                continue
            fields = line.rstrip("\n").split("\t")
            for c in cols:
                out.append(fields[c])
            if len(out) >= limit:
                break
    return out


def main():
    vocab = load_vocab(f"{DATA}/tokenizers/bert-base-uncased/vocab.txt")
    texts = []
    texts += tsv_sentences("sts/STSB/test.tsv", [1, 2], 23, 80)
    texts += tsv_sentences("sts/STS12/MSRpar.tsv", [1], 19, 40)
    texts += tsv_sentences("sts/STS14/deft-forum.tsv", [1, 2], 17, 40)
    texts += tsv_sentences("sts/STS15/answers-forums.tsv", [1], 11, 30)
    texts += tsv_sentences("sts/STS16/question-question.tsv", [1], 7, 20)
    texts += tsv_sentences("sts/SICKR/test.tsv", [1], 97, 30)
    texts += tsv_sentences("nli/mnli_dev_matched.tsv", [0, 1, 2], 31, 60)
    texts += tsv_sentences("nli/snli_test_ptbtok.tsv", [0], 41, 20)
    # Every line with a non-ASCII character from a few files, for accents.
    for rel in ["sts/STS14/deft-news.tsv", "sts/STS15/answers-forums.tsv", "nli/mnli_dev_matched.tsv",
                "sts/STS12/surprise.SMTnews.tsv"]:
        n = 0
        with open(f"{DATA}/{rel}", encoding="utf-8") as f:
            next(f)
            for line in f:
                for s in line.rstrip("\n").split("\t"):
                    if any(ord(c) > 127 for c in s) and n < 15:
                        texts.append(s)
                        n += 1
    texts += [
        "Café déjà vu: naïve coöperation, Ångström, façade — résumé!",
        "The price was $3,500.75 (approx. 3.5k) on 12/03/2015 at 10:30am.",
        "pneumonoultramicroscopicsilicovolcanoconiosis is a long word; "
        "supercalifragilisticexpialidocious too",
        "x" * 101 + " short",
        "a" * 100,
        "我爱北京天安门 and 東京 mixed with English",
        "Zero\u200bwidth, tab\there, non\u00a0breaking, ctrl\x07bell\ufffd.",
        "The [MASK] sat on the mat.[SEP] second [mask] part",
        "e-mail: someone@example.com, URL https://example.org/a_b?c=d#e",
        "İstanbul ΣΊΣΥΦΟΣ Straße ﬁnance ½ ² ™",
        "\"Quoted\" 'single' «guillemets» „low“ …ellipsis",
        "",
        "   ",
        "UPPER lower MiXeD 123abc abc123 3.14159",
    ]
    for t in texts:
        print(json.dumps({"text": t, "ids": encode(t, vocab)}, ensure_ascii=False))


main()
