"""Cross-check of `randnla pca` (portable backend on the host) against scikit-learn's exact PCA,
`sklearn.decomposition.PCA(svd_solver='full')` fitted on the same FP32 values widened to FP64 (an
FP64 reference: on FP32 input scikit-learn's own mean is off by up to 1e-4 on Fashion-MNIST, since
numpy sums axis 0 of a C-ordered float32 array in float32 row by row), through the tool's outputs:
components (k x n, signs included), 1-D singular values, explained variance and its ratio, mean.
Data: Fashion-MNIST (Debian's dataset-fashion-mnist, 60000 x 784, pixels / 255, the main job's
input) and scikit-learn's digits (1797 x 64, bundled with scikit-learn), the held-back matrix.

Tolerances, for the RSVD with q = 2 power iterations and l = k + 10 columns (Halko, Martinsson &
Tropp 2011, Sec. 10; Saibaba 2019 for the angles): the relative error of sigma_i decays as
g_i = (sigma_{l+1} / sigma_i)^(2q+1), never above the exact value (a Rayleigh-Ritz value);
the ratio's error is twice the sigma's; a component's angle to the exact one is at most
g_i / gap_i (Davis-Kahan, gap_i its relative distance to the neighbouring sigmas), checked where
that is below 0.1; each plus FP32 rounding (1e-5 relative, 1e-6 on 1 - cos). The sign of a
component is svd_flip's rule: it is checked wherever the rule decides it robustly, i.e. the
exact component's largest entry beats its second by more than twice our entries' error.
Usage: crosscheck_sklearn_pca.py RANDNLA"""
import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA

TOOL = sys.argv[1]
FASHION = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
P, Q = 10, 2
failures = []
checks = 0


def check(label, ok, detail):
    global checks
    checks += 1
    print(("PASS " if ok else "FAIL ") + label + ": " + detail)
    if not ok:
        failures.append(label)


def run_tool(path, k, out):
    subprocess.run([TOOL, "pca", "--input", path, "--rank", str(k), "--oversampling", str(P), "--power-iterations",
                    str(Q), "--exact", "off", "--backend", "host", "--output", out], check=True, capture_output=True)
    return {f: np.load(os.path.join(out, f + ".npy")) for f in
            ("components", "singular_values", "mean", "explained_variance", "explained_variance_ratio")}


def compare(name, x32, path, k):
    with tempfile.TemporaryDirectory() as d:
        r = run_tool(path, k, os.path.join(d, "out"))
    m, n = x32.shape
    sk = PCA(svd_solver="full").fit(x32.astype(np.float64))
    s = sk.singular_values_
    check(name + " shapes", r["components"].shape == (k, n) and r["mean"].shape == (n,)
          and all(r[f].shape == (k,) for f in ("singular_values", "explained_variance", "explained_variance_ratio")),
          str({f: v.shape for f, v in r.items()}))
    # mu: FP32 partial sums of 256 rows (~16 roundings) added in FP64, then rounded to FP32.
    mean_err = np.abs(r["mean"] - sk.mean_).max()
    mean_tol = 32 * 2.0 ** -24 * np.abs(sk.mean_).max()
    check(name + " mean", mean_err <= mean_tol, "max diff %.2e (tolerance %.2e)" % (mean_err, mean_tol))

    g = (s[k + P] / s[:k]) ** (2 * Q + 1)
    rel = (r["singular_values"] - s[:k]) / s[:k]
    check(name + " singular values", np.all(np.abs(rel) <= g + 1e-5) and np.all(rel <= 1e-5),
          "max rel diff %.2e, worst against its bound %.2f" % (np.abs(rel).max(), np.max(np.abs(rel) / (g + 1e-5))))
    ev_rel = np.abs(r["explained_variance"] - sk.explained_variance_[:k]) / sk.explained_variance_[:k]
    check(name + " explained variance", np.all(ev_rel <= 2 * g + 1e-5), "max rel diff %.2e" % ev_rel.max())
    ratio_rel = np.abs(r["explained_variance_ratio"] - sk.explained_variance_ratio_[:k]) / sk.explained_variance_ratio_[:k]
    check(name + " explained variance ratio", np.all(ratio_rel <= 2 * g + 1e-5), "max rel diff %.2e" % ratio_rel.max())

    ours, exact = r["components"].astype(np.float64), sk.components_[:k]
    neighbours = np.minimum(np.r_[np.inf, s[:k - 1]] - s[:k], s[:k] - s[1:k + 1]) / s[:k]
    angle_bound = g / neighbours
    dots = np.sum(ours * exact, axis=1)
    resolved = angle_bound < 0.1
    excess = (1 - np.abs(dots)) - (angle_bound ** 2 / 2 + 1e-6)
    check(name + " components (%d of %d well separated)" % (resolved.sum(), k), resolved[0] and np.all(excess[resolved] <= 0),
          "1 - |cos| " + " ".join("%.1e" % v for v in (1 - np.abs(dots))[resolved]))
    decided, wrong = 0, []
    for i in range(k):
        err = min(np.abs(ours[i] - exact[i]).max(), np.abs(ours[i] + exact[i]).max())
        top = np.sort(np.abs(exact[i]))[::-1]
        if top[0] - top[1] > 2 * err:
            decided += 1
            if dots[i] <= 0:
                wrong.append(i)
    check(name + " signs (%d of %d decided by the rule beyond the error)" % (decided, k), decided >= k // 2 and not wrong,
          "flipped: %s" % wrong)


def fashion_mnist():
    with gzip.open(FASHION) as f:
        pixels = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
    return pixels.astype(np.float32) * np.float32(1 / 255)  # the tool's scaling, in FP32


compare("Fashion-MNIST", fashion_mnist(), FASHION, 16)
digits = load_digits().data.astype(np.float32)
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "digits.npy")
    np.save(path, digits)
    compare("digits", digits, path, 10)

print("%d passed, %d failed" % (checks - len(failures), len(failures)))
sys.exit(1 if failures else 0)
