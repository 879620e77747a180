#!/usr/bin/env python3
"""Where the device waited: runs and gaps of a perf_tests/cupti_timeline.cpp CSV.

Usage: perf_tests/timeline_gaps.py TIMELINE.csv [START_TEXT[:MIN_US]] [MIN_GAP_US]
A run starts at each device activity whose name contains START_TEXT and that lasts at least MIN_US (e.g.
"dense_fill:100", the Omega_1 fill that begins an RP-HOSVD run; default: every activity after a pause of more
than 1 ms) and ends before the next. For each run: its span, the device's busy time, the
idle time between activities, and every gap of at least MIN_GAP_US (default 5) with the activity after it.
"""
import re
import sys


def short(name):
    name = re.sub(r"\(.*", "", name)
    return re.sub(r"_ZN7randnla4cuda\d*|randnla::|cuda::|<unnamed>::|void ", "", name)[:70]


def main(path, start_text, min_gap_us):
    device = []
    for line in open(path):
        kind, start, end, _, name = line.rstrip("\n").split(",", 4)
        if kind in "KCS":
            device.append((int(start), int(end), name))
    device.sort()
    if start_text:
        text, _, min_us = start_text.partition(":")
        least = float(min_us or 0) * 1000
        starts = [i for i, d in enumerate(device) if text in d[2] and d[1] - d[0] >= least]
    else:
        starts = [0] + [i for i in range(1, len(device)) if device[i][0] - device[i - 1][1] > 1_000_000]
    for run, first in enumerate(starts):
        last = starts[run + 1] if run + 1 < len(starts) else len(device)
        acts = device[first:last]
        t0, reached, busy, idle, gaps = acts[0][0], acts[0][0], 0, 0, []
        for start, end, name in acts:
            if start > reached:
                idle += start - reached
                if start - reached >= min_gap_us * 1000:
                    gaps.append((reached - t0, start - reached, name))
            busy += end - start
            reached = max(reached, end)
        print(f"run {run}: span {(reached - t0) / 1e3:.1f} us, busy {busy / 1e3:.1f} us, idle {idle / 1e3:.1f} us, "
              f"{len(acts)} activities")
        for at, gap, name in gaps:
            print(f"    at {at / 1e3:9.1f} us: {gap / 1e3:7.1f} us idle, then {short(name)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "", float(sys.argv[3]) if len(sys.argv) > 3 else 5.0)
