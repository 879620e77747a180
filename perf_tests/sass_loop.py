#!/usr/bin/env python3
"""Counts the SASS instructions of the K loop of each wgmma_gemm_kernel instantiation.

Usage: cuobjdump -sass build-cuda/CMakeFiles/randnla_sm90.dir/backends/cuda/tc_gemm_sm90.cu.o > k.sass
       perf_tests/sass_loop.py k.sass [name-substring]
The loop is taken from the first backward branch after the kernel's last HGMMA back to its
target; per instantiation it prints the loop's length and its opcode mix (most frequent first).
"""
import collections
import re
import sys


def loops(sass, pattern):
    for f in re.split(r"\n\s*Function : ", sass)[1:]:
        name = f.split("\n")[0]
        if pattern not in name or "wgmma_gemm_kernel" not in name:
            continue
        ins = [(int(a, 16), t) for a, t in re.findall(r"/\*([0-9a-f]{4,5})\*/\s+((?:@!?U?P\w+\s+)?[A-Z].*?);", f)]
        last_mma = max(a for a, t in ins if "HGMMA" in t)
        for a, t in ins:
            m = re.search(r"BRA (0x[0-9a-f]+)", t)
            if a > last_mma and m and int(m.group(1), 16) < a:
                body = [u for b, u in ins if int(m.group(1), 16) <= b <= a]
                yield name, body
                break


def main():
    sass = open(sys.argv[1]).read()
    for name, body in loops(sass, sys.argv[2] if len(sys.argv) > 2 else ""):
        ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", t).split()[0].split(".")[0] for t in body)
        kernel = re.search(r"wgmma_gemm_kernel(I.*?)E(?:v|EEv)", name)
        print(f"{kernel.group(1) if kernel else name}: {len(body)} instructions")
        print("  " + ", ".join(f"{op} {n}" for op, n in ops.most_common()))


if __name__ == "__main__":
    main()
