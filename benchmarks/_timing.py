"""Shared timing helpers: whole-process medians as ratios to the interpreter's floor.

Every measurement alternates three processes in one loop, so a machine that gets busier
half-way through slows all three alike:
  * `python -c pass`        — what a user's python costs with its `site` (the headline ratio),
  * `python -I -S -c pass`  — the floor without `site` (a slow `site` inflates the first),
  * the command measured.
Medians of at least 20 rounds. `python` is this interpreter (sys.executable), unless
MEMHOOKS_BENCH_PYTHON names another.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

PYTHON = os.environ.get("MEMHOOKS_BENCH_PYTHON") or sys.executable
BASELINE = [PYTHON, "-c", "pass"]
FLOOR = [PYTHON, "-I", "-S", "-c", "pass"]
MIN_ROUNDS = 20


def run_once(argv, stdin: bytes | None = None, env=None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=env, check=False)
    return time.perf_counter() - start


def compare(label: str, argv, *, stdin: bytes | None = None, env=None, rounds: int = 40,
            setup=None) -> dict:
    """Alternate `python -c pass`, `python -I -S -c pass` and the command; report medians
    and the command's ratio to each."""
    rounds = max(rounds, MIN_ROUNDS)
    base, floor, cmd = [], [], []
    for _ in range(3):  # warm the page cache
        run_once(BASELINE)
        run_once(FLOOR)
        run_once(argv, stdin, env)
    for _ in range(rounds):
        if setup:
            setup()
        base.append(run_once(BASELINE))
        floor.append(run_once(FLOOR))
        cmd.append(run_once(argv, stdin, env))
    b, f, c = (statistics.median(x) for x in (base, floor, cmd))
    result = {"label": label, "median_ms": round(c * 1000, 2),
              "python_c_pass_ms": round(b * 1000, 2), "python_IS_c_pass_ms": round(f * 1000, 2),
              "ratio": round(c / b, 2), "ratio_to_floor": round(c / f, 2), "rounds": rounds}
    print(f"{label}: {result['median_ms']} ms = {result['ratio']}x `python -c pass` "
          f"({result['python_c_pass_ms']} ms), {result['ratio_to_floor']}x `python -I -S -c pass` "
          f"({result['python_IS_c_pass_ms']} ms)", flush=True)
    return result


def once(label: str, argv, *, stdin: bytes | None = None, env=None, rounds: int = 20) -> dict:
    """Median of a command that cannot be alternated cheaply (it changes state), with the
    floor measured around it."""
    rounds = max(rounds, MIN_ROUNDS)
    times = [run_once(argv, stdin, env) for _ in range(rounds)]
    f = statistics.median(run_once(FLOOR) for _ in range(rounds))
    b = statistics.median(run_once(BASELINE) for _ in range(rounds))
    c = statistics.median(times)
    result = {"label": label, "median_ms": round(c * 1000, 2),
              "python_c_pass_ms": round(b * 1000, 2), "python_IS_c_pass_ms": round(f * 1000, 2),
              "ratio": round(c / b, 2), "ratio_to_floor": round(c / f, 2), "rounds": rounds}
    print(f"{label}: {result['median_ms']} ms = {result['ratio']}x `python -c pass`, "
          f"{result['ratio_to_floor']}x the floor", flush=True)
    return result


def floor_line() -> str:
    """One line naming the interpreter and its floor, for the top of a report."""
    f = statistics.median(run_once(FLOOR) for _ in range(MIN_ROUNDS))
    b = statistics.median(run_once(BASELINE) for _ in range(MIN_ROUNDS))
    return (f"interpreter {PYTHON} ({sys.version.split()[0]}): `python -c pass` {b * 1000:.1f} ms, "
            f"`python -I -S -c pass` {f * 1000:.1f} ms (the floor)")


def wait_ingester(db: str, timeout: float = 120) -> None:
    """Wait while a detached ingester of the store `db` runs (it holds `db.ingest.lock`)."""
    import fcntl

    lock = db + ".ingest.lock"
    deadline = time.monotonic() + timeout
    while os.path.exists(lock) and time.monotonic() < deadline:
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError:
            time.sleep(0.1)
        finally:
            os.close(fd)
