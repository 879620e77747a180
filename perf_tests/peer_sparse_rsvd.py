"""Peers of randnla's sparse RSVD: what a user would call instead, on the same sparse matrices as
perf_tests/bench_sparse_rsvd, with the same rank k, oversampling p (l = k + p) and power iterations q = 2.

Peers
  --device cuda (or cpu with torch importable):
    torch.svd_lowrank(A, q=l, niter=2), A a torch sparse CSR tensor, FP32, int32 indices (a case
      that fails other than for memory is retried with int64: input= says which).
    torch.pca_lowrank(A, q=l, center=True, niter=2). It takes sparse COO only (a CSR input fails in
      its column mean, torch 2.11), so A is handed over as COO (input=coo-int64). Its "implicit"
      centring still forms the centring matrix M = 1 mu^T densely (torch.sparse.mm of an n x 1 sparse
      column by a dense 1 x m row, then GEMMs with M), about 2 m n 4 bytes: a case that cannot hold
      that is printed as skipped: out of memory without being tried.
    TF32 is off; one warm-up call, then the median (and minimum) of --reps calls, each between
    torch.cuda.synchronize() calls, in milliseconds. Only the first k of the l columns are scored.
  --device cpu:
    scikit-learn TruncatedSVD(n_components=k, algorithm='randomized', n_iter=2, n_oversamples=p,
      power_iteration_normalizer='QR', random_state=0) on a scipy CSR float32 matrix; the time is
      of fit_transform (fit calls it; in scikit-learn 1.9 it also forms A V for the returned
      A V ~ U S, and its column variances), one warm-up then the median of --reps calls.
    U = fit_transform(A) / S: that is A V / S, not the U of the inner randomized SVD (which scikit-
      learn discards), so its U S V^T = A V V^T, the best approximation with that V: its rel_err
      can only be at or below that of the inner factorization.

Error, as the C++ benchmark computes it: rel_err = sqrt(max(||A||_F^2 - 2 tr(S U^T A V)
+ tr((S U^T U S)(V^T V)), 0)) / ||A||_F, with A V a sparse product, U^T A V, U^T U and V^T V k x k
FP32 products, and the sum in FP64. For PCA (Xc = X - 1 mu^T, mu the column means, in FP64):
A V becomes X V - 1 (mu^T V) and ||Xc||_F^2 = ||X||_F^2 - m ||mu||^2.
--check-dense compares this formula with ||A - U S V^T||_F / ||A||_F in dense FP64 on small
matrices (the 12^3 Laplacian, a random sparse one, one with singular values near 0.9^i) for every
peer here, and fails past 3e-5; it also checks the Laplacian against a kron sum of 1-D [-1, 2, -1].

Matrices
  --laplacian N   3-D 7-point Laplacian, N^3 x N^3, Dirichlet boundary: 6 on the diagonal, -1 per
                  neighbour, row r = i + N j + N^2 l, sorted columns (N = 243: 14.3M rows, 1.0e8 nnz).
  --mtx PATH      Matrix Market file (scipy.io.mmread), as CSR float32.
  --random m,n,density   uniform positions and [0, 1) values, seed 0.
Each may be repeated; the build (or read) time is printed per matrix.

On the GPU machine (python3 there has torch, scipy, scikit-learn; the N = 243 build takes ~3 s and
~1 GiB of host memory; torch.pca_lowrank is skipped there, its dense M being 1.5 PiB):
  python3 perf_tests/peer_sparse_rsvd.py --device cuda --check-dense
  python3 perf_tests/peer_sparse_rsvd.py --device cuda --laplacian 243 --ranks 64,256 \\
      --oversampling 10 --reps 5 --json peer_sparse_rsvd.json
On a host:
  python3 perf_tests/peer_sparse_rsvd.py --device cpu --laplacian 40 --ranks 16
  python3 perf_tests/peer_sparse_rsvd.py --device cpu --check-dense
"""
import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np
import scipy
import scipy.io
import scipy.sparse as sp

