"""The randnla tool on bad input: a one-line error naming the file and the problem, a non-zero
exit status, no partial output, and no overwrite without --force. Usage: test_cli.py RANDNLA"""
import os
import subprocess
import sys
import tempfile

import numpy as np

TOOL = sys.argv[1]
failures = []
checks = 0


def run(*args):
    p = subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def expect_error(label, args, *needles, outdir=None):
    global checks
    checks += 1
    code, out, err = run(*args)
    lines = [l for l in err.splitlines() if l.strip()]
    ok = code != 0 and len(lines) == 1 and all(n in lines[0] for n in needles)
    if outdir is not None and os.path.isdir(outdir):
        ok = ok and not os.listdir(outdir)  # nothing partial left behind
    print(("PASS " if ok else "FAIL ") + label + ": exit %d, stderr %r" % (code, err.strip()))
    if not ok:
        failures.append(label)


with tempfile.TemporaryDirectory() as d:
    rng = np.random.default_rng(1)
    good = os.path.join(d, "a.npy")
    np.save(good, rng.standard_normal((60, 40)).astype(np.float32))
    truncated = os.path.join(d, "trunc.npy")
    open(truncated, "wb").write(open(good, "rb").read()[:-10])
    ints = os.path.join(d, "ints.npy")
    np.save(ints, np.arange(12, dtype=np.int32).reshape(3, 4))
    nan = os.path.join(d, "nan.npy")
    x = rng.standard_normal((20, 10))
    x[3, 4] = np.nan
    np.save(nan, x)
    wrong = os.path.join(d, "wrong.npy")
    open(wrong, "wb").write(b"PK\x03\x04 not a numpy file")
    b_bad = os.path.join(d, "b.npy")
    np.save(b_bad, rng.standard_normal((7, 5)).astype(np.float32))
    out = os.path.join(d, "out")
    os.mkdir(out)

    expect_error("missing file", ["rsvd", "--input", os.path.join(d, "none.npy"), "--rank", "3", "--output", out],
                 "none.npy", "cannot open", outdir=out)
    expect_error("wrong magic", ["rsvd", "--input", wrong, "--rank", "3", "--output", out], "wrong.npy", "bad magic", outdir=out)
    expect_error("truncated", ["rsvd", "--input", truncated, "--rank", "3", "--output", out], "trunc.npy", "truncated", outdir=out)
    expect_error("dtype", ["rsvd", "--input", ints, "--rank", "1", "--output", out], "ints.npy", "unsupported dtype", outdir=out)
    expect_error("NaN", ["rsvd", "--input", nan, "--rank", "2", "--output", out], "nan.npy", "NaN/Inf", outdir=out)
    expect_error("rank", ["rsvd", "--input", good, "--rank", "35", "--output", out], "k + oversampling", outdir=out)
    expect_error("shape", ["gemm", "--a", good, "--b", b_bad, "--backend", "host"], "B.rows", "must equal A.cols")
    expect_error("unknown option", ["rsvd", "--input", good, "--rnak", "3"], "--rnak")
    expect_error("backend", ["rsvd", "--input", good, "--rank", "3", "--backend", "gpu"], "--backend = gpu")

    checks += 3  # good run, --force replaces, no temporary files left
    code, _, err = run("rsvd", "--input", good, "--rank", "3", "--output", out, "--backend", "host")
    print(("PASS" if code == 0 else "FAIL") + " good run: exit %d %s" % (code, err.strip()))
    if code != 0:
        failures.append("good run")
    before = open(os.path.join(out, "U.npy"), "rb").read()
    expect_error("no overwrite", ["rsvd", "--input", good, "--rank", "4", "--output", out, "--backend", "host"],
                 "U.npy", "--force")
    if open(os.path.join(out, "U.npy"), "rb").read() != before:
        failures.append("U.npy changed without --force")
    code, _, _ = run("rsvd", "--input", good, "--rank", "4", "--output", out, "--backend", "host", "--force")
    u = np.load(os.path.join(out, "U.npy"))
    if code != 0 or u.shape != (60, 4):
        failures.append("--force did not replace the output")
    leftovers = [f for f in os.listdir(out) if ".tmp-" in f]
    if leftovers:
        failures.append("temporary files left: %s" % leftovers)

    # Heavy-tailed operands (Cauchy, |x| up to ~1e7) and operands far below FP16's range: every
    # GEMM variant stays finite and accurate where SGEMM is (B is scaled into FP16's range for SHGEMM).
    for label, x in [("heavy tails", rng.standard_cauchy((64, 64)) * 1e3),
                     ("tiny scales", rng.standard_normal((64, 64)) * 2.0 ** rng.uniform(-40, -20, (1, 64)))]:
        checks += 1
        path = os.path.join(d, "x.npy")
        np.save(path, x.astype(np.float32))
        code, out_text, err = run("gemm", "--a", path, "--b", path, "--backend", "host", "--reps", "1")
        rows = [l.split() for l in out_text.splitlines() if l.startswith(("sgemm", "shgemm", "tcec"))]
        errors = {" ".join(r[:-3]): float(r[-1]) for r in rows}
        sgemm = errors.get("sgemm fp32", float("nan"))
        bad = {k: e for k, e in errors.items() if not (e <= max(3 * sgemm, 1e-6))}
        ok = code == 0 and len(errors) == 7 and not bad
        print(("PASS " if ok else "FAIL ") + label + ": %s" % (errors if ok else (code, bad, err.strip())))
        if not ok:
            failures.append(label)

    # lra: a rank-5 matrix; every variant's row, the refined ones at least as accurate as FP32's,
    # X and Y written with the rank asked for; k + p beyond min(m, n) refused naming --rank's value.
    checks += 1
    low = os.path.join(d, "low.npy")
    np.save(low, (rng.standard_normal((80, 5)) @ rng.standard_normal((5, 50))).astype(np.float32))
    lra_out = os.path.join(d, "lra")
    code, out_text, err = run("lra", "--input", low, "--rank", "5", "--output", lra_out, "--backend", "host")
    rows = {(r[0], r[1]): float(r[3]) for r in (l.split() for l in out_text.splitlines())
            if len(r) == 6 and r[1] in ("yes", "no")}
    shapes = [np.load(os.path.join(lra_out, f)).shape for f in ("X.npy", "Y.npy")] if code == 0 else []
    ok = (code == 0 and len(rows) == 12 and shapes == [(80, 5), (50, 5)]
          and all(rows[(p, "yes")] <= 2 * rows[("fp32", "no")] + 1e-6
                  for p in ("fp32", "tf32", "fp16", "fp16-once", "split"))
          and rows[("fp16-all", "yes")] < 0.1 * rows[("fp16-all", "no")])
    print(("PASS " if ok else "FAIL ") + "lra: %s" % (rows if ok else (code, out_text, err.strip())))
    if not ok:
        failures.append("lra")
    expect_error("lra rank", ["lra", "--input", low, "--rank", "60", "--output", os.path.join(d, "lra2")], "60")

    # lra --refinement subspace: every variant's refined row (16|16's too) at the FP32 level, rank k.
    checks += 1
    sub_out = os.path.join(d, "lra-subspace")
    code, out_text, err = run("lra", "--input", low, "--rank", "5", "--output", sub_out, "--backend", "host",
                              "--refinement", "subspace")
    rows = {(r[0], r[1]): float(r[3]) for r in (l.split() for l in out_text.splitlines())
            if len(r) == 6 and r[1] in ("yes", "no")}
    shapes = [np.load(os.path.join(sub_out, f)).shape for f in ("X.npy", "Y.npy")] if code == 0 else []
    ok = (code == 0 and len(rows) == 12 and shapes == [(80, 5), (50, 5)]
          and all(rows[(p, "yes")] <= 2 * rows[("fp32", "no")] + 1e-6
                  for p in ("fp32", "tf32", "fp16", "fp16-once", "fp16-all", "split")))
    print(("PASS " if ok else "FAIL ") + "lra subspace: %s" % (rows if ok else (code, out_text, err.strip())))
    if not ok:
        failures.append("lra subspace")
    expect_error("lra refinement", ["lra", "--input", low, "--rank", "5", "--output", os.path.join(d, "lra3"),
                                    "--refinement", "power"], "power")

    checks += 1
    samples = os.path.join(d, "samples.npy")
    np.save(samples, rng.standard_normal((300, 5000)).astype(np.float32))
    project_out = os.path.join(d, "project")
    code, out_text, err = run("project", "--input", samples, "--dimension", "0", "--eps", "0.3",
                              "--output", project_out, "--backend", "host")
    line = [l for l in out_text.splitlines() if l.startswith("pairwise distances")]
    shape = np.load(os.path.join(project_out, "Y.npy")).shape if code == 0 else None
    ok = code == 0 and shape is not None and shape[0] == 300 and "(100.00%)" in (line[0] if line else "")
    print(("PASS " if ok else "FAIL ") + "project: %r" % (((shape, line),) if ok else ((code, out_text, err.strip()),)))
    if not ok:
        failures.append("project")
    expect_error("project density", ["project", "--input", samples, "--density", "2", "--output",
                                     os.path.join(d, "project2")], "density = 2")

    # qr: A = Q R with orthonormal Q for TSQR and CholeskyQR2, and a rank-deficient A said to be so.
    tall = os.path.join(d, "tall.npy")
    t = rng.standard_normal((400, 12)).astype(np.float32)
    t[:, 7] = t[:, 3]
    np.save(tall, t)
    for method in ("tsqr", "cholqr2"):
        checks += 1
        qr_out = os.path.join(d, "qr-" + method)
        code, out_text, err = run("qr", "--input", tall, "--method", method, "--output", qr_out, "--backend", "host")
        if code == 0:
            q, r = np.load(os.path.join(qr_out, "Q.npy")), np.load(os.path.join(qr_out, "R.npy"))
            orth = np.linalg.norm(q.T.astype(np.float64) @ q - np.eye(12))
            resid = np.linalg.norm(t - q.astype(np.float64) @ r) / np.linalg.norm(t)
        ok = code == 0 and orth < 1e-5 and resid < 1e-5 and "rank deficient" in out_text
        ok = ok and (method != "tsqr" or "tree: 1 levels, 1 leaves, 1 panels" in out_text)
        print(("PASS " if ok else "FAIL ") + "qr %s: %r" % (method, (orth, resid) if ok else (code, out_text, err.strip())))
        if not ok:
            failures.append("qr " + method)
    expect_error("qr wide", ["qr", "--input", samples, "--output", os.path.join(d, "qr-wide")], "300 x 5000")
    # The Tensor Core variants' arithmetic (emulated on the host): fp16-refined at FP32 accuracy.
    checks += 1
    full = os.path.join(d, "full.npy")
    f = rng.uniform(-1, 1, (500, 10)).astype(np.float32)
    np.save(full, f)
    qr_out = os.path.join(d, "qr-refined")
    code, out_text, err = run("qr", "--input", full, "--arithmetic", "fp16-refined", "--output", qr_out, "--backend", "host")
    if code == 0:
        q, r = np.load(os.path.join(qr_out, "Q.npy")), np.load(os.path.join(qr_out, "R.npy"))
        orth = np.linalg.norm(q.T.astype(np.float64) @ q - np.eye(10))
        resid = np.linalg.norm(f - q.astype(np.float64) @ r) / np.linalg.norm(f)
    ok = code == 0 and orth < 1e-5 and resid < 1e-5 and "(fp16-refined)" in out_text
    print(("PASS " if ok else "FAIL ") + "qr fp16-refined: %r" % (((orth, resid) if ok else (code, out_text, err.strip())),))
    if not ok:
        failures.append("qr fp16-refined")
    expect_error("qr arithmetic without tsqr", ["qr", "--input", full, "--method", "cholqr2", "--arithmetic", "fp16",
                                               "--output", os.path.join(d, "qr-bad")], "--arithmetic = fp16",
                 "tsqr only")

print("%d passed, %d failed" % (checks - len(failures), len(failures)))
sys.exit(1 if failures else 0)
