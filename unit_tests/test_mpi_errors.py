"""The MPI example on bad input, on 2 ranks: whether every rank or one rank alone gets a bad
argument, a missing file or a shape the others do not have, every rank prints the library's message
(naming the rank it happened on) and the job ends with a non-zero status, by itself (no hang: a
timeout fails the case), with no uncaught exception or abort. A good run beside them, so that the
cases fail for the reason they test. Usage: test_mpi_errors.py MPIEXEC EXAMPLE"""
import os
import subprocess
import sys
import tempfile

import numpy as np

MPIEXEC, EXAMPLE = sys.argv[1], sys.argv[2]
PREFIX = "example_distributed_pca (rank %d): "
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1",
           OMP_PROC_BIND="false")
failures = []


def mpirun(*per_rank):
    """One rank per argument list (MPMD: `-np 1 EXAMPLE args : -np 1 EXAMPLE args`)."""
    cmd = [MPIEXEC, "--oversubscribe"]
    for i, args in enumerate(per_rank):
        cmd += ([":"] if i else []) + ["-np", "1", EXAMPLE, *args]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=90, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", "", ""
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as d:
    rng = np.random.default_rng(3)
    def save_idx(path, images):
        """An IDX file of unsigned bytes (magic 0x803), as the example reads."""
        count, rows, cols = images.shape
        with open(path, "wb") as f:
            f.write(np.array([0x803, count, rows, cols], dtype=">u4").tobytes() + images.astype(np.uint8).tobytes())

    good = os.path.join(d, "good.idx")
    # Ten strong components over noise, as pixels in [0, 255].
    x = rng.standard_normal((200, 10)) @ rng.standard_normal((10, 40)) + 0.05 * rng.standard_normal((200, 40))
    save_idx(good, (255 * (x - x.min()) / (x.max() - x.min())).reshape(200, 8, 5))
    other = os.path.join(d, "other.idx")
    save_idx(other, rng.integers(0, 256, (200, 6, 5)))
    missing = os.path.join(d, "missing.idx")

    code, out, err = mpirun([good], [good])
    ok = code == 0 and "component" in out
    print(("PASS " if ok else "FAIL ") + "good run: exit %s" % code + ("" if ok else " %r" % ((out, err),)))
    if not ok:
        failures.append("good run")

    for label, ranks, needle in [
            ("missing file on every rank", ([missing], [missing]), "cannot open"),
            ("missing file on rank 1 alone", ([good], [missing]), "rank 1: cannot open"),
            ("surplus argument on every rank", ([good, "extra"], [good, "extra"]), "'extra': is surplus"),
            ("surplus argument on rank 0 alone", ([good, "extra"], [good]), "rank 0: invalid argument"),
            ("shapes differ between the ranks", ([good], [other]), "input columns"),
            ("a directory on rank 1", ([good], [d]), "is a directory")]:
        code, out, err = mpirun(*ranks)
        lines = [l for l in err.splitlines() if l.startswith("example_distributed_pca")]
        each = all(any(l.startswith(PREFIX % r) and needle in l for l in lines) for r in (0, 1))
        crashed = any(s in err for s in ("terminate called", "Aborted", "Segmentation", "signal", "MPI_ABORT"))
        ok = code not in (0, "timeout") and each and not crashed
        print(("PASS " if ok else "FAIL ") + "%s: exit %s, %r" % (label, code, lines if ok else err[-1500:]))
        if not ok:
            failures.append(label)

print("%d failed" % len(failures))
sys.exit(1 if failures else 0)