POWER_ITERATIONS = 2
# FP32 Gram products absorb terms below half an ulp of the running sum: with U concentrated on few
# rows, torch.pca_lowrank's U on the decaying matrix loses 3e-5 of U^T U and 8e-6 of rel_err.
DENSE_CHECK_TOLERANCE = 3e-5


def try_import_torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


# ---------------------------------------------------------------- matrices

def laplacian_3d(grid):
    """7-point stencil built row by row in column order, so the CSR comes out sorted with int32
    indices and no COO sum (a kron sum of 1.0e8 entries needs int64 and several sorts)."""
    rows = grid ** 3
    r = np.arange(rows, dtype=np.int32)
    i, j, l = r % grid, (r // grid) % grid, r // (grid * grid)
    offsets = np.array([-grid * grid, -grid, -1, 0, 1, grid, grid * grid], dtype=np.int32)
    present = np.stack([l > 0, j > 0, i > 0, np.ones(rows, bool), i < grid - 1, j < grid - 1, l < grid - 1],
                       axis=1)
    del i, j, l
    indices = (r[:, None] + offsets[None, :])[present]
    stencil = np.where(offsets == 0, 6.0, -1.0).astype(np.float32)
    data = np.broadcast_to(stencil, present.shape)[present]
    indptr = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(present.sum(axis=1, dtype=np.int32), out=indptr[1:])
    a = sp.csr_matrix((data, indices, indptr), shape=(rows, rows), copy=False)
    a.has_sorted_indices = True
    return a


def laplacian_3d_by_kron(grid):
    """The same matrix as a kron sum of 1-D [-1, 2, -1], for the check only."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(grid, grid))
    eye = sp.identity(grid)
    return (sp.kron(eye, sp.kron(eye, t)) + sp.kron(eye, sp.kron(t, eye)) + sp.kron(t, sp.kron(eye, eye))).tocsr()


def read_mtx(path):
    a = sp.csr_matrix(scipy.io.mmread(path), dtype=np.float32)
    a.sum_duplicates()
    a.sort_indices()
    return a


def random_sparse(spec):
    """Uniform positions drawn with replacement (duplicates summed, so nnz is a little under
    density m n): scipy.sparse.random samples without replacement and takes minutes at 1e6 nnz."""
    m, n, density = spec.split(",")
    m, n = int(m), int(n)
    count = int(round(float(density) * m * n))
    rng = np.random.default_rng(0)
    rows = rng.integers(0, m, count, dtype=np.int32)
    cols = rng.integers(0, n, count, dtype=np.int32)
    a = sp.csr_matrix((rng.random(count, dtype=np.float32), (rows, cols)), shape=(m, n))
    a.sum_duplicates()
    a.sort_indices()
    return a


def decaying_spectrum(m, n):
    """Singular values near 0.9^i: a small rel_err, where the formula's cancellation shows."""
    diagonal = sp.diags(0.9 ** np.arange(n), shape=(m, n), format="csr")
    noise = 1e-4 * sp.random(m, n, density=0.002, format="csr", random_state=1)
    a = sp.csr_matrix(diagonal + noise, dtype=np.float32)
    a.sort_indices()
    return a


def matrices(args):
    """(name, scipy CSR float32, build seconds) for each matrix option, built one at a time."""
    for grid in args.laplacian:
        start = time.perf_counter()
        a = laplacian_3d(grid)
        yield f"laplacian3d-{grid}", a, time.perf_counter() - start
    for path in args.mtx:
        start = time.perf_counter()
        a = read_mtx(path)
        yield os.path.splitext(os.path.basename(path))[0], a, time.perf_counter() - start
    for spec in args.random:
        start = time.perf_counter()
        a = random_sparse(spec)
        yield "random-" + spec.replace(",", "-"), a, time.perf_counter() - start


# ---------------------------------------------------------------- error

def as_float32(x):
    return x.astype(np.float32) if isinstance(x, np.ndarray) else x.float()


def as_float64(x):
    if isinstance(x, np.ndarray):
        return x.astype(np.float64)
    return x.double().cpu().numpy()


def relative_error(a, norm_sq, u, s, v, mu=None):
    """The benchmark's formula. a is scipy CSR or a torch sparse tensor, u, s, v FP32 of its kind;
    mu (FP64) for the centred matrix. Only k x k results and s go to FP64."""
    av = a @ v
    if mu is not None:
        av = av - (as_float32(mu) @ v)[None, :]
        norm_sq = norm_sq - a.shape[0] * float((mu * mu).sum())
    ut_av, gram_u, gram_v = (as_float64(x) for x in (u.T @ av, u.T @ u, v.T @ v))
    s = as_float64(s)
    cross = float(s @ np.diag(ut_av))
    quadratic = float(((s[:, None] * gram_u * s[None, :]) * gram_v.T).sum())
    return math.sqrt(max(norm_sq - 2.0 * cross + quadratic, 0.0) / norm_sq)


def dense_relative_error(a_csr, u, s, v, centred):
    a = a_csr.toarray().astype(np.float64)
    if centred:
        a -= a.mean(axis=0, keepdims=True)
    u, s, v = as_float64(u), as_float64(s), as_float64(v)
    return float(np.linalg.norm(a - (u * s) @ v.T) / np.linalg.norm(a))


# ---------------------------------------------------------------- peers

class Skipped(Exception):
    pass


def is_out_of_memory(error):
    text = str(error).lower()
    return "out of memory" in text or "can't allocate memory" in text or isinstance(error, MemoryError)


class SklearnTruncatedSvd:
    name, input_kind = "sklearn.TruncatedSVD", "scipy-csr-int32"

    def __init__(self, a_csr, device, index_bits=32):
        self.a = a_csr
        self.norm_sq = float(np.sum(a_csr.data.astype(np.float64) ** 2))

    def run(self, k, p):
        from sklearn.decomposition import TruncatedSVD
        svd = TruncatedSVD(n_components=k, algorithm="randomized", n_iter=POWER_ITERATIONS, n_oversamples=p,
                           power_iteration_normalizer="QR", random_state=0)
        us = svd.fit_transform(self.a)
        s = svd.singular_values_.astype(np.float32)
        return us / np.where(s > 0, s, 1), s, np.ascontiguousarray(svd.components_.T)

    def sync(self):
        pass

    def error(self, result):
        return relative_error(self.a, self.norm_sq, *result)

    def free(self):
        pass


class TorchSvdLowrank:
    name, input_kind, centred = "torch.svd_lowrank", "csr-int32", False

    def __init__(self, a_csr, device, index_bits=32):
        self.torch = try_import_torch()
        self.device = device
        self.a = to_torch_csr(self.torch, a_csr, device, index_bits)
        if not self.centred:
            self.input_kind = f"csr-int{index_bits}"
        self.norm_sq = float(np.sum(a_csr.data.astype(np.float64) ** 2))
        self.input = self.a

    def call(self, l):
        return self.torch.svd_lowrank(self.input, q=l, niter=POWER_ITERATIONS)

    def run(self, k, p):
        self.torch.manual_seed(0)
        u, s, v = self.call(k + p)
        return u[:, :k].contiguous(), s[:k].contiguous(), v[:, :k].contiguous()

    def sync(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def error(self, result):
        return relative_error(self.a, self.norm_sq, *result, mu=self.column_means() if self.centred else None)

    def column_means(self):
        cols = self.a.col_indices().long()
        sums = self.torch.bincount(cols, weights=self.a.values().double(), minlength=self.a.shape[1])
        return sums / self.a.shape[0]

    def free(self):
        self.a = self.input = None
        gc.collect()
        if self.device == "cuda":
            self.torch.cuda.empty_cache()


class TorchPcaLowrank(TorchSvdLowrank):
    name, input_kind, centred = "torch.pca_lowrank", "coo-int64", True

    def __init__(self, a_csr, device, index_bits=32):
        m, n = a_csr.shape
        need = 2 * m * n * 4
        if need > 0.9 * available_memory(try_import_torch(), device):
            raise Skipped(f"out of memory (its dense m x n centring matrix needs about {need / 2**30:.3g} GiB)")
        super().__init__(a_csr, device, index_bits)
        self.input = self.a.to_sparse_coo().coalesce()

    def call(self, l):
        return self.torch.pca_lowrank(self.input, q=l, center=True, niter=POWER_ITERATIONS)


def to_torch_csr(torch, a_csr, device, index_bits):
    index = torch.int32 if index_bits == 32 else torch.int64
    return torch.sparse_csr_tensor(torch.from_numpy(a_csr.indptr).to(index), torch.from_numpy(a_csr.indices).to(index),
                                   torch.from_numpy(a_csr.data), size=a_csr.shape, device=device)


def available_memory(torch, device):
    if device == "cuda":
        return torch.cuda.mem_get_info()[0]
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def peer_classes(device, wanted):
    torch = try_import_torch()
    found = [] if device == "cuda" else [SklearnTruncatedSvd]
    if torch is not None:
        found += [TorchSvdLowrank, TorchPcaLowrank]
    return [c for c in found if not wanted or c.name in wanted]


# ---------------------------------------------------------------- timing and output

def time_calls(peer, k, p, warmup, reps):
    """Median and minimum milliseconds of reps calls after warmup ones, and the last result."""
    for _ in range(warmup):
        result = peer.run(k, p)
        del result
    times, result = [], None
    for _ in range(reps):
        result = None  # the last call's U and V would double the peak (2 x m x l FP32 at l = 266)
        peer.sync()
        start = time.perf_counter()
        result = peer.run(k, p)
        peer.sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times), result


def versions(device):
    torch = try_import_torch()
    try:
        import sklearn
        sklearn_version = sklearn.__version__
    except ImportError:
        sklearn_version = "none"
    info = {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn_version,
            "torch": torch.__version__ if torch else "none"}
    if device == "cuda":
        info["device_name"] = torch.cuda.get_device_name()
    else:
        info["device_name"] = cpu_name()
    if torch is not None:
        info["torch_threads"] = torch.get_num_threads()
    return info


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() + f" x{os.cpu_count()}"
    except OSError:
        pass
    return platform.processor() or platform.machine()


def format_row(row):
    keys = ["peer", "matrix", "m", "n", "nnz", "k", "l", "q"]
    head = " ".join(f"{key}={row[key]}" for key in keys)
    if row["status"] != "ok":
        return f"{head} input={row['input']} {row['status']}"
    return f"{head} ms={row['ms']:.3f} rel_err={row['rel_err']:.6e} min_ms={row['min_ms']:.3f} input={row['input']}"


def run_case(peer_class, a_csr, device, k, p, args, base, index_bits):
    """One row; a failure other than memory is recorded too, so one GPU run covers every case."""
    row = dict(base, peer=peer_class.name, k=k, l=k + p, q=POWER_ITERATIONS, input=peer_class.input_kind,
               reps=args.reps, status="ok")
    peer = None
    try:
        peer = peer_class(a_csr, device, index_bits)
        row["input"] = peer.input_kind
        row["ms"], row["min_ms"], result = time_calls(peer, k, p, args.warmup, args.reps)
        row["rel_err"] = peer.error(result)
        del result
    except Skipped as reason:
        row["status"] = f"skipped: {reason}"
    except (RuntimeError, MemoryError) as error:
        if is_out_of_memory(error):
            row["status"] = "skipped: out of memory"
        else:
            row["status"] = f"skipped: error: {type(error).__name__}: {str(error).splitlines()[0][:200]}"
    finally:
        if peer is not None:
            peer.free()
    return row


def benchmark(args):
    info = versions(args.device)
    print("# peer_sparse_rsvd " + " ".join(f"{key}={str(value).replace(' ', '_')}" for key, value in info.items())
          + f" device={args.device} oversampling={args.oversampling} reps={args.reps} warmup={args.warmup}",
          flush=True)
    rows = []
    classes = peer_classes(args.device, args.peers)
    for name, a, build_s in matrices(args):
        base = dict(info, matrix=name, m=a.shape[0], n=a.shape[1], nnz=a.nnz, build_s=build_s, device=args.device)
        print(f"# matrix={name} m={a.shape[0]} n={a.shape[1]} nnz={a.nnz} build_s={build_s:.2f}", flush=True)
        for peer_class in classes:
            for k in args.ranks:
                row = run_case(peer_class, a, args.device, k, args.oversampling, args, base, args.index_bits)
                print(format_row(row), flush=True)
                rows.append(row)
                if row["status"].startswith("skipped: error") and row["input"] == "csr-int32":
                    # int32 CSR is the like-for-like input; int64 is what torch is surely built for
                    row = run_case(peer_class, a, args.device, k, args.oversampling, args, base, 64)
                    print(format_row(row), flush=True)
                    rows.append(row)
        del a
        gc.collect()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


def check_dense(args):
    """The formula against dense FP64 for every peer here; also the Laplacian against a kron sum."""
    kron = laplacian_3d_by_kron(12)
    built = laplacian_3d(12)
    same_laplacian = (built.indices.dtype == np.int32 and np.array_equal(built.indptr, kron.indptr)
                      and np.array_equal(built.indices, kron.indices) and np.array_equal(built.data, kron.data))
    print(f"laplacian3d-12 built = kron sum of 1-D [-1, 2, -1]: {same_laplacian}")
    worst = 0.0 if same_laplacian else math.inf
    for name, a in [("laplacian3d-12", built), ("random-3000-800-0.01", random_sparse("3000,800,0.01")),
                    ("decaying-2000-500", decaying_spectrum(2000, 500))]:
        for peer_class in peer_classes(args.device, args.peers):
            for k in (8, 32):
                peer = peer_class(a, args.device, args.index_bits)
                result = peer.run(k, args.oversampling)
                formula = peer.error(result)
                dense = dense_relative_error(a, *result, centred=getattr(peer, "centred", False))
                worst = max(worst, abs(formula - dense))
                print(f"peer={peer.name} matrix={name} k={k} rel_err formula={formula:.9e} dense_fp64={dense:.9e} "
                      f"diff={formula - dense:+.2e}")
                peer.free()
    print(f"largest |formula - dense| = {worst:.2e} (tolerance {DENSE_CHECK_TOLERANCE:g})")
    return 0 if worst <= DENSE_CHECK_TOLERANCE else 1


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--laplacian", type=int, action="append", default=[], metavar="N")
    parser.add_argument("--mtx", action="append", default=[], metavar="PATH")
    parser.add_argument("--random", action="append", default=[], metavar="m,n,density")
    parser.add_argument("--ranks", type=lambda s: [int(x) for x in s.split(",")], default=[64, 256])
    parser.add_argument("--oversampling", type=int, default=10)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--peers", type=lambda s: s.split(","), default=[],
                        help="subset: sklearn.TruncatedSVD,torch.svd_lowrank,torch.pca_lowrank")
    parser.add_argument("--index-bits", type=int, choices=[32, 64], default=32,
                        help="index width of torch's CSR input (an int32 case that fails is retried with int64)")
    parser.add_argument("--json", metavar="OUT")
    parser.add_argument("--check-dense", action="store_true")
    return parser.parse_args(argv)


def configure_torch():
    """FP32 products in FP32: no TF32; quiet about torch's sparse beta warnings."""
    torch = try_import_torch()
    if torch is None:
        return
    warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
    warnings.filterwarnings("ignore", message="Sparse invariant checks are implicitly disabled")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def main(argv):
    args = parse_args(argv)
    configure_torch()
    if args.check_dense:
        return check_dense(args)
    if not (args.laplacian or args.mtx or args.random):
        print("no matrix: give --laplacian N, --mtx PATH or --random m,n,density", file=sys.stderr)
        return 2
    return benchmark(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
