"""Throughput of `memhooks import-transcripts` on a synthetic transcript (default 200 MB).

Two runs of the real command in a subprocess, each on a fresh store:
  * `--dry-run`: reading and pairing only (the streaming reader);
  * a full import: journal, adapters, projections.
Reports MB/s (decimal MB of transcript per second of wall time) and the child's peak RSS.
Usage: python benchmarks/import_transcripts.py [MB] [--captured-every N]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers_transcripts import write_synthetic

CHILD = """
import resource, sys
from memhooks.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("MAXRSS_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def run(args: list[str], db: str) -> tuple[float, int, str]:
    env = dict(os.environ, MEMHOOKS_DB=db, MEMHOOKS_NO_SPAWN="1")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True,
                          env=env, check=False)
    wall = time.perf_counter() - t0
    rss = 0
    for line in proc.stderr.splitlines():
        if line.startswith("MAXRSS_KB"):
            rss = int(line.split()[1])
    return wall, rss, proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mb", nargs="?", type=float, default=200.0)
    ap.add_argument("--captured-every", type=int, default=1,
                    help="one captured call every N rounds of ~20 KB filler (default 1)")
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memhooks-bench-import-") as tmp:
        path = os.path.join(tmp, "session.jsonl")
        info = write_synthetic(path, ns.mb, captured_every=ns.captured_every)
        mb = info["bytes"] / 1e6
        print(f"synthetic transcript: {mb:,.1f} MB, {info['captured']:,} captured calls, "
              f"{info['rounds']:,} rounds")
        for label, extra in (("dry run (read + pair)", ["--dry-run"]), ("full import", [])):
            db = os.path.join(tmp, f"store-{len(extra)}", "memhooks.db")
            wall, rss, out = run(["import-transcripts", "--json", *extra, path], db)
            print(f"{label:22s} {wall:7.2f} s  {mb / wall:7.1f} MB/s  peak RSS {rss / 1024:6.1f} MiB")
        print(f"(this process: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
