"""Cross-check of `randnla rsvd` (portable backend on the host) against scikit-learn's randomized_svd and LAPACK's
exact SVD (numpy) on small matrices: the same singular values and subspaces to the accuracy the
theory allows. Usage: crosscheck_sklearn.py RANDNLA"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from sklearn.utils.extmath import randomized_svd

TOOL = sys.argv[1]
failures = []


def check(label, ok, detail):
    print(("PASS " if ok else "FAIL ") + label + ": " + detail)
    if not ok:
        failures.append(label)


rng = np.random.default_rng(2026)
for m, n, decay in [(300, 200, 0.8), (500, 120, 0.6), (250, 250, 0.9)]:
    k, q = 10, 2
    u, _ = np.linalg.qr(rng.standard_normal((m, n)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    sigma = decay ** np.arange(n)
    a = ((u * sigma) @ v.T).astype(np.float32)
    exact = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "a.npy")
        np.save(path, np.asfortranarray(a) if m == 500 else a)  # both memory orders
        out = os.path.join(d, "out")
        subprocess.run([TOOL, "rsvd", "--input", path, "--rank", str(k), "--power-iterations", str(q),
                        "--backend", "host", "--output", out], check=True, capture_output=True)
        U, S, V = (np.load(os.path.join(out, f)) for f in ("U.npy", "S.npy", "V.npy"))
    Us, Ss, Vts = randomized_svd(a.astype(np.float64), k, n_oversamples=10, n_iter=q, random_state=0)
    S = S.ravel()
    rel_exact = np.max(np.abs(S - exact[:k]) / exact[:k])
    rel_sklearn = np.max(np.abs(S - Ss) / Ss)
    # Bound for FP32 data and a rank-k sketch with q = 2 power iterations on this spectrum:
    # (sigma_{k+p+1} / sigma_k)^(2q+1) relative, plus FP32 rounding.
    bound = (decay ** 11) ** (2 * q + 1) + 1e-5
    check("%dx%d sigma vs LAPACK" % (m, n), rel_exact <= bound, "max rel diff %.2e (bound %.2e)" % (rel_exact, bound))
    check("%dx%d sigma vs scikit-learn" % (m, n), rel_sklearn <= 2 * bound, "max rel diff %.2e" % rel_sklearn)
    # Subspaces: the cosines of the principal angles between our U and scikit-learn's.
    cos = np.linalg.svd(U.astype(np.float64).T @ Us, compute_uv=False)
    check("%dx%d range(U) vs scikit-learn" % (m, n), 1 - cos.min() < 1e-4, "1 - min cos %.2e" % (1 - cos.min()))
    resid = np.linalg.norm(a - (U * S) @ V.T) / np.linalg.norm(a)
    resid_sk = np.linalg.norm(a - (Us * Ss) @ Vts) / np.linalg.norm(a)
    check("%dx%d residual" % (m, n), resid <= 1.01 * resid_sk + 1e-6, "ours %.4e, scikit-learn %.4e" % (resid, resid_sk))

print("%d passed, %d failed" % (4 * 3 - len(failures), len(failures)))
sys.exit(1 if failures else 0)
