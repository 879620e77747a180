"""The randnla tool's argument parser fuzzed: random command lines drawn from every command's own
option vocabulary (read from its --help), values that fit and values that do not, and garbage.
Each run must end by itself with an exit status of the documented set (0 success, 1 runtime,
2 usage, 3 input; never a signal: a crash or a sanitizer report), a refusal must say so in one
line of stderr, and a refused run must leave no file behind (the --json report excepted, which is
written after an error by design). Deterministic: a fixed seed; bounded: at most CASES command
lines or SECONDS seconds, whichever comes first. Usage: test_cli_args.py RANDNLA [CASES] [SECONDS]"""
import os
import random
import re
import collections
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

TOOL = sys.argv[1]
CASES = int(sys.argv[2]) if len(sys.argv) > 2 else 400
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 45.0
COMMANDS = ["pca", "rsvd", "gemm", "lra", "project", "qr", "tucker"]
STATUSES = {0, 1, 2, 3}
# Commands whose default input is Fashion-MNIST or a 2048^3 product: given a small one instead so
# that a command line that happens to be valid stays quick.
SMALL_DEFAULTS = {"pca": ["--input"], "project": ["--input"], "tucker": ["--input"],
                  "gemm": ["--m", "--n", "--k"]}

rng = random.Random(56)


def vocabulary(command):
    """The long and short options of `command`, as its --help lists them."""
    p = subprocess.run([TOOL, command, "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, (command, p.returncode, p.stderr)
    return sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b", p.stdout)))


def values(files):
    return ["0", "1", "2", "3", "5", "8", "-1", "1000", "99999999999", "9223372036854775807",
            "99999999999999999999999", "0x10", "3x", "1e3", "0.5", "1.5", "nan", "inf", "-0", "",
            "fp32", "fp16", "tf32", "auto", "host", "gpu", "tsqr", "cholqr2", "gaussian", "two-pass",
            "subspace", "fp32,fp16", "fp32,,fp16", "4,5", "3,2,2", "2,2,2,2", "28,28", "5x4", "on", "off",
            "true", "no", "=", "--", "-", "\u00e9\u00df", "out-a", "out-b"] + files


def garbage():
    alphabet = "abcxyz-=,.0123456789 /%\\\"'\t"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))


def command_line(command, options, pool):
    argv = [command if rng.random() > 0.03 else garbage()]
    for _ in range(rng.randint(0, 8)):
        r = rng.random()
        if r < 0.45:
            argv.append(rng.choice(options))
            if rng.random() < 0.8:
                argv.append(rng.choice(pool))
        elif r < 0.55:
            argv.append(rng.choice(options) + "=" + rng.choice(pool))
        elif r < 0.8:
            argv.append(rng.choice(pool))
        else:
            argv.append(garbage())
    for option in SMALL_DEFAULTS.get(command, []):
        if option not in argv and not (option == "--input" and "-i" in argv):
            argv += [option, pool[-1] if option == "--input" else "16"]
    return argv


def files_in(d):
    return {os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs} | \
           {os.path.relpath(os.path.join(r, x), d) + "/" for r, xs, _ in os.walk(d) for x in xs}


failures = []
runs = 0
statuses = collections.Counter()
with tempfile.TemporaryDirectory() as d:
    data = np.random.default_rng(1).standard_normal((24, 16)).astype(np.float32)
    np.save(os.path.join(d, "a.npy"), data)
    np.save(os.path.join(d, "cube.npy"), data.reshape(24, 4, 4))
    open(os.path.join(d, "bad.npy"), "wb").write(b"\x93NUMPY garbage")
    inputs = ["a.npy", "cube.npy", "bad.npy", "missing.npy", d]
    pool = values(inputs) + ["a.npy"]  # the last: the small input of SMALL_DEFAULTS
    before = files_in(d)
    vocab = {c: vocabulary(c) + ["--nonexistent", "-z"] for c in COMMANDS}
    deadline = time.monotonic() + SECONDS
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    while runs < CASES and time.monotonic() < deadline:
        command = rng.choice(COMMANDS)
        argv = command_line(command, vocab[command], pool)
        runs += 1
        try:
            p = subprocess.run([TOOL, *argv], capture_output=True, text=True, timeout=60, cwd=d, env=env,
                               errors="replace")
        except subprocess.TimeoutExpired:
            failures.append((argv, "timeout"))
            continue
        statuses[p.returncode] += 1
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        problem = None
        if p.returncode not in STATUSES:
            problem = "exit %d (a signal or an undocumented status): %s" % (p.returncode, p.stderr[-2000:])
        elif p.returncode != 0 and (len(lines) != 1 or not lines[0].startswith("randnla")):
            problem = "refusal not one line: %r" % p.stderr[-2000:]
        elif p.returncode != 0:
            json_report = {argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--json"}
            json_report |= {a.split("=", 1)[1] for a in argv if a.startswith("--json=")}
            left = {f for f in files_in(d) - before if f.rstrip("/") not in json_report}
            if left:
                problem = "refused, yet left %s" % sorted(left)
        if problem:
            failures.append((argv, problem))
            print("FAIL %r: %s" % (argv, problem))
        for f in sorted(files_in(d) - before, key=len, reverse=True):  # outputs of a good run, reports
            path = os.path.join(d, f)
            shutil.rmtree(path, ignore_errors=True) if f.endswith("/") else os.remove(path) if os.path.exists(path) else None

print("%d command lines, %d failed; exit statuses %s" % (runs, len(failures), dict(sorted(statuses.items()))))
# A fuzzer that never gets past the parser, or never to a run, tests less than it says.
if runs < 50 or not {0, 2, 3} <= set(statuses):
    print("FAIL: fewer than 50 command lines in %.0f s, or not every one of statuses 0, 2, 3 reached" % SECONDS)
    sys.exit(1)
sys.exit(1 if failures else 0)
