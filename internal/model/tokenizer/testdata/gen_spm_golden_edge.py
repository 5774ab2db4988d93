#!/usr/bin/python3
"""Edge-case golden data for the Go SentencePiece tokenizer, from the
committed models (run gen_spm_golden.py first):

    /usr/bin/python3 gen_spm_golden_edge.py

Inputs are bytes (base64 in the file) so that invalid UTF-8 can be tested:
truncated and stray continuation bytes, user-defined symbols, runs of
unknown characters, whitespace-only text, literal control pieces, and 1000
seeded random mixes of ASCII, accented, CJK, emoji, whitespace, NFKC-mapped
characters and raw bytes. Rows {"model", "text_b64", "ids", "decoded"}
go to spm/golden_edge.jsonl.gz.
"""
import base64
import gzip
import json
import os
import random

import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "spm")

FIXED = [
    b"ab\xffc\xe2\x82 d", b"\x80\x80\x80", b"\xf0\x9f\x98", b"ok \xc3", b"\xed\xa0\x80 surrogate",
    "x <sep> [MASK]C++ y".encode(), "<sep><sep>[MASK][MASK]".encode(), "C++C++ c++".encode(),
    "東京都庁舎 北京 서울특별시 עברית".encode(), "   ".encode(), "\t\n\r".encode(), "\u3000\u00a0".encode(),
    "<s></s><pad><unk>".encode(), "▁▁▁".encode(), " ▁ a ▁b".encode(), "a\u0301\u0301\u0301".encode(),
    "ﷺ ﷻ ㍿ ㌀ ﬀﬁﬂ".encode(), "\u0000nul\u0000".encode(), "\ufeff bom".encode(),
]
POOL = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?'\"()-")
        + list("éèêëàâäîïôöùûüçñåæøœß") + list("日本語中文한국어ｶﾀｶﾅ") + ["😀", "👍🏽", "🇫🇷", "❤️"]
        + [" ", " ", " ", "  ", "\t", "\u00a0", "\u3000", "\u200b"] + list("ﬁﬂ①②㎏™½ＡＢｃ１２"))


def random_inputs(rng, n):
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(0, 30)):
            if rng.random() < 0.05:
                parts.append(bytes([rng.randint(0x80, 0xFF)]))
            else:
                parts.append(rng.choice(POOL).encode())
        out.append(b"".join(parts))
    return out


def main():
    rng = random.Random(1515)
    inputs = FIXED + random_inputs(rng, 1000)
    with gzip.open(os.path.join(OUT, "golden_edge.jsonl.gz"), "wt", encoding="utf-8", compresslevel=9) as f:
        for name in ["t5like", "bytefb"]:
            m = spm.SentencePieceProcessor(model_file=os.path.join(OUT, name + ".model"))
            for b in inputs:
                ids = m.encode(b)
                f.write(json.dumps({"model": name, "text_b64": base64.b64encode(b).decode(), "ids": ids,
                                    "decoded": m.decode(ids)}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
