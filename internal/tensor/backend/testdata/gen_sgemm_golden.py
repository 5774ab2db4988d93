"""Golden sgemm values from NumPy (an independent implementation).

Run with Debian's python3-numpy:  /usr/bin/python3 gen_sgemm_golden.py > sgemm_golden.json
Each case stores row-major operands as float32 values (with leading
dimensions wider than the rows), and the expected C computed in float64 from
those float32 values: C = alpha*op(A)@op(B) + beta*C0.
"""
import json
import numpy as np

rng = np.random.default_rng(20240601)


def f32(x):
    # Shortest decimal that reads back as the same float32.
    return [float(repr(np.float32(v))) for v in x.ravel()]


cases = []
# Odd sizes around the 6x16 tile, and a k spanning two 256-deep k slices.
shapes = [(1, 1, 1), (3, 5, 7), (6, 16, 33), (17, 31, 9), (7, 20, 270), (25, 18, 40)]
for idx, (m, n, k) in enumerate(shapes):
    for ta in (False, True):
        for tb in (False, True):
            alpha, beta = [(1.0, 0.0), (0.5, 1.0), (-2.0, 0.25)][(idx + ta + 2 * tb) % 3]
            pad = (idx + ta + tb) % 3
            ar, ac = (k, m) if ta else (m, k)
            br, bc = (n, k) if tb else (k, n)
            lda, ldb, ldc = ac + pad, bc + pad, n + pad
            a = rng.standard_normal((ar, lda)).astype(np.float32)
            b = rng.standard_normal((br, ldb)).astype(np.float32)
            c0 = rng.standard_normal((m, ldc)).astype(np.float32)
            opa = a[:, :ac].astype(np.float64)
            opb = b[:, :bc].astype(np.float64)
            opa = opa.T if ta else opa
            opb = opb.T if tb else opb
            want = c0.astype(np.float64).copy()
            want[:, :n] = alpha * (opa @ opb) + beta * want[:, :n]
            cases.append(dict(transA=ta, transB=tb, m=m, n=n, k=k, alpha=alpha, beta=beta,
                              lda=lda, ldb=ldb, ldc=ldc,
                              a=f32(a), b=f32(b), c=f32(c0), want=[float(x) for x in want.ravel()]))
print(json.dumps({"generator": "numpy " + np.__version__, "cases": cases}))
