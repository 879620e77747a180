#!/usr/bin/env python3
"""Sums the GPU time per kernel name of an ncu CSV (metric gpu__time_duration.sum).

Usage: ncu --profile-from-start off --clock-control none --metrics gpu__time_duration.sum --csv \
           bench_dense_parts syevd > syevd.csv
       perf_tests/ncu_kernel_times.py syevd.csv [title]
Prints the kernel count and total GPU time, then every kernel by total time (count, us, name).
"""
import collections
import csv
import sys


def main(path, title):
    rows = [r for r in csv.reader(open(path)) if len(r) > 10]
    header, data = rows[0], rows[1:]
    name, value = header.index("Kernel Name"), header.index("Metric Value")
    by_kernel = collections.defaultdict(lambda: [0, 0.0])
    for r in data:
        us = float(r[value].replace(",", "")) / 1000.0  # ns -> us
        entry = by_kernel[r[name].split("(")[0][:70]]
        entry[0] += 1
        entry[1] += us
    print(title)
    print("%d kernels, GPU time %.1f us in total" % (len(data), sum(v for _, v in by_kernel.values())))
    for kernel, (count, us) in sorted(by_kernel.items(), key=lambda kv: -kv[1][1]):
        print("%3d x %8.1f us  %s" % (count, us, kernel))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else sys.argv[1])
