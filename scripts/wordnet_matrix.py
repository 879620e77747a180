#!/usr/bin/env python3
"""Writes the WordNet 3.0 synset relation graph as a sparse Matrix Market file:

    python3 scripts/wordnet_matrix.py OUT.mtx

Source: Debian's `wordnet-base` package (scripts/install_deps.sh installs it), the WordNet 3.0
database in /usr/share/wordnet/data.{noun,verb,adj,adv}. Those files are in the wndb(5WN) format:
lines starting with two spaces are the licence; every other line is one synset,

    synset_offset lex_filenum ss_type w_cnt word lex_id [word lex_id...] p_cnt [ptr...] [frames...] | gloss

with w_cnt in two-digit hexadecimal, p_cnt in decimal and each ptr four fields,
`pointer_symbol synset_offset pos source/target` (pos n, v, a, r; an adjective satellite, ss_type
or pos `s`, lives in data.adj like any adjective).

The matrix: one row and one column per synset of all four parts of speech, numbered in file order
(nouns, verbs, adjectives, adverbs; within a file by line), so that (pos, synset_offset) -> index.
A[i, j] is the number of pointers from synset i to synset j, of every type, the lexical pointers
between single words included (several pointers between the same two synsets add up). The result
is square (117,659 synsets), unsymmetric and very sparse, a real matrix with a slowly decaying
spectrum: a test input for the sparse RSVD and PCA. Written by scipy.io.mmwrite as a coordinate
real general file, entries in row-major order, so the output is the same on every run.
Prints rows, cols and nnz.
"""
import sys

import numpy as np
import scipy.io
import scipy.sparse

WORDNET = "/usr/share/wordnet"
FILES = (("n", "data.noun"), ("v", "data.verb"), ("a", "data.adj"), ("r", "data.adv"))
FILE_OF_POS = {"n": "n", "v": "v", "a": "a", "s": "a", "r": "r"}  # satellites are in data.adj


def synset_lines(name):
    with open("%s/%s" % (WORDNET, name), encoding="latin-1") as f:
        for line in f:
            if not line.startswith("  "):
                yield line


def pointers(line):
    """The (pos, target offset) of every pointer in one synset line."""
    fields = line.split(" | ", 1)[0].split()
    w_cnt = int(fields[3], 16)
    at = 4 + 2 * w_cnt
    p_cnt = int(fields[at])
    ptrs = fields[at + 1: at + 1 + 4 * p_cnt]
    return [(FILE_OF_POS[ptrs[i + 2]], int(ptrs[i + 1])) for i in range(0, len(ptrs), 4)]


def read_synsets():
    """The synsets' (pos, offset) -> index in file order, and each synset's pointer list."""
    index, outgoing = {}, []
    for pos, name in FILES:
        for line in synset_lines(name):
            offset = int(line[:8])
            if int(line.split(None, 1)[0]) != offset:
                raise ValueError("%s: line does not start with its offset: %r" % (name, line[:40]))
            index[(pos, offset)] = len(outgoing)
            outgoing.append(pointers(line))
    return index, outgoing


def relation_matrix():
    index, outgoing = read_synsets()
    rows, cols = [], []
    for i, targets in enumerate(outgoing):
        for target in targets:
            rows.append(i)
            cols.append(index[target])  # a pointer to a missing synset is a KeyError: a damaged database
    n = len(outgoing)
    ones = np.ones(len(rows), dtype=np.float64)
    a = scipy.sparse.coo_matrix((ones, (rows, cols)), shape=(n, n)).tocsr()  # duplicates summed
    a.sort_indices()
    return a


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: wordnet_matrix.py OUT.mtx")
    a = relation_matrix()
    scipy.io.mmwrite(sys.argv[1], a.tocoo(), comment="WordNet 3.0 synset relation graph (scripts/wordnet_matrix.py)",
                     field="real", symmetry="general")
    print("rows %d cols %d nnz %d" % (a.shape[0], a.shape[1], a.nnz))


if __name__ == "__main__":
    main()
