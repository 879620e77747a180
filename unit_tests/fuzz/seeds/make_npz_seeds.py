"""Writes the .npz seeds of unit_tests/fuzz/seeds/npz (test_io reads them; fuzz_npz starts from them):
scipy.sparse.save_npz files of A = [[1, 0, 2, 0], [0, 0, 0, 3], [4, 5, 0, 0]] and broken variants.
Usage: make_npz_seeds.py DIR (with numpy and scipy, e.g. .venv-test/bin/python)."""
import os
import sys

import numpy as np
import scipy.sparse

out = sys.argv[1]
A = np.array([[1, 0, 2, 0], [0, 0, 0, 3], [4, 5, 0, 0]], dtype=np.float64)


def members(path, fmt, shape, indptr, indices, data, compressed=True):
    """The members save_npz writes, as np.savez(_compressed) writes them, without scipy's checks."""
    (np.savez_compressed if compressed else np.savez)(
        os.path.join(out, path), format=np.array(fmt), shape=np.array(shape, dtype=np.int64),
        indptr=np.array(indptr), indices=np.array(indices), data=np.array(data))


scipy.sparse.save_npz(os.path.join(out, "csr.npz"), scipy.sparse.csr_matrix(A.astype(np.float32)))
# CSC, stored, column 0's indices unsorted and a duplicate of (2, 0) split as 3 + 1, int64 indices.
members("csc_unsorted.npz", "csc", (3, 4), np.array([0, 3, 4, 5, 6], dtype=np.int64),
        np.array([2, 0, 2, 2, 0, 1], dtype=np.int64), [3.0, 1.0, 1.0, 5.0, 2.0, 3.0], compressed=False)
members("coo.npz", "coo", (3, 4), [0], [0], [1.0])
members("bad_index.npz", "csr", (3, 4), np.array([0, 2, 3, 5], dtype=np.int32),
        np.array([0, 4, 3, 0, 1], dtype=np.int32), np.ones(5, dtype=np.float32))
members("bad_indptr.npz", "csr", (3, 4), np.array([0, 3, 2, 5], dtype=np.int32),
        np.array([0, 2, 3, 0, 1], dtype=np.int32), np.ones(5, dtype=np.float32))
np.savez(os.path.join(out, "no_format.npz"), data=np.ones(3))
