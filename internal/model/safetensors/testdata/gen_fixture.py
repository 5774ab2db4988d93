#!/usr/bin/python3
"""Writes safetensors fixtures by hand (struct + json), following the format
spec and the reference writer's layout: compact JSON header, __metadata__
first, tensors in name order, header padded with spaces to a multiple of 8.

Outputs (in the current directory):
  f32.safetensors    F32 tensors + metadata, byte layout of the reference writer
  mixed.safetensors  F16, BF16, F64 and F32 tensors (values exactly representable
                     or rounded as documented in expected.json)
  expected.json      every tensor's shape and float32 values
"""
import json
import math
import struct


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def pack(dtype, vals):
    if dtype == "F32":
        return b"".join(struct.pack("<f", v) for v in vals)
    if dtype == "F64":
        return b"".join(struct.pack("<d", v) for v in vals)
    if dtype == "F16":
        return b"".join(struct.pack("<e", v) for v in vals)
    if dtype == "BF16":  # truncate float32 bits (values chosen to be exact)
        return b"".join(struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0])[2:] for v in vals)
    raise ValueError(dtype)


def decoded(dtype, vals):
    if dtype == "F16":
        return [struct.unpack("<e", struct.pack("<e", v))[0] for v in vals]
    if dtype == "BF16":
        return [struct.unpack("<f", b"\0\0" + struct.pack("<f", v)[2:])[0] for v in vals]
    return [f32(v) for v in vals]


def write(path, tensors, metadata):
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    blobs = []
    off = 0
    for name in sorted(tensors):
        dtype, shape, vals = tensors[name]
        b = pack(dtype, vals)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


f32_tensors = {
    "bert.embeddings.word_embeddings.weight": ("F32", [3, 2], [0.1, -0.2, 3.5, 1e-8, -7.25, 42.0]),
    "bert.encoder.layer.0.attention.self.query.bias": ("F32", [2], [0.5, -0.5]),
    "scalar": ("F32", [], [2.0]),
    "empty": ("F32", [0, 4], []),
}
write("f32.safetensors", f32_tensors, {"format": "pt", "note": "fixture"})

mixed = {
    "half": ("F16", [2, 3], [1.0, -2.5, 0.333251953125, 65504.0, 6.103515625e-05, 5.960464477539063e-08]),
    "brain": ("BF16", [4], [1.0, -3.140625, 256.0, 0.0078125]),
    "double": ("F64", [2], [math.pi, -1e-3]),
    "single": ("F32", [1, 1], [1.5]),
}
write("mixed.safetensors", mixed, None)

expected = {}
for src in (f32_tensors, mixed):
    for name, (dtype, shape, vals) in src.items():
        expected[name] = {"dtype": dtype, "shape": shape, "values": decoded(dtype, vals)}
with open("expected.json", "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
