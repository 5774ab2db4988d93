#!/usr/bin/python3
"""Digit-heavy golden data for the Go SentencePiece tokenizer: exact score
ties in the Viterbi lattice. Run with Debian's python3-sentencepiece
(0.1.97), after gen_spm_golden.py:

    /usr/bin/python3 gen_spm_golden_digits.py

sentencepiece's EncodeOptimized adds a piece's score to the best score so
far in double precision and compares that with the float32 score stored
for the end position, so of two paths whose float32 sums are equal the
later one can still win ("7000": T5's vocabulary gives "▁7 00 0", a
float32 sum keeps "▁7 0 00"). Real T5 vocabularies hit such ties on
digit runs; the small models trained here rarely do, so this script also
writes spm/ties.model: the t5like model's layout (identity normaliser) with a
handful of digit pieces whose scores make "7000" such a tie (found by the
search below, in float32 arithmetic emulated with struct).

Rows {"model", "text", "ids", "pieces"} go to spm/golden_digits.jsonl.gz
for the models t5like, bytefb and ties.
"""
import gzip
import json
import os
import random
import struct

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "spm")


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def tie_scores():
    """Scores for "▁7", "0", "00" such that ▁7+0+00 and ▁7+00+0 are equal
    in float32 but the later path wins in sentencepiece's arithmetic."""
    rng = random.Random(7)
    while True:
        s7, s0, s00 = (f32(-rng.uniform(5, 10)) for _ in range(3))
        if f32(f32(s7 + s0) + s00) != f32(f32(s7 + s00) + s0):
            continue
        if f32(s7 + s00) + s0 > f32(f32(s7 + s0) + s00):
            return s7, s0, s00


def write_ties_model():
    base = pb.ModelProto()
    with open(os.path.join(OUT, "t5like.model"), "rb") as f:
        base.ParseFromString(f.read())
    m = pb.ModelProto()
    m.CopyFrom(base)
    del m.pieces[:]
    # Identity normalisation keeps the file small (the ties are the
    # lattice's, not the normaliser's); dummy prefix and whitespace
    # folding stay as T5 has them.
    m.normalizer_spec.name = "identity"
    m.normalizer_spec.precompiled_charsmap = b""
    s7, s0, s00 = tie_scores()

    def add(piece, score, typ=pb.ModelProto.SentencePiece.NORMAL):
        p = m.pieces.add()
        p.piece, p.score, p.type = piece, score, typ

    add("<pad>", 0, pb.ModelProto.SentencePiece.CONTROL)
    add("</s>", 0, pb.ModelProto.SentencePiece.CONTROL)
    add("<unk>", 0, pb.ModelProto.SentencePiece.UNKNOWN)
    add("▁7", s7)
    add("0", s0)
    add("00", s00)
    add("▁", -12.0)
    add("7", -9.0)
    # Every other digit and a little punctuation, as pieces and with "▁".
    for i, d in enumerate("12345689"):
        add(d, -9.5 - i / 8)
        add("▁" + d, -8.5 - i / 8)
    add("▁0", -8.75)
    for i, c in enumerate(",.-$%:/"):
        add(c, -10.0 - i / 16)
    with open(os.path.join(OUT, "ties.model"), "wb") as f:
        f.write(m.SerializeToString())


FIXED = [
    "7000", "7000 7000", "70000", "700000", "7000000", "7,000", "7.000", "$7000", "7000s", "in 7000 BC",
    "07000", "77000", "7 000 000", "7000-7000", "70 700 7000 70000", "1700 2700 3700 7007 7070 7700",
    "0", "00", "000", "0000", "00000", "000000", "0000000", "00000000",
    "1000", "2000", "10000", "100000", "1000000", "1,000,000", "3.14159", "2.718281828", "1/2", "50%",
    "1999", "2000", "2001", "2010", "2023-01-01", "12:00", "09:30:00", "+1 (555) 010-7000", "555-0100",
    "Call 911 or 112.", "Room 101, floor 7.", "It cost $1,234.56 in 1984.", "ISBN 978-0-306-40615-7",
    "The 7000 series sold 70,000 units in 2007.", "Between 1900 and 2000, 7 of 10 grew 700%.",
]


def generated(rng, n):
    out = []
    for _ in range(n):
        kind = rng.randrange(5)
        if kind == 0:  # a bare digit run, rich in 0 and 7
            out.append("".join(rng.choice("0000777123") for _ in range(rng.randint(1, 14))))
        elif kind == 1:  # a year or a round number
            out.append(str(rng.choice([rng.randint(1000, 2099), rng.randint(1, 99) * 10 ** rng.randint(1, 7)])))
        elif kind == 2:  # grouped thousands or a decimal
            v = rng.randint(0, 10 ** rng.randint(1, 9))
            out.append(f"{v:,}" if rng.random() < 0.5 else f"{v / 100:.2f}")
        elif kind == 3:  # digits among words
            words = ["in", "the", "year", "cost", "km", "units", "of", "a", "7", "0"]
            parts = [rng.choice(words) if rng.random() < 0.5 else str(rng.randint(0, 70000)) for _ in range(rng.randint(2, 8))]
            out.append(" ".join(parts))
        else:  # a phone number or a date
            out.append(rng.choice([f"{rng.randint(100, 999)}-{rng.randint(0, 9999):04d}",
                                   f"{rng.randint(1900, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"]))
    return out


def main():
    write_ties_model()
    inputs = FIXED + generated(random.Random(7000), 1500)
    with gzip.open(os.path.join(OUT, "golden_digits.jsonl.gz"), "wt", encoding="utf-8", compresslevel=9) as f:
        for name in ["t5like", "bytefb", "ties"]:
            m = spm.SentencePieceProcessor(model_file=os.path.join(OUT, name + ".model"))
            for text in inputs:
                ids = m.encode(text)
                f.write(json.dumps({"model": name, "text": text, "ids": ids,
                                    "pieces": [m.id_to_piece(i) for i in ids]}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
