#!/usr/bin/python3
"""Golden data for the Go SentencePiece Unigram tokenizer (sentencepiece.go).

Run with Debian's python3-sentencepiece (0.1.97 here):

    REPRO_DATA_DIR=/work/shared/data /usr/bin/python3 gen_spm_golden.py

It trains two small unigram models on the local corpora (Wikipedia
sentences, Brown, STS-B train) and writes, for thousands of sentences
(STS12-16 test text plus hand-written Unicode-heavy lines), the ids
python sentencepiece produces and its decoding of them:

  spm/t5like.model    T5's layout: pad=0 eos=1 unk=2, no bos, nmt_nfkc
                      (the default normaliser, with its precompiled
                      charsmap), add_dummy_prefix, remove_extra_whitespaces.
  spm/bytefb.model    byte_fallback, identity normalisation, no extra
                      whitespace removal, user-defined symbols: exercises
                      the paths T5 does not.
  spm/t5like.tokenizer.json.gz
                      the t5like model written in Hugging Face tokenizers'
                      layout (Unigram model; Precompiled normaliser,
                      Metaspace pre-tokenizer), as transformers' converter
                      writes T5's tokenizer.json, without the 100 sentinels
                      (the Go side appends them either way).
  spm/golden.jsonl.gz rows {"model", "text", "ids", "decoded"}.
"""
import base64
import gzip
import io
import json
import os
import random
import sys

import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "spm")
DATA = os.environ.get("REPRO_DATA_DIR", "/work/shared/data")


def read_tsv_sentences(path):
    out = []
    with open(path, encoding="utf-8") as f:
        next(f)
        for line in f:
            parts = line.rstrip("\n").split("\t")
            out.extend(parts[1:3])
    return out


def training_corpus():
    lines = []
    with gzip.open(os.path.join(DATA, "unlabeled", "wiki.txt.gz"), "rt", encoding="utf-8") as f:
        lines.extend(l.strip() for l in f if l.strip())
    with gzip.open(os.path.join(DATA, "brown", "brown.jsonl.gz"), "rt", encoding="utf-8") as f:
        for l in f:
            doc = json.loads(l)
            for s in doc["sentences"]:
                lines.append(" ".join(s["tokens"]))
    lines.extend(read_tsv_sentences(os.path.join(DATA, "sts", "STSB", "train.tsv")))
    return lines


UNICODE = [
    "Café naïve résumé coöperate façade jalapeño Ångström",
    "ﬁnance ﬂuﬀy oﬃce ﬀ ﬃ ﬄ ﬅ ﬆ",  # ligatures NFKC expands
    "ＦＵＬＬ－ＷＩＤＴＨ　ｔｅｘｔ　１２３！？",  # full-width + ideographic space
    "ｶﾀｶﾅ ﾊﾝｶｸ ﾃﾞｽ",  # half-width katakana (NFKC composes the voiced mark)
    "① ② ⑩ ⑳ ㈠ ㊤ ㎏ ㎞ ㏄ ℃ ℉ № ™ ℡ Ⅻ ⅷ ½ ¼ ¾ ⁴ ₂ x² H₂O",
    "ℌ𝔢𝔩𝔩𝔬 𝐁𝐨𝐥𝐝 𝘪𝘵𝘢𝘭𝘪𝘤 𝟙𝟚𝟛",  # mathematical alphanumerics
    "東京は日本の首都です。北京是中国的首都。",
    "서울은 한국의 수도입니다. ㄱㄴㄷ ᄀᄁ",
    "Москва — столица России. Ελλάδα Αθήνα.",
    "مرحبا بالعالم  שלום עולם",
    "emoji 😀😃 👍🏽 👨‍👩‍👧 🇫🇷 ❤️ ☕",
    "tabs\tand\tnewlines\nand  double  spaces   and\u00a0nbsp\u2009thin\u200bzero\u3000ideo",
    "   leading and trailing whitespace   ",
    "\u00a0\u00a0only nbsp\u00a0\u00a0",
    "e\u0301 combining acute, A\u030a ring, n\u0303 tilde",
    "“curly quotes” ‘single’ — em dash – en dash … ellipsis",
    "soft\u00adhyphen zero\u200cwidth\u200djoiner word\u2060joiner bom\ufeffhere",
    "control\u0001chars\u0007bell\u007fdel",
    "ÆØÅ æøå Œœ ß ẞ Ĳ ĳ ŉ ǆ ǅ Ǆ",
    "…‥ ‼ ⁇ ⁈ ﹖ ︙ ﹏",
    "Ｈｅｌｌｏ，　Ｗｏｒｌｄ．",
    "ｱｲｳｴｵ ｧｨｩ ｯ ｰ",
    "ﾊﾟﾋﾟﾌﾟ ｶﾞｷﾞｸﾞ",
    "Ⓐⓑⓒ ⒜⒝ ⑴⑵ ⒈⒉",
    "µ Ω K Å ǈ ﬀ ſt",
    "",
    " ",
    "a",
    "▁already▁escaped▁",
    "<unk> <s> </s> <pad> literal specials",
    "x" * 300,
    "1234567890 3.14159 1,000,000 $5.99 €10 £3 ¥100",
    "https://example.com/path?query=1&x=y#frag user@example.org",
    "C++ C# F# .NET node.js __init__ --flag -x",
    "Ⅰ Ⅱ Ⅲ ⅰⅱⅲ",
    "ヴァ ガ ぱ ゔ",
    "𠮷野家 𩸽",
    "ﾟﾞ",
    "\u2028line separator\u2029paragraph",
    "\u3000\u3000全角スペース\u3000",
    "dz ǳ Ǳ ǲ",
    "ÀÁÂÃÄÅ àáâãäå ÈÉÊË ÌÍÎÏ ÒÓÔÕÖ ÙÚÛÜ Ýÿ Ññ Çç",
    "Ǖǖ Ǘǘ Ǚǚ Ǜǜ ǟ ǡ ǣ",
    "ὈΔΥΣΣΕΥΣ ᾿ ῾ ΐ ΰ",
    "ℹ︎ ⚠️ ✔︎",
]


