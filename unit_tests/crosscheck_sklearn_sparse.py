"""Cross-check of `randnla rsvd` and `randnla pca` (portable backend on the host) on a real sparse matrix
against scikit-learn and FP64 references: the WordNet 3.0 synset relation graph (Debian's wordnet-base,
built by scripts/wordnet_matrix.py: 117,659 x 117,659, 361,647 non-zeros), read by the tool from a
coordinate .mtx file and kept sparse (CSR); the same matrix from scipy.sparse.save_npz files gives the
same singular values to FP32 rounding.

References: ARPACK (scipy.sparse.linalg.svds, FP64) on A for the RSVD, and on the implicitly centred
Xc = A - 1 mu^T (a LinearOperator) for the PCA; scikit-learn's TruncatedSVD (randomized, the same k,
p, q) and PCA (arpack, which centres sparse input implicitly) fitted on the FP64 matrix.

Tolerances. The spectrum is flat (sigma_43 / sigma_1 = 0.59 for A, sigma_27 / sigma_1 = 0.66 for Xc),
so q = 2 power iterations leave sigma errors of percents, not 1e-3: the relative error of sigma_i is
at most g_i = (sigma_{l+1} / sigma_i)^(2q+1), l = k + p (Halko, Martinsson & Tropp 2011, Sec. 10),
from 0.08 for sigma_1 up to beyond 0.5, and never negative (a Rayleigh-Ritz value), plus FP32
rounding (1e-5). The bound is loose here, so the observed errors set tighter limits with a margin of
about 2 over seeds 1-6 and 42 of the tool (and random states 0-3 of scikit-learn):
  rsvd: top-10 sigma within 5e-2 (observed <= 2.8e-2); the mean over the 32 no more than 1.5 times
        scikit-learn's (ratio <= 1.22); ||A - U S V^T||_F / ||A||_F at most (1 + 1e-3) times
        scikit-learn's (ratio <= 1 + 2e-4; one power iteration fewer costs 2.4e-3) and the energy
        it captures, 1 - error^2, at least 0.9 of the optimum's (observed 0.94);
  pca:  top-10 sigma within 0.1 (observed <= 0.057); the variance the 16 components capture at least
        0.9 of the optimum's (observed >= 0.957); the components' subspaces against the exact ones,
        up to sign and to rotation within clusters of near-equal sigmas (relative gap < 2%), for the
        components before the spectrum's largest gap (sigma_6 / sigma_7 = 1.076): cosines of the
        principal angles >= 0.8 (observed >= 0.87). Davis-Kahan (g_i / gap_i > 1 here) says
        nothing about single components, so the rest are not compared.
Orthonormality and the FP64 recomputations of the tool's own numbers are held to FP32 rounding.
Usage: crosscheck_sklearn_sparse.py RANDNLA"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import scipy.io
import scipy.sparse
import scipy.sparse.linalg as sla
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.utils.extmath import randomized_svd

TOOL = sys.argv[1]
BUILDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "wordnet_matrix.py")
K_SVD, K_PCA, P, Q = 32, 16, 10, 2
FP32 = 1e-5
failures = []
checks = 0


def check(label, ok, detail):
    global checks
    checks += 1
    print(("PASS " if ok else "FAIL ") + label + ": " + detail)
    if not ok:
        failures.append(label)


def build_matrix(d):
    path = os.path.join(d, "wordnet.mtx")
    out = subprocess.run([sys.executable, BUILDER, path], check=True, capture_output=True, text=True).stdout
    print("wordnet_matrix.py: " + out.strip())
    return path, scipy.io.mmread(path).tocsr().astype(np.float64)


def run_tool(command, path, k, out, extra=()):
    report = out + ".json"
    subprocess.run([TOOL, command, "--input", path, "--rank", str(k), "--power-iterations", str(Q), "--backend", "host",
                    "--json", report, "--output", out, *extra], check=True, capture_output=True)
    with open(report) as f:
        return json.load(f)


def check_kept_sparse(name, report, a):
    inp = report["input"]
    check(name + " input kept sparse", inp.get("storage") == "CSR" and (inp["rows"], inp["cols"], inp["nnz"]) == a.shape + (a.nnz,),
          "storage %s, %d x %d, nnz %d" % (inp.get("storage"), inp["rows"], inp["cols"], inp["nnz"]))


def descending_svds(op, k, vectors):
    result = sla.svds(op, k=k, return_singular_vectors="vh" if vectors else False, random_state=0)
    s = result[1] if vectors else result
    order = np.argsort(s)[::-1]
    return (s[order], result[2][order]) if vectors else s[order]


def gram_error(a, fro2, U, S, V):
    """||A - U S V^T||_F / ||A||_F without forming U S V^T: ||A||^2 - 2 tr(S U^T A V) + tr(S U^T U S V^T V)."""
    cross = np.sum(S * np.einsum("ij,ij->j", U, a @ V))
    square = np.sum(((U.T @ U) * np.outer(S, S)) * (V.T @ V))
    return np.sqrt(max(fro2 - 2 * cross + square, 0.0) / fro2)


def orthonormality(X):
    return np.linalg.norm(X.T @ X - np.eye(X.shape[1]))


def check_sigma(name, s, exact, g, top_tolerance):
    rel = (exact - s) / exact
    check(name + " sigma below the exact (Rayleigh-Ritz)", rel.min() >= -FP32, "min rel diff %.2e" % rel.min())
    check(name + " sigma within (sigma_{l+1}/sigma_i)^(2q+1)", np.all(rel <= g + FP32),
          "worst against its bound %.2f" % np.max(rel / (g + FP32)))
    check(name + " top-10 sigma", rel[:10].max() <= top_tolerance,
          "max rel diff %.2e (tolerance %.0e); all %d: max %.2e" % (rel[:10].max(), top_tolerance, len(s), rel.max()))
    return rel


def check_rsvd(a, path, d):
    m, n = a.shape
    fro2 = np.sum(a.data ** 2)
    report = run_tool("rsvd", path, K_SVD, os.path.join(d, "rsvd"))
    U, S, V = (np.load(os.path.join(d, "rsvd", f + ".npy")).astype(np.float64) for f in ("U", "S", "V"))
    S = S.ravel()
    check_kept_sparse("rsvd", report, a)
    check("rsvd shapes", U.shape == (m, K_SVD) and S.shape == (K_SVD,) and V.shape == (n, K_SVD),
          "U %s, S %s, V %s" % (U.shape, S.shape, V.shape))
    check("rsvd report's sigma = S.npy", np.allclose(report["result"]["singular_values"], S, rtol=1e-6, atol=0), "")

    spectrum = descending_svds(a, K_SVD + P + 1, vectors=False)  # sigma_{l+1} for the bound
    exact = spectrum[:K_SVD]
    g = (spectrum[K_SVD + P] / exact) ** (2 * Q + 1)
    rel = check_sigma("rsvd", S, exact, g, 5e-2)

    sk = TruncatedSVD(n_components=K_SVD, algorithm="randomized", n_iter=Q, n_oversamples=P, random_state=0).fit(a)
    # TruncatedSVD keeps no U: its own call, randomized_svd, gives the factorisation it fitted.
    Us, Ss, Vts = randomized_svd(a, K_SVD, n_oversamples=P, n_iter=Q, random_state=0, flip_sign=False)
    check("scikit-learn's factorisation is TruncatedSVD's", np.allclose(Ss, sk.singular_values_, rtol=1e-12, atol=0), "")
    rel_sk = (exact - Ss) / exact
    check("rsvd mean sigma error vs scikit-learn", rel.mean() <= 1.5 * rel_sk.mean(),
          "ours %.2e, scikit-learn %.2e" % (rel.mean(), rel_sk.mean()))

    check("rsvd U orthonormal", orthonormality(U) <= FP32, "||U^T U - I||_F %.2e" % orthonormality(U))
    check("rsvd V orthonormal", orthonormality(V) <= FP32, "||V^T V - I||_F %.2e" % orthonormality(V))
    err = gram_error(a, fro2, U, S, V)
    err_sk = gram_error(a, fro2, Us, Ss, Vts.T)
    err_opt = np.sqrt((fro2 - np.sum(exact ** 2)) / fro2)
    reported = report["result"]["relative_error"]
    check("rsvd error = report's", abs(err - reported) <= FP32 * err, "FP64 %.6f, report %.6f" % (err, reported))
    check("rsvd error vs scikit-learn", err <= (1 + 1e-3) * err_sk, "ours %.6f, scikit-learn %.6f" % (err, err_sk))
    captured, captured_opt = 1 - err ** 2, 1 - err_opt ** 2
    check("rsvd error vs optimum", err >= err_opt * (1 - FP32) and captured >= 0.9 * captured_opt,
          "ours %.6f, optimum %.6f: %.3f of the optimum's energy" % (err, err_opt, captured / captured_opt))


def centred(a, mu):
    """Xc = A - 1 mu^T as an operator, never formed (the same as scikit-learn's sparse PCA)."""
    m, n = a.shape
    return sla.LinearOperator((m, n), dtype=np.float64, matvec=lambda x: a @ x - mu @ x,
                              rmatvec=lambda y: a.T @ y - mu * y.sum(),
                              matmat=lambda X: a @ X - mu @ X, rmatmat=lambda Y: a.T @ Y - np.outer(mu, Y.sum(axis=0)))


def clusters_before_largest_gap(s, k):
    """Index ranges of near-equal sigmas (relative gap < 2%) among those above the largest gap in s[:k]."""
    gaps = s[:k - 1] / s[1:k] - 1
    end = int(np.argmax(gaps)) + 1
    cuts = [0] + [i + 1 for i in range(end - 1) if gaps[i] >= 0.02] + [end]
    return list(zip(cuts[:-1], cuts[1:]))


def check_pca(a, path, d):
    m, n = a.shape
    out = os.path.join(d, "pca")
    report = run_tool("pca", path, K_PCA, out, ("--exact", "off"))
    r = {f: np.load(os.path.join(out, f + ".npy")).astype(np.float64) for f in
         ("components", "singular_values", "mean", "explained_variance", "explained_variance_ratio")}
    s, c = r["singular_values"].ravel(), r["components"]
    check_kept_sparse("pca", report, a)
    check("pca shapes", c.shape == (K_PCA, n) and r["mean"].shape == (n,) and s.shape == (K_PCA,),
          "components %s, mean %s, sigma %s" % (c.shape, r["mean"].shape, s.shape))

    mu = np.asarray(a.mean(axis=0)).ravel()
    mean_err = np.abs(r["mean"] - mu).max()
    check("pca mean", mean_err <= 32 * 2.0 ** -24 * np.abs(mu).max(), "max diff %.2e" % mean_err)
    xc = centred(a, mu)
    spectrum, vt = descending_svds(xc, K_PCA + P + 1, vectors=True)
    exact, vt = spectrum[:K_PCA], vt[:K_PCA]
    sk = PCA(n_components=K_PCA, svd_solver="arpack", random_state=0).fit(a)
    sk_cos = np.abs(np.sum(sk.components_ * vt, axis=1))
    check("scikit-learn PCA = FP64 reference", np.allclose(sk.singular_values_, exact, rtol=1e-10, atol=0)
          and np.all(1 - sk_cos <= 1e-8), "max rel sigma diff %.1e, max 1 - |cos| %.1e"
          % (np.max(np.abs(sk.singular_values_ - exact) / exact), np.max(1 - sk_cos)))

    g = (spectrum[K_PCA + P] / exact) ** (2 * Q + 1)
    check_sigma("pca", s, exact, g, 0.1)
    check("pca explained variance = sigma^2 / (m - 1)",
          np.allclose(r["explained_variance"], s ** 2 / (m - 1), rtol=FP32, atol=0), "")
    for f in ("explained_variance", "explained_variance_ratio"):
        ref = getattr(sk, f + "_")
        rel = np.abs(r[f] - ref) / ref
        check("pca %s vs scikit-learn" % f, np.all(rel <= 2 * g + FP32), "max rel diff %.2e, worst against 2 g_i %.2f"
              % (rel.max(), np.max(rel / (2 * g + FP32))))

    check("pca components orthonormal", orthonormality(c.T) <= FP32, "||C C^T - I||_F %.2e" % orthonormality(c.T))
    # The tool's sigma_i is ||Q^T Xc v_i||, so ||Xc v_i|| is no smaller; no more than sigma_1 (Ky Fan).
    norms = np.linalg.norm(xc.matmat(c.T), axis=0)
    check("pca ||Xc v_i|| between sigma_i and the exact sigma_1",
          np.all(norms >= s * (1 - FP32)) and norms.max() <= exact[0] * (1 + FP32),
          "min ||Xc v_i|| / sigma_i %.5f" % np.min(norms / s))
    captured = np.sum(norms ** 2) / np.sum(exact ** 2)
    check("pca variance captured vs optimum", 0.9 <= captured <= 1 + FP32, "%.4f of the optimum's" % captured)
    for lo, hi in clusters_before_largest_gap(spectrum, K_PCA):
        cos = np.linalg.svd(vt[lo:hi] @ c[lo:hi].T, compute_uv=False).min()
        check("pca components %d-%d vs exact, up to sign/rotation" % (lo + 1, hi), cos >= 0.8, "min cos %.3f" % cos)


def check_npz(a, path, d):
    """The same matrix saved by scipy.sparse.save_npz (CSR deflated; CSC stored, its indices unsorted) is
    read as the .mtx file is: the same CSR, so the same singular values, to FP32 rounding (bit for bit
    on one thread; threaded sparse products sum in varying order)."""
    reference = np.load(os.path.join(d, "rsvd", "S.npy"))
    csc = a.tocsc().astype(np.float32)
    order = np.arange(csc.nnz)[::-1]  # reversed within each column: unsorted indices
    for j in range(csc.shape[1]):
        lo, hi = csc.indptr[j], csc.indptr[j + 1]
        order[lo:hi] = np.arange(hi - 1, lo - 1, -1)
    csc.indices, csc.data = csc.indices[order], csc.data[order]
    csc.has_sorted_indices = False
    for label, matrix, compressed in (("csr, deflated", a.astype(np.float32), True), ("csc, stored, unsorted", csc, False)):
        npz = os.path.join(d, "wordnet.npz")
        scipy.sparse.save_npz(npz, matrix, compressed=compressed)
        report = run_tool("rsvd", npz, K_SVD, os.path.join(d, "npz"), ("--force",))
        check_kept_sparse(".npz (%s)" % label, report, a)
        S = np.load(os.path.join(d, "npz", "S.npy"))
        check(".npz (%s) sigma = the .mtx input's" % label, np.allclose(S, reference, rtol=FP32, atol=0),
              "max rel diff %.1e" % np.max(np.abs(S - reference) / reference))


with tempfile.TemporaryDirectory() as d:
    path, a = build_matrix(d)
    check_rsvd(a, path, d)
    check_npz(a, path, d)
    check_pca(a, path, d)

print("%d passed, %d failed" % (checks - len(failures), len(failures)))
sys.exit(1 if failures else 0)
