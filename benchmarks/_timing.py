"""Shared timing helpers: whole-process medians as ratios to `python -c pass`."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

BASELINE = [sys.executable, "-c", "pass"]


def run_once(argv, stdin: bytes | None = None, env=None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=env, check=False)
    return time.perf_counter() - start


def compare(label: str, argv, *, stdin: bytes | None = None, env=None, rounds: int = 40,
            setup=None) -> dict:
    """Alternate the command and the baseline in one loop; report medians and the ratio."""
    base, cmd = [], []
    for _ in range(3):  # warm the page cache
        run_once(BASELINE)
        run_once(argv, stdin, env)
    for _ in range(rounds):
        if setup:
            setup()
        base.append(run_once(BASELINE))
        cmd.append(run_once(argv, stdin, env))
    b, c = statistics.median(base), statistics.median(cmd)
    result = {"label": label, "baseline_ms": round(b * 1000, 2), "median_ms": round(c * 1000, 2),
              "ratio": round(c / b, 2), "rounds": rounds}
    print(f"{label}: median {result['median_ms']} ms vs `python -c pass` "
          f"{result['baseline_ms']} ms -> {result['ratio']}x")
    return result