def unicode_sentences(rng, base):
    out = list(UNICODE)
    # Mix Unicode fragments into real sentences at random places.
    frags = [u for u in UNICODE if u and len(u) < 80]
    for s in base[:600]:
        words = s.split(" ")
        i = rng.randrange(len(words) + 1)
        f = rng.choice(frags)
        j = rng.randrange(len(f) + 1)
        k = min(len(f), j + rng.randrange(1, 12))
        words.insert(i, f[j:k])
        out.append(" ".join(words))
    return out


def golden_sentences(rng):
    out = []
    for task in ["STS12", "STS13", "STS14", "STS15", "STS16"]:
        d = os.path.join(DATA, "sts", task)
        for name in sorted(os.listdir(d)):
            if name.endswith(".tsv"):
                out.extend(read_tsv_sentences(os.path.join(d, name)))
    out.extend(read_tsv_sentences(os.path.join(DATA, "sts", "SICKR", "test.tsv")))
    out = sorted(set(out))
    rng.shuffle(out)
    return out[:3000]


def fields(buf):
    """Minimal protobuf wire reader (python3-protobuf is not installed):
    yields (field number, wire type, value) of one message."""
    i = 0

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v

    while i < len(buf):
        key = varint()
        num, wt = key >> 3, key & 7
        if wt == 0:
            yield num, wt, varint()
        elif wt == 1:
            yield num, wt, buf[i:i + 8]
            i += 8
        elif wt == 2:
            n = varint()
            yield num, wt, buf[i:i + n]
            i += n
        elif wt == 5:
            yield num, wt, buf[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d" % wt)


def precompiled_charsmap(model):
    # ModelProto.normalizer_spec = 3; NormalizerSpec.precompiled_charsmap = 2.
    for num, _, v in fields(model):
        if num == 3:
            for n2, _, v2 in fields(v):
                if n2 == 2:
                    return bytes(v2)
    return b""


def tokenizer_json(model_path, vocab_pieces):
    """HF tokenizers' layout of a Unigram model, as transformers'
    SpmConverter writes T5's (normaliser Precompiled + collapse spaces,
    Metaspace pre-tokenizer and decoder, eos appended)."""
    m = spm.SentencePieceProcessor(model_file=model_path)
    with open(model_path, "rb") as f:
        charsmap = precompiled_charsmap(f.read())
    vocab = [[m.id_to_piece(i), m.get_score(i)] for i in range(m.get_piece_size())]
    added = []
    for i in range(m.get_piece_size()):
        if m.is_control(i) or m.is_unknown(i):
            added.append({"id": i, "content": m.id_to_piece(i), "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True})
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        ]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                                    {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "special_tokens": {"</s>": {"id": "</s>", "ids": [m.eos_id()], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True},
        "model": {"type": "Unigram", "unk_id": m.unk_id(), "vocab": vocab, "byte_fallback": False},
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = random.Random(15)
    corpus = training_corpus()
    rng.shuffle(corpus)
    buf = "\n".join(corpus).encode("utf-8")
    common = dict(model_type="unigram", input_sentence_size=0, num_threads=2, minloglevel=2,
                  max_sentence_length=8192)
    t5 = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus), model_writer=t5, vocab_size=4000,
                                   pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                                   normalization_rule_name="nmt_nfkc", **common)
    with open(os.path.join(OUT, "t5like.model"), "wb") as f:
        f.write(t5.getvalue())
    fb = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus[:6000]), model_writer=fb, vocab_size=1000,
                                   pad_id=0, eos_id=1, unk_id=2, bos_id=3, byte_fallback=True,
                                   normalization_rule_name="identity", remove_extra_whitespaces=False,
                                   user_defined_symbols=["<sep>", "[MASK]", "C++"], **common)
    with open(os.path.join(OUT, "bytefb.model"), "wb") as f:
        f.write(fb.getvalue())

    with gzip.open(os.path.join(OUT, "t5like.tokenizer.json.gz"), "wt", encoding="utf-8", compresslevel=9) as f:
        json.dump(tokenizer_json(os.path.join(OUT, "t5like.model"), None), f, ensure_ascii=False)

    sents = golden_sentences(rng)
    sents += unicode_sentences(rng, sents)
    rows = 0
    with gzip.open(os.path.join(OUT, "golden.jsonl.gz"), "wt", encoding="utf-8", compresslevel=9) as f:
        for name in ["t5like", "bytefb"]:
            m = spm.SentencePieceProcessor(model_file=os.path.join(OUT, name + ".model"))
            for s in sents:
                ids = m.encode(s)
                f.write(json.dumps({"model": name, "text": s, "ids": ids, "decoded": m.decode(ids)},
                                   ensure_ascii=False) + "\n")
                rows += 1
    print(f"{rows} golden rows, {len(sents)} sentences; sentencepiece {spm.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
