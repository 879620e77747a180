"""The randnla tool on bad input: a one-line error naming the file and the problem, a non-zero
exit status, no partial output, and no overwrite without --force. Usage: test_cli.py RANDNLA"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

TOOL = sys.argv[1]
failures = []
checks = 0


def run(*args, env=None, timeout=120):
    try:
        p = subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", "", "(timed out after %d s)" % timeout
    return p.returncode, p.stdout, p.stderr


def check(label, ok, detail=""):
    global checks
    checks += 1
    print(("PASS " if ok else "FAIL ") + label + (": " + detail if detail else ""))
    if not ok:
        failures.append(label)


def check_plot(label, path, size):
    """A PNG the tool drew with PLplot: it decodes, has the expected pixel size, and holds the many
    shades of antialiased text and lines (the bitmap font it replaced drew in 4 colours)."""
    from PIL import Image
    try:
        with Image.open(path) as im:
            im.load()
            shape, colours = im.size, len(im.convert("RGB").getcolors(1 << 24))
    except Exception as e:  # missing, truncated or not a PNG
        check(label, False, repr(e))
        return
    check(label, shape == size and colours > 100, repr((shape, size, colours)))


def expect_error(label, args, *needles, outdir=None, status=None, stdout_empty=False, timeout=120):
    """A one-line error naming every needle; with `status`, that exit status; with `stdout_empty`,
    nothing on stdout either (the error came before any input was read)."""
    global checks
    checks += 1
    code, out, err = run(*args, timeout=timeout)
    lines = [l for l in err.splitlines() if l.strip()]
    ok = code not in (0, "timeout") and len(lines) == 1 and all(n in lines[0] for n in needles)
    ok = ok and (status is None or code == status) and (not stdout_empty or not out.strip())
    if outdir is not None and os.path.isdir(outdir):
        ok = ok and not os.listdir(outdir)  # nothing partial left behind
    print(("PASS " if ok else "FAIL ") + label + ": exit %s, stderr %r" % (code, err.strip()))
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
        code, out_text, err = run("qr", "--input", tall, "--orthonormalizer", method, "--output", qr_out, "--backend", "host")
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
    expect_error("qr arithmetic without tsqr", ["qr", "--input", full, "--orthonormalizer", "cholqr2", "--arithmetic", "fp16",
                                               "--output", os.path.join(d, "qr-bad")], "--arithmetic = fp16",
                 "tsqr only")

    # Arguments (#56 item 1): typed, range-checked values refused before any input is read (stdout
    # empty: not even the backend is opened), with exit status 2.
    missing = os.path.join(d, "never-read.npy")  # does not exist: reading it would be a different error
    args_out = os.path.join(d, "args-out")
    bad_lines = [
        ("huge power iterations", ["rsvd", "--input", missing, "--rank", "3", "--power-iterations", "99999999999"],
         "--power-iterations"),
        ("power iterations past int64", ["rsvd", "--input", missing, "--rank", "3", "-q", "99999999999999999999999"],
         "--power-iterations"),
        ("k + p overflow", ["rsvd", "--input", missing, "--rank", "9223372036854775807", "--oversampling", "10"], "--rank"),
        ("negative oversampling", ["rsvd", "--input", missing, "--rank", "3", "--oversampling", "-1"], "--oversampling"),
        ("rank not a number", ["rsvd", "--input", missing, "--rank", "3x"], "--rank"),
        ("rank in hex", ["rsvd", "--input", missing, "--rank", "0x10"], "--rank"),
        ("sketch typo before reading", ["rsvd", "--input", missing, "--rank", "3", "--products", "fp33"], "--products", "fp33"),
        ("products rounding A once outside lra", ["rsvd", "--input", missing, "--rank", "3", "--products", "fp16-once"],
         "--products", "fp16-once"),
        ("old sketch option gone", ["tucker", "--input", missing, "--sketch", "auto"], "--sketch"),
        ("orthonormalizer typo", ["lra", "--input", missing, "--rank", "3", "--orthonormalizer", "qr"], "--orthonormalizer"),
        ("products typo", ["lra", "--input", missing, "--rank", "3", "--products", "fp32,fp61"], "--products", "fp61"),
        ("flag with a value", ["rsvd", "--input", missing, "--rank", "3", "--force=no"], "--force"),
        ("flag with true", ["rsvd", "--input", missing, "--rank", "3", "--force=true"], "--force"),
        ("required input", ["rsvd", "--rank", "3"], "--input"),
        ("required rank", ["lra", "--input", missing], "--rank"),
        ("tolerance out of range", ["rsvd", "--input", missing, "--tolerance", "1.5"], "--tolerance"),
        ("tolerance nan", ["rsvd", "--input", missing, "--tolerance", "nan"], "--tolerance"),
        ("rank and tolerance", ["rsvd", "--input", missing, "--rank", "3", "--tolerance", "0.1"], "--rank/--tolerance"),
        ("option without effect", ["rsvd", "--input", missing, "--rank", "3", "--block-size", "8"], "--block-size"),
        ("eps out of range", ["project", "--input", missing, "--eps", "1.5"], "--eps"),
        ("density out of range", ["project", "--input", missing, "--density", "0"], "--density"),
        ("pca exact typo", ["pca", "--input", missing, "--exact", "yes"], "--exact"),
        ("pca image shape", ["pca", "--input", missing, "--image-shape", "28by28"], "--image-shape"),
        ("tucker ranks", ["tucker", "--input", missing, "--ranks", "64,,16"], "--ranks"),
        ("tucker shape overflow", ["tucker", "--input", missing, "--shape", "99999999999999999999,2"], "--shape"),
        ("seed negative", ["qr", "--input", missing, "--seed", "-1"], "--seed"),
        ("gemm output refused", ["gemm", "--output", args_out, "--m", "8", "--n", "8", "--k", "8"], "--output"),
        ("gemm m with a file", ["gemm", "--a", missing, "--m", "8"], "--m"),
        ("surplus argument", ["qr", "--input", missing, "extra"], "extra"),
        ("unknown command", ["svd"], "svd"),
    ]
    for label, args, *needles in bad_lines:
        expect_error(label, args + (["--output", args_out] if args[0] not in ("gemm", "svd") else []), *needles,
                     status=2, stdout_empty=True)
    check("no output directory after usage errors", not os.path.exists(args_out))

    # One vocabulary: --rank/-k, --oversampling/-p, --power-iterations/-q, --orthonormalizer, with
    # each command's default the library's (tucker: p = 0) shown in its help.
    helps = {c: run(c, "--help") for c in ("pca", "rsvd", "lra", "qr", "tucker", "project", "gemm")}
    check("help exits 0 with an example and the exit statuses",
          all(h[0] == 0 and "example:" in h[1] and "exit status" in h[1] for h in helps.values()))
    check("pca takes --rank/-k", "-k,--rank" in helps["pca"][1] and "--components" not in helps["pca"][1])
    check("qr takes --orthonormalizer", "--orthonormalizer" in helps["qr"][1] and "--method" not in helps["qr"][1])
    check("-p, -q everywhere", all("-p,--oversampling" in helps[c][1] and "-q,--power-iterations" in helps[c][1]
                                   for c in ("pca", "rsvd", "tucker")))
    check("tucker's default oversampling is the library's (0)",
          any("--oversampling" in l and "[default: 0]" in l for l in helps["tucker"][1].splitlines()))
    check("rsvd help shows defaults", "[default: 10]" in helps["rsvd"][1] and "[default: 2]" in helps["rsvd"][1])
    code, out_text, err = run("--version")
    check("--version", code == 0 and out_text.startswith("randnla ") and any(c.isdigit() for c in out_text),
          repr((code, out_text, err)))
    code, out_text, _ = run("rsvd", "--version")
    check("command --version", code == 0 and out_text.startswith("randnla "), repr(out_text))
    code, out_text, _ = run("pca", "-k", "4", "-p", "2", "-q", "1", "--input", good, "--exact", "on",
                            "--output", os.path.join(d, "pca-short"), "--backend", "host")
    check("short options run", code == 0 and "p = 2, q = 1" in out_text, repr((code, out_text[-300:])))
    # pca writes scikit-learn's shapes: components k x n, the vectors 1-D.
    short = os.path.join(d, "pca-short")
    shapes = {f: np.load(os.path.join(short, f)).shape for f in os.listdir(short) if f.endswith(".npy")} if code == 0 else {}
    n_good = np.load(good).shape[1]
    check("pca outputs shaped as scikit-learn's", shapes == {
        "components.npy": (4, n_good), "singular_values.npy": (4,), "mean.npy": (n_good,),
        "explained_variance.npy": (4,), "explained_variance_ratio.npy": (4,)}, repr(shapes))
    # pca's PNGs (#55 item 4): the spectrum plotted with axes, labels and a legend, and a grid of the
    # components (8 x 8 images here) captioned with their explained variance, 4 to a row.
    images = os.path.join(d, "images.npy")
    np.save(images, rng.standard_normal((60, 64)).astype(np.float32))
    pca_png = os.path.join(d, "pca-png")
    code, out_text, err = run("pca", "-k", "6", "--input", images, "--exact", "on", "--output", pca_png, "--backend", "host")
    check("pca with plots runs", code == 0, repr((code, err)))
    check_plot("pca singular_values.png drawn by PLplot", os.path.join(pca_png, "singular_values.png"), (720, 420))
    check_plot("pca components.png drawn by PLplot", os.path.join(pca_png, "components.png"), (4 * 180, 2 * 180))

    # Kokkos' start-up text (#56): with OMP_PROC_BIND unset, an error is one line on stderr (the
    # tool's), whatever Kokkos' build (an OpenMP one warns about OMP_PROC_BIND unless told not to).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "KOKKOS_"))}
    code, out_text, err = run("rsvd", "--input", missing, "--rank", "3", "--output", args_out, "--backend", "host", env=env)
    lines = [l for l in err.splitlines() if l.strip()]
    check("only the tool's message without OMP_PROC_BIND", code == 3 and len(lines) == 1
          and lines[0].startswith("randnla rsvd: ") and "never-read.npy" in lines[0], repr(err))

    # Outputs as a set (#56 item 4): an existing directory holding other files is refused before
    # any work; --force replaces the whole set in one step (no file of the earlier set is left);
    # an error after the work leaves nothing behind, not even a temporary folder.
    other = os.path.join(d, "other")
    os.mkdir(other)
    open(os.path.join(other, "notes.txt"), "w").write("mine")
    expect_error("output holds other files", ["rsvd", "--input", good, "--rank", "3", "--output", other, "--force",
                                              "--backend", "host"], "notes.txt", status=2, stdout_empty=True)
    check("other files kept", os.listdir(other) == ["notes.txt"])
    tk_out = os.path.join(d, "tk")
    cube = os.path.join(d, "cube.npy")
    np.save(cube, rng.standard_normal((30, 24)).astype(np.float32))
    code1, _, e1 = run("tucker", "--input", cube, "--shape", "4,6", "--ranks", "5,3,3", "--output", tk_out, "--backend", "host")
    first = sorted(os.listdir(tk_out)) if code1 == 0 else None
    check_plot("tucker reconstruction.png drawn by PLplot", os.path.join(tk_out, "reconstruction.png"), (8 * 130, 2 * 130))
    code2, _, e2 = run("tucker", "--input", cube, "--shape", "24", "--ranks", "5,3", "--output", tk_out, "--backend", "host",
                       "--force")
    second = sorted(os.listdir(tk_out)) if code2 == 0 else None
    check("--force replaces the set, not file by file",
          first == ["Q1.npy", "Q2.npy", "Q3.npy", "core.npy", "reconstruction.png"] and second == ["Q1.npy", "Q2.npy", "core.npy"],
          repr((code1, first, e1, code2, second, e2)))
    check("no temporary folder beside the outputs", not [f for f in os.listdir(d) if ".tmp-" in f], repr(os.listdir(d)))
    # pca: the image shape that does not fit the data is found before any output is written.
    pca_bad = os.path.join(d, "pca-bad")
    expect_error("pca image shape after reading", ["pca", "--input", good, "--rank", "3", "--image-shape", "3x3",
                                                   "--output", pca_bad, "--backend", "host"], "--image-shape")
    check("pca wrote nothing on a late error", not os.path.exists(pca_bad)
          and not [f for f in os.listdir(d) if ".tmp-" in f])
    # A signal during the work leaves no partial set and no temporary folder.
    big = os.path.join(d, "big.npy")
    np.save(big, rng.standard_normal((3000, 600)).astype(np.float32))
    sig_out = os.path.join(d, "sig")
    p = subprocess.Popen([TOOL, "lra", "--input", big, "--rank", "100", "--refinements", "20", "--output", sig_out,
                          "--backend", "host"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import time
    time.sleep(1.5)
    p.terminate()
    p.wait(timeout=60)
    check("SIGTERM leaves no output", not os.path.exists(sig_out) and not [f for f in os.listdir(d) if ".tmp-" in f],
          repr((p.returncode, os.listdir(d))))

    # Degenerate data (#56 item 3): zero and constant matrices give no NaN with exit 0; a
    # projection of identical rows ends.
    zero = os.path.join(d, "zero.npy")
    np.save(zero, np.zeros((30, 20), np.float32))
    const = os.path.join(d, "const.npy")
    np.save(const, np.full((30, 20), 3.0, np.float32))
    for label, args in [("rsvd zero", ["rsvd", "--input", zero, "--rank", "3"]),
                        ("rsvd constant", ["rsvd", "--input", const, "--rank", "3"]),
                        ("rsvd tolerance zero", ["rsvd", "--input", zero, "--tolerance", "0.1"]),
                        ("pca zero", ["pca", "--input", zero, "--rank", "3"]),
                        ("pca constant", ["pca", "--input", const, "--rank", "3", "--exact", "on"]),
                        ("lra zero", ["lra", "--input", zero, "--rank", "3"]),
                        ("lra constant", ["lra", "--input", const, "--rank", "3"]),
                        ("qr zero", ["qr", "--input", zero]),
                        ("tucker constant", ["tucker", "--input", const, "--shape", "4,5", "--ranks", "3,2,2"])]:
        dout = os.path.join(d, "deg-" + label.replace(" ", "-"))
        code, out_text, err = run(*args, "--output", dout, "--backend", "host")
        written = [np.load(os.path.join(dout, f)) for f in os.listdir(dout) if f.endswith(".npy")] if code == 0 else []
        ok = code != "timeout" and not ("nan" in (out_text + err).lower() and code == 0)
        ok = ok and all(np.isfinite(x).all() for x in written)
        ok = ok and (code == 0 or (len([l for l in err.splitlines() if l.strip()]) == 1 and not os.path.exists(dout)))
        check(label, ok, repr((code, out_text[-200:], err.strip())))
    dup = os.path.join(d, "dup.npy")
    np.save(dup, np.tile(rng.standard_normal((1, 50)).astype(np.float32), (40, 1)))
    code, out_text, err = run("project", "--input", dup, "--dimension", "8", "--output", os.path.join(d, "dup-out"),
                              "--backend", "host", timeout=30)
    check("project on identical rows ends", code == 0 and "distortion not measured" in out_text, repr((code, err)))

    # Inputs (#56 item 2): directories, pipes and devices refused by name; a corrupt gzip file that
    # declares 4 GiB refused without taking it (run under a 3 GiB address-space limit); a
    # truncated file's error names its shape and the memory it needs.
    in_out = os.path.join(d, "in-out")
    fifo = os.path.join(d, "pipe.npy")
    os.mkfifo(fifo)
    expect_error("directory input", ["rsvd", "--input", d, "--rank", "3", "--output", in_out], "is a directory", status=3)
    expect_error("pipe input", ["rsvd", "--input", fifo, "--rank", "3", "--output", in_out], "pipe.npy", "a pipe", status=3,
                 timeout=20)
    expect_error("device input", ["rsvd", "--input", "/dev/zero", "--rank", "3", "--output", in_out], "/dev/zero",
                 "a device", status=3, timeout=20)
    import gzip
    import resource
    bomb = os.path.join(d, "bomb.npy.gz")
    raw = gzip.compress(open(good, "rb").read())
    open(bomb, "wb").write(raw[:-4] + b"\xff\xff\xff\xff")

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    # AddressSanitizer reserves terabytes of address space: under it, its own cap on one allocation.
    sanitized = bool(os.environ.get("RANDNLA_SANITIZED"))
    bomb_env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":max_allocation_size_mb=3072")
    checks += 1
    p = subprocess.run([TOOL, "rsvd", "--input", bomb, "--rank", "3", "--output", in_out, "--backend", "host"],
                       capture_output=True, text=True, timeout=60, preexec_fn=None if sanitized else limit_memory,
                       env=bomb_env if sanitized else None)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    ok = p.returncode == 3 and len(lines) == 1 and "bomb.npy.gz" in lines[0] and "alloc" not in lines[0]
    print(("PASS " if ok else "FAIL ") + "corrupt gzip declaring 4 GiB: exit %d, %r" % (p.returncode, p.stderr.strip()))
    if not ok:
        failures.append("corrupt gzip declaring 4 GiB")
    expect_error("truncated names shape and memory", ["rsvd", "--input", truncated, "--rank", "3", "--output", in_out],
                 "trunc.npy", "60 x 40", "MiB", status=3)

    # Matrix Market by its specification: duplicates summed, more entries than announced refused,
    # the field enforced (integer, pattern), a symmetric file's upper triangle refused.
    def mtx(name, text):
        path = os.path.join(d, name)
        open(path, "w").write(text)
        return path

    dup_mtx = mtx("dup.mtx", "%%MatrixMarket matrix coordinate real general\n3 2 3\n1 1 1.5\n1 1 2.5\n3 2 -1\n")
    dup_q = os.path.join(d, "dup-qr")
    code, out_text, err = run("qr", "--input", dup_mtx, "--output", dup_q, "--backend", "host")
    if code == 0:
        q, r = np.load(os.path.join(dup_q, "Q.npy")), np.load(os.path.join(dup_q, "R.npy"))
        a_back = q.astype(np.float64) @ r
    check("mtx duplicates summed", code == 0 and abs(abs(a_back[0, 0]) - 4.0) < 1e-5 and abs(a_back[2, 1] + 1) < 1e-5,
          repr((code, err.strip())))
    for label, text, needle in [
            ("mtx more entries than announced",
             "%%MatrixMarket matrix coordinate real general\n3 2 1\n1 1 1.5\n2 2 2.5\n", "more entries"),
            ("mtx integer field with a real", "%%MatrixMarket matrix coordinate integer general\n3 2 1\n1 1 1.5\n",
             "integer"),
            ("mtx pattern with a value", "%%MatrixMarket matrix coordinate pattern general\n3 2 1\n1 1 1.5\n", "pattern"),
            ("mtx value missing", "%%MatrixMarket matrix coordinate real general\n3 2 2\n1 1\n2 2 1\n", "entry 1 of 2"),
            ("mtx symmetric upper triangle", "%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n1 2 1.5\n",
             "lower triangle"),
            ("mtx array surplus", "%%MatrixMarket matrix array real general\n2 1\n1\n2\n3\n", "more entries")]:
        path = mtx(label.replace(" ", "-") + ".mtx", text)
        mtx_out = os.path.join(d, "out-" + label.replace(" ", "-"))
        expect_error(label, ["qr", "--input", path, "--output", mtx_out, "--backend", "host"], needle, status=3)
        check(label + ": no output", not os.path.exists(mtx_out))
    check("no output after input errors", not os.path.exists(in_out))

    # Coordinate input kept sparse (#56 item 2, #57 item 4): a 300000 x 200000 file, 2.4e11 bytes
    # dense (refused as too large before), runs rsvd and pca as CSR; a planted rank-3 block makes the
    # leading singular values known exactly (sqrt(entries) * value for all-equal blocks).
    big_m, big_n, blocks = 300000, 200000, [(0, 0, 40, 30, 2.0), (1000, 5000, 20, 50, 1.0), (90000, 150000, 10, 10, 0.5)]
    lines = []
    for r0, c0, h, w, v in blocks:
        lines += ["%d %d %g" % (r0 + i + 1, c0 + j + 1, v) for i in range(h) for j in range(w)]
    big = mtx("big.mtx", "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n%s\n" % (big_m, big_n, len(lines), "\n".join(lines)))
    exact_s = sorted((float(v * np.sqrt(h * w)) for _, _, h, w, v in blocks), reverse=True)
    big_json, big_out = os.path.join(d, "big.json"), os.path.join(d, "big-rsvd")
    code, out_text, err = run("rsvd", "--input", big, "--rank", "3", "--oversampling", "5", "--output", big_out,
                              "--backend", "host", "--json", big_json)
    if code == 0:
        rep = json.load(open(big_json))
        s = rep["result"]["singular_values"]
        check("coordinate .mtx kept sparse: rsvd", rep["input"]["storage"] == "CSR" and rep["input"]["nnz"] == len(lines)
              and np.allclose(s, exact_s, rtol=1e-5) and rep["result"]["relative_error"] < 1e-5,
              "S %s (exact %s), error %s" % (s, exact_s, rep["result"]["relative_error"]))
    else:
        check("coordinate .mtx kept sparse: rsvd", False, "exit %s: %s" % (code, err.strip()))
    code, out_text, err = run("pca", "--input", big, "--rank", "3", "--oversampling", "5", "--output",
                              os.path.join(d, "big-pca"), "--backend", "host", "--exact", "off")
    check("coordinate .mtx kept sparse: pca", code == 0 and "kept sparse: CSR" in out_text, "exit %s: %s" % (code, err.strip()))
    for label, text, needle in [
            ("sparse all zero", "%%MatrixMarket matrix coordinate real general\n5 4 2\n1 1 0\n2 3 0\n", "all zero"),
            ("sparse NaN", "%%MatrixMarket matrix coordinate real general\n5 4 2\n1 1 nan\n2 3 1\n", "NaN")]:
        path = mtx(label.replace(" ", "-") + ".mtx", text)
        expect_error(label, ["rsvd", "--input", path, "--rank", "1", "--oversampling", "0", "--output",
                             os.path.join(d, "out-" + label.replace(" ", "-")), "--backend", "host"], needle, status=3)

    # N-D .npy tensors (#56 item 2): tucker takes a 3-D array, C or Fortran order, as the tensor
    # X(i, j, l) = x[i, j, l]; the written core and factors reconstruct it (in FP64) within 1.5 times
    # the error of the projection on the true bases (a tensor of multilinear rank (3, 4, 2) plus
    # 1e-3 noise; a mode mix-up from a wrong order would leave O(1) error).
    g = rng.standard_normal((3, 4, 2))
    u1, u2, u3 = (np.linalg.qr(rng.standard_normal((e, r)))[0] for e, r in ((20, 3), (15, 4), (10, 2)))
    t3 = np.einsum("abc,ia,jb,kc->ijk", g, u1, u2, u3)
    t3 = t3 / np.linalg.norm(t3) + 1e-3 * rng.standard_normal(t3.shape) / np.sqrt(t3.size)
    for order in ("C", "F"):
        checks += 1
        path = os.path.join(d, "t3-%s.npy" % order)
        np.save(path, np.asarray(t3, order=order))
        t_out = os.path.join(d, "tucker-3d-" + order)
        code, out_text, err = run("tucker", "--input", path, "--ranks", "3,4,2", "--output", t_out, "--backend", "host",
                                  "--variant", "two-pass", "-p", "5", "-q", "1")
        ok = code == 0
        if ok:
            core = np.load(os.path.join(t_out, "core.npy")).astype(np.float64)  # the core's mode-1 unfolding
            q = [np.load(os.path.join(t_out, "Q%d.npy" % n)).astype(np.float64) for n in (1, 2, 3)]
            gc = core.reshape((3, 4, 2), order="F")  # first index fastest, as the library keeps tensors
            back = np.einsum("abc,ia,jb,kc->ijk", gc, *q)
            rel = np.linalg.norm(back - t3) / np.linalg.norm(t3)
            best = np.linalg.norm(t3 - np.einsum("abc,ia,jb,kc->ijk", np.einsum("ijk,ia,jb,kc->abc", t3, u1, u2, u3),
                                                 u1, u2, u3)) / np.linalg.norm(t3)
            ok = [x.shape for x in q] == [(20, 3), (15, 4), (10, 2)] and rel < 1.5 * best and "20 x 15 x 10" in out_text
        print(("PASS " if ok else "FAIL ") + "tucker 3-D .npy (%s order): %r" % (
            order, (rel, best) if ok else (code, out_text[-400:], err.strip())))
        if not ok:
            failures.append("tucker 3-D .npy " + order)
    four = os.path.join(d, "t4.npy")
    np.save(four, rng.standard_normal((6, 5, 4, 3)).astype(np.float32))
    code, out_text, err = run("tucker", "--input", four, "--ranks", "2,2,2,2", "--output", os.path.join(d, "t4-out"),
                              "--backend", "host")
    check("tucker 4-D .npy", code == 0 and all(np.load(os.path.join(d, "t4-out", "Q%d.npy" % n)).shape == (e, 2)
                                               for n, e in zip((1, 2, 3, 4), (6, 5, 4, 3))), repr((code, err)))
    expect_error("tucker 3-D with another --shape", ["tucker", "--input", os.path.join(d, "t3-C.npy"), "--shape", "150",
                                                     "--ranks", "3,4", "--output", os.path.join(d, "t3-bad")],
                 "--shape", "3-D", status=3, outdir=os.path.join(d, "t3-bad"))
    np.save(os.path.join(d, "t6.npy"), np.ones((2, 2, 2, 2, 2, 2), np.float32))
    expect_error("tucker 6-D refused", ["tucker", "--input", os.path.join(d, "t6.npy"), "--ranks", "1,1,1,1,1,1",
                                        "--output", os.path.join(d, "t6-out")], "6-D", "5-D", status=3)
    expect_error("rsvd 3-D refused", ["rsvd", "--input", os.path.join(d, "t3-C.npy"), "--rank", "2",
                                      "--output", os.path.join(d, "t3-rsvd")], "3-D array", "matrix", status=3)

    # --precision double (#58 item 4): a float64 .npy of an exactly rank-10 matrix (singular values
    # 1 to 1e-2) stays in FP64: U, S and V written as float64 recover A to 1e-12 (FP64 rounding
    # times the spread; the FP32 run stops near 1e-7), and the report names the working precision.
    # The modes FP64 data does not take yet are refused by name.
    u0, _ = np.linalg.qr(rng.standard_normal((300, 10)))
    v0, _ = np.linalg.qr(rng.standard_normal((200, 10)))
    a64 = (u0 * np.logspace(0, -2, 10)) @ v0.T
    a64_path = os.path.join(d, "a64.npy")
    np.save(a64_path, a64)
    errors = {}
    for precision in ("single", "double"):
        p_out, p_json = os.path.join(d, "p-" + precision), os.path.join(d, precision + ".json")
        code, _, err = run("rsvd", "--input", a64_path, "--rank", "10", "--precision", precision, "--output", p_out,
                           "--backend", "host", "--json", p_json)
        if code != 0:
            errors[precision] = (code, err.strip())
            continue
        uu, ss, vv = (np.load(os.path.join(p_out, f)) for f in ("U.npy", "S.npy", "V.npy"))
        rel = np.linalg.norm(a64 - (uu.astype(np.float64) * ss.ravel()) @ vv.T) / np.linalg.norm(a64)
        errors[precision] = (uu.dtype.name, ss.dtype.name, vv.dtype.name, rel, json.load(open(p_json))["result"]["precision"])
    ok = (errors.get("double", ())[:3] == ("float64",) * 3 and errors["double"][3] < 1e-12 and errors["double"][4] == "double"
          and errors.get("single", ())[:3] == ("float32",) * 3 and errors["single"][3] > 1e-9 and errors["single"][4] == "single")
    check("--precision double keeps FP64 data and factors", ok, repr(errors))
    expect_error("--precision double with --tolerance",
                 ["rsvd", "--input", a64_path, "--tolerance", "0.1", "--precision", "double", "--backend", "host"],
                 "--precision", "--rank only", stdout_empty=True)
    expect_error("--precision quad", ["rsvd", "--input", a64_path, "--rank", "3", "--precision", "quad"], "--precision = quad",
                 stdout_empty=True)
    coordinate = os.path.join(d, "coo.mtx")
    with open(coordinate, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n4 3 2\n1 1 1.0\n3 2 2.0\n")
    expect_error("--precision double with sparse input",
                 ["rsvd", "--input", coordinate, "--rank", "1", "--oversampling", "0", "--precision", "double",
                  "--backend", "host", "--output", os.path.join(d, "p-sparse")], "coo.mtx", "sparse", "dense")

    # Compressed input (#56 item 2): truncated and corrupt gzip data refused naming the file.
    z = gzip.compress(open(good, "rb").read())
    for label, data, needle in [("truncated gzip", z[: len(z) // 2], "truncated gzip"),
                                ("corrupt gzip", z[:20] + bytes(b ^ 0x55 for b in z[20:40]) + z[40:], "gzip"),
                                ("gzip with trailing bytes", z + b"junk", "not gzip data")]:
        path = os.path.join(d, label.replace(" ", "-") + ".npy.gz")
        open(path, "wb").write(data)
        expect_error(label, ["rsvd", "--input", path, "--rank", "3", "--output", os.path.join(d, "gz-out")],
                     os.path.basename(path), needle, status=3)
    gz_good = os.path.join(d, "good.npy.gz")
    open(gz_good, "wb").write(z)
    code, out_text, err = run("rsvd", "--input", gz_good, "--rank", "3", "--output", os.path.join(d, "gz-good"),
                              "--backend", "host")
    check("gzip input read", code == 0 and "60 x 40" in out_text, repr((code, err)))

    # Progress (#56 item 6) goes to stderr: a --json report on stdout stays valid JSON.
    slow = os.path.join(d, "slow.npy")
    np.save(slow, rng.standard_normal((1500, 400)).astype(np.float32))
    code, out_text, err = run("lra", "--input", slow, "--rank", "40", "--refinements", "10", "--products", "fp32,fp16", "--output",
                              os.path.join(d, "slow-out"), "--backend", "host", "--json", "-")
    import json as json_module
    start = out_text.find("\n{")
    try:
        parsed = json_module.loads(out_text[start:]) if start >= 0 else None
    except ValueError:
        parsed = None
    import re
    progress_line = re.compile(r"^\s*\[\s*[0-9.]+ s\] .* done", re.M)
    check("progress on stderr, not in stdout's report", code == 0 and parsed is not None and parsed.get("status") == 0
          and not progress_line.search(out_text), repr((code, out_text[-300:], err[-300:])))

    # --json FILE (#56 item 6): a machine-readable report, also after an error.
    import json
    report = os.path.join(d, "report.json")
    code, _, err = run("rsvd", "--input", good, "--rank", "3", "--output", os.path.join(d, "json-out"), "--backend", "host",
                       "--json", report)
    r = json.load(open(report)) if os.path.exists(report) else {}
    check("--json report", code == 0 and r.get("status") == 0 and r.get("command") == "rsvd"
          and r.get("options", {}).get("rank") == 3 and len(r.get("result", {}).get("singular_values", [])) == 3
          and r.get("input", {}).get("rows") == 60 and sorted(r.get("output", {}).get("files", [])) == ["S.npy", "U.npy", "V.npy"],
          repr((code, err, r)))
    os.remove(report) if os.path.exists(report) else None
    code, _, err = run("qr", "--input", missing, "--output", os.path.join(d, "json-err"), "--json", report)
    r = json.load(open(report)) if os.path.exists(report) else {}
    check("--json report after an error", code == 3 and r.get("status") == 3 and "never-read.npy" in r.get("error", ""),
          repr((code, err, r)))

print("%d passed, %d failed" % (checks - len(failures), len(failures)))
sys.exit(1 if failures else 0)
