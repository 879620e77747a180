#!/usr/bin/env python3
"""Before/after table of a benchmark over interleaved rounds (scripts/gpu_run.sh).

Usage: perf_tests/compare_rounds.py gemm|rsvd|qr|tucker|lra LOG_DIR
Reads LOG_DIR/bench_<what>_baseline_<r>.txt and bench_<what>_current_<r>.txt for every round r and
prints, per row, the median over the rounds (min-max) of each binary, the change of the medians and
the change of the best rounds: TFLOP/s for bench_gemm (+: faster), ms for the others (-: faster).
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


def same_name(sketch):
    """A sketch's row under today's name: before #53 item 3 the split products were "shgemm-fp16"
    and "shgemm-tf32"."""
    return {"shgemm-fp16": "split-fp16", "shgemm-tf32": "split-tf32"}.get(sketch, sketch)


def rsvd_rows(path):
    rows = {}
    for line in open(path):
        m = re.match(r"n=(\d+) q=(\d+) (\S+)\s+total\s+([0-9.]+) ms.*error", line)
        if m:  # a sketch's row (the line of auto's phases has no error)
            rows[(m.group(1), m.group(2), same_name(m.group(3)))] = float(m.group(4))
    return rows


def qr_rows(path):
    rows = {}
    for line in open(path):
        m = re.match(r"\s*(\d+ x \d+)\s+(\S.*?)\s+([0-9.]+) ms", line)
        if m:
            rows[(m.group(1).replace(" ", ""), m.group(2))] = float(m.group(3))
    return rows


def tucker_rows(path):
    rows, case = {}, ""
    for line in open(path):
        if re.match(r"^\d+(x\d+)+, ranks", line):
            case = line.split(",")[0] + " r" + line.split("ranks")[1].split()[0]
        m = re.match(r"^  (\S.*?)\s+([0-9.]+) ms  x", line)
        if m:
            rows[(case, m.group(1))] = float(m.group(2))
    return rows


def lra_rows(path):
    rows = {}
    for line in open(path):
        m = re.match(r"^lra (k=\d+)\s+(\S.*?)\s+([0-9.]+) ms", line)
        if m:
            rows[(m.group(1), m.group(2))] = float(m.group(3))
    return rows


PARSERS = {"gemm": gemm_rows, "rsvd": rsvd_rows, "qr": qr_rows, "tucker": tucker_rows, "lra": lra_rows}


def rounds(log_dir, what, run):
    return sorted(glob.glob("%s/bench_%s_%s_*.txt" % (log_dir, what, run)))


def main(what, log_dir):
    parse = PARSERS[what]
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
        row = " ".join(key).replace("|", "\\|")  # the LRA's "16|32" inside a Markdown cell
        print("| %s | %s | %s | %+.1f%% | %+.1f%% |" % (row, cells[0], cells[1], change, best_change))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in PARSERS:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
