"""Host PCA of Fashion-MNIST: `randnla pca --backend host` against scikit-learn's randomized PCA
with the same components (16) and power iterations (2), on the same machine in one run.

Compares the RSVD's total (the tool's phase report) with scikit-learn's fit, and the whole command
(load, centre, RSVD, report, PNGs; the exact-spectrum comparison left out, as --exact auto does
for this shape) with scikit-learn's load plus fit. Each is the median of --repeats runs.

Usage: python3 perf_tests/bench_pca_host.py path/to/randnla [--repeats 5]
"""
import argparse
import gzip
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import sklearn
from sklearn.decomposition import PCA
from threadpoolctl import threadpool_info

DATA = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
COMPONENTS, POWER_ITERATIONS = 16, 2


def load_fashion_mnist():
    with gzip.open(DATA, "rb") as f:
        raw = f.read()
    return np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(-1, 784).astype(np.float32) / 255.0


def time_sklearn():
    t0 = time.perf_counter()
    x = load_fashion_mnist()
    t1 = time.perf_counter()
    PCA(COMPONENTS, svd_solver="randomized", iterated_power=POWER_ITERATIONS, random_state=0).fit(x)
    t2 = time.perf_counter()
    return (t1 - t0) * 1e3, (t2 - t1) * 1e3


def time_randnla(binary, out):
    t0 = time.perf_counter()
    text = subprocess.run([binary, "pca", "--backend", "host", "--rank", str(COMPONENTS), "--power-iterations",
                           str(POWER_ITERATIONS), "--output", out, "--force"], check=True, capture_output=True,
                          text=True).stdout
    wall = (time.perf_counter() - t0) * 1e3
    rsvd = float(re.search(r"total ([0-9.]+) ms", text).group(1))
    sketch = re.search(r"sketch: ([^;]+);", text).group(1)
    return wall, rsvd, sketch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("randnla")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    blas = [(i["internal_api"], i.get("architecture"), i["num_threads"]) for i in threadpool_info()]
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}, BLAS {blas}")
    with tempfile.TemporaryDirectory() as out:
        ours = [time_randnla(args.randnla, out) for _ in range(args.repeats)]
    theirs = [time_sklearn() for _ in range(args.repeats)]
    wall = statistics.median(o[0] for o in ours)
    rsvd = statistics.median(o[1] for o in ours)
    load = statistics.median(t[0] for t in theirs)
    fit = statistics.median(t[1] for t in theirs)
    print(f"randnla sketch: {ours[0][2]}")
    print(f"{'':32s} {'randnla ms':>12s} {'scikit-learn ms':>16s} {'ratio':>7s}")
    print(f"{'RSVD / fit':32s} {rsvd:12.1f} {fit:16.1f} {rsvd / fit:7.2f}")
    print(f"{'whole command / load + fit':32s} {wall:12.1f} {load + fit:16.1f} {wall / (load + fit):7.2f}")
    return 0 if rsvd <= fit and wall <= load + fit else 1


if __name__ == "__main__":
    sys.exit(main())
