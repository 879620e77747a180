#!/usr/bin/env python3
"""Before/after table of bench_gemm or bench_rsvd over interleaved rounds (scripts/gpu_run.sh).

Usage: perf_tests/compare_rounds.py gemm|rsvd LOG_DIR
Reads LOG_DIR/bench_<what>_baseline_<r>.txt and bench_<what>_current_<r>.txt for every round r and
prints, per row, the median over the rounds (min-max) of each binary, the change of the medians and
the change of the best rounds: TFLOP/s for bench_gemm (+: faster), ms for bench_rsvd (-: faster).
Both changes, because some rows are bimodal (a binary's rounds fall in two clusters several percent
apart) and the median of a few rounds then lands on either cluster by chance.
"""
import glob
import re
import statistics
import sys


def gemm_rows(path):
    rows = {}
    for line in open(path):
        tok = line.split()
        if len(tok) < 5 or tok[0] == "shape" or not re.match(r"^[0-9.]+$", tok[-3]):
            continue
        rows[(tok[0], " ".join(tok[1:-3]))] = float(tok[-2])  # TFLOP/s
    return rows


def rsvd_rows(path):
    rows = {}
    for line in open(path):
        m = re.match(r"n=(\d+) q=(\d+) (\S+)\s+total\s+([0-9.]+) ms.*error", line)
        if m:  # a sketch's row (the line of auto's phases has no error)
            rows[(m.group(1), m.group(2), m.group(3))] = float(m.group(4))
    return rows


def rounds(log_dir, what, run):
    return sorted(glob.glob("%s/bench_%s_%s_*.txt" % (log_dir, what, run)))


def main(what, log_dir):
    parse = gemm_rows if what == "gemm" else rsvd_rows
    runs = {run: [parse(p) for p in rounds(log_dir, what, run)] for run in ("baseline", "current")}
    count = min(len(r) for r in runs.values())
    unit = "TFLOP/s" if what == "gemm" else "ms"
    print("%d rounds; each cell: median (min-max) in %s" % (count, unit))
    print("| row | baseline | current | change (medians) | change (best) |")
    print("| --- | --- | --- | --- | --- |")
    keys = [k for k in runs["current"][0] if all(k in r for rs in runs.values() for r in rs)] if count else []
    for key in keys:
        cells, medians, bests = [], [], []
        for run in ("baseline", "current"):
            values = [r[key] for r in runs[run]]
            medians.append(statistics.median(values))
            bests.append(max(values) if what == "gemm" else min(values))
            cells.append("%.3f (%.3f-%.3f)" % (medians[-1], min(values), max(values)))
        change = 100.0 * (medians[1] / medians[0] - 1.0)
        best_change = 100.0 * (bests[1] / bests[0] - 1.0)
        print("| %s | %s | %s | %+.1f%% | %+.1f%% |" % (" ".join(key), cells[0], cells[1], change, best_change))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("gemm", "rsvd"):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
