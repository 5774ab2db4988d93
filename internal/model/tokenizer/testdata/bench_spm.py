#!/usr/bin/python3
"""Times python sentencepiece (C++ behind a Python call per sentence, and
one call for the whole list) encoding the golden sentences with
spm/t5like.model: the reference for BenchmarkSentencePieceEncode.

    /usr/bin/python3 bench_spm.py
"""
import gzip
import json
import os
import time

import sentencepiece as spm

HERE = os.path.dirname(os.path.abspath(__file__))
texts = []
with gzip.open(os.path.join(HERE, "spm", "golden.jsonl.gz"), "rt", encoding="utf-8") as f:
    for line in f:
        r = json.loads(line)
        if r["model"] == "t5like":
            texts.append(r["text"])
size = sum(len(t.encode("utf-8")) for t in texts)
m = spm.SentencePieceProcessor(model_file=os.path.join(HERE, "spm", "t5like.model"))
for name, run in [("per sentence", lambda: [m.encode(t) for t in texts]),
                  ("one list call, 1 thread", lambda: m.encode(texts, num_threads=1))]:
    times = []
    for _ in range(10):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    best, mean = min(times), sum(times) / len(times)
    print(f"{name}: best {best * 1e3:.2f} ms, mean {mean * 1e3:.2f} ms for {len(texts)} sentences; "
          f"best {len(texts) / best:.0f} sentences/s, {size / best / 1e6:.2f} MB/s")
