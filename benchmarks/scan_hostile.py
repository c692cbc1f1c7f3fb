"""Scan time on hostile repositories, and the whole SessionStart hook on them.

    python benchmarks/scan_hostile.py [--runs 5]

Builds each repository in a temp dir (a memory file system when there is one), then
reports for each: the median and worst `scan_project` wall time over the runs (a fresh
scan each run, no resume), and the wall time of the SessionStart hook as a subprocess
(offline, a fresh store each run). The floors, `python -c pass` and `python -I -S -c pass`
of the same interpreter, are measured alternately with the hook runs (median of 20).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from memhooks.warm.scan import scan_project


def write(root: Path, rel: str, data) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    (p.write_bytes if isinstance(data, bytes) else p.write_text)(data)


def req_lines(n: int) -> bytes:
    return "".join(f"pkg{i}==1.0.{i}\n" for i in range(n)).encode()


def build(base: Path) -> dict[str, Path]:
    repos = {}
    r = base / "six-15mib-lockfiles"
    write(r, "package.json", json.dumps({"dependencies": {"react": "18.3.1"}}))
    line = req_lines(40000)
    big = (line * (15 * 2**20 // len(line) + 1))[: 15 * 2**20]
    for name in ("requirements.txt", "dev-requirements.txt", "a/requirements.txt",
                 "b/requirements-ci.txt", "c/requirements.in", "d/test-requirements.txt"):
        write(r, name, big)
    repos[r.name] = r
    r = base / "six-7.9mib-lockfiles"
    write(r, "package.json", json.dumps({"dependencies": {"react": "18.3.1"}}))
    mid = big[: int(7.9 * 2**20)]
    mid = mid[: mid.rindex(b"\n") + 1]
    for i in range(6):
        write(r, f"p{i}/requirements.txt", mid)
    repos[r.name] = r
    r = base / "100k-small-files"
    write(r, "package.json", json.dumps({"dependencies": {"react": "18.3.1"}}))
    for d in range(20):
        (r / f"d{d:02d}").mkdir(parents=True)
        for i in range(5000):
            os.close(os.open(r / f"d{d:02d}" / f"f{i}.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    repos[r.name] = r
    r = base / "symlinks-out-and-loops"
    write(r, "package.json", json.dumps({"dependencies": {"react": "1"}, "workspaces": ["r/**", "loop/**"]}))
    os.symlink("/", r / "r")
    os.symlink(".", r / "loop")
    os.symlink("/etc/passwd", r / "requirements.txt")
    repos[r.name] = r
    r = base / "fifo-requirements"
    write(r, "package.json", json.dumps({"dependencies": {"react": "1"}}))
    os.mkfifo(r / "requirements.txt")
    repos[r.name] = r
    return repos


def wall(argv, **kw) -> float:
    t = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=False, **kw)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    base = Path(tempfile.mkdtemp(prefix="mh-bench-", dir=shm))
    try:
        repos = build(base)
        floors: dict[str, list[float]] = {"python -c pass": [], "python -I -S -c pass": []}
        for _ in range(20):
            floors["python -c pass"].append(wall([sys.executable, "-c", "pass"]))
            floors["python -I -S -c pass"].append(wall([sys.executable, "-I", "-S", "-c", "pass"]))
        floor = statistics.median(floors["python -c pass"])
        print("floors: " + ", ".join(f"{k} {statistics.median(v) * 1000:.1f} ms" for k, v in floors.items()))
        worst_scan = 0.0
        for name, repo in repos.items():
            scans, hooks, sessions = [], [], 0
            for _ in range(args.runs):
                # successive sessions: a scan a budget cut short is continued by the next
                state, n = None, 0
                while True:
                    t = time.perf_counter()
                    res = scan_project(repo, resume=state)
                    scans.append(time.perf_counter() - t)
                    n += 1
                    state = res.state
                    if res.complete or n >= 20:
                        break
                sessions = max(sessions, n)
                data = base / "data"
                shutil.rmtree(data, ignore_errors=True)
                env = dict(os.environ, MEMHOOKS_DB=str(data / "memhooks.db"), CLAUDE_PROJECT_DIR=str(repo),
                           MEMHOOKS_OFFLINE="1", MEMHOOKS_PYTHON=sys.executable)
                payload = json.dumps({"session_id": "b", "hook_event_name": "SessionStart",
                                      "cwd": str(repo), "source": "startup"}).encode()
                for _ in range(n):
                    hooks.append(wall([str(ROOT / "hooks" / "session-start")], input=payload, env=env))
                floors["python -c pass"].append(wall([sys.executable, "-c", "pass"]))
            worst_scan = max(worst_scan, max(scans))
            print(f"{name:24s} scan/session median {statistics.median(scans) * 1000:7.1f} ms, worst "
                  f"{max(scans) * 1000:7.1f} ms ({sessions} session(s) to complete); "
                  f"hook median {statistics.median(hooks) * 1000:7.1f} ms "
                  f"({statistics.median(hooks) / floor:.1f}x python -c pass), worst {max(hooks) * 1000:7.1f} ms")
        print(f"worst scan time: {worst_scan * 1000:.1f} ms")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
