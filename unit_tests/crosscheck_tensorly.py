"""Cross-check of `randnla tucker` (portable backend on the host) against TensorLy's `tucker`
(HOOI from an HOSVD start) on small 3-way and 4-way tensors of low multilinear rank plus noise:
the reconstruction error of our core and factors, measured here in FP64 with TensorLy's
tucker_to_tensor, within 1.1x of TensorLy's, and the factors orthonormal.
Usage: crosscheck_tensorly.py RANDNLA"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import tensorly as tl
from tensorly.decomposition import tucker

TOOL = sys.argv[1]
failures = []
checks = 0


def check(label, ok, detail):
    global checks
    checks += 1
    print(("PASS " if ok else "FAIL ") + label + ": " + detail)
    if not ok:
        failures.append(label)


def low_rank_plus_noise(rng, dims, ranks, noise):
    t = rng.standard_normal(ranks)
    for mode, (i, j) in enumerate(zip(dims, ranks)):
        m = rng.standard_normal((i, j)) * (0.7 ** np.arange(j))  # decaying mode spectra
        t = tl.tenalg.mode_dot(t, m, mode)
    t /= np.linalg.norm(t)
    return t + noise * rng.standard_normal(dims) / np.sqrt(t.size)


rng = np.random.default_rng(2026)
for dims, true_ranks, ranks in [((60, 40, 30), (12, 10, 8), (8, 6, 5)), ((20, 16, 14, 12), (6, 5, 5, 4), (5, 4, 4, 3))]:
    a = low_rank_plus_noise(rng, dims, true_ranks, 1e-3).astype(np.float32)
    label = "x".join(map(str, dims)) + " ranks " + ",".join(map(str, ranks))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "a.npy")
        np.save(path, np.asfortranarray(a.reshape(dims[0], -1, order="F")))  # first index fastest
        out = os.path.join(d, "out")
        subprocess.run([TOOL, "tucker", "--input", path, "--shape", ",".join(map(str, dims[1:])),
                        "--ranks", ",".join(map(str, ranks)), "--oversampling", "5", "--power-iterations", "1",
                        "--backend", "host", "--output", out], check=True, capture_output=True)
        core = np.load(os.path.join(out, "core.npy")).astype(np.float64).reshape(ranks, order="F")
        factors = [np.load(os.path.join(out, "Q%d.npy" % (n + 1))).astype(np.float64) for n in range(len(dims))]
    a64 = a.astype(np.float64)
    ours = np.linalg.norm(a64 - tl.tucker_to_tensor((core, factors))) / np.linalg.norm(a64)
    theirs_core, theirs_factors = tucker(a64, rank=list(ranks), init="svd", n_iter_max=100, tol=1e-10)
    theirs = np.linalg.norm(a64 - tl.tucker_to_tensor((theirs_core, theirs_factors))) / np.linalg.norm(a64)
    check(label + " error vs TensorLy", ours <= 1.1 * theirs, "ours %.4e, TensorLy %.4e" % (ours, theirs))
    loss = max(np.linalg.norm(q.T @ q - np.eye(q.shape[1])) for q in factors)
    check(label + " factors orthonormal", loss < 1e-5, "max ||Q^T Q - I||_F %.2e" % loss)

print("%d passed, %d failed" % (checks - len(failures), len(failures)))
sys.exit(1 if failures else 0)
