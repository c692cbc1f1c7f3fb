"""Benchmarks for the cache and SessionStart warming, as ratios to `python -c pass`.

1. `lc-cache-lookup NAME` on a hit (bin/ shim and console script): target <= 1.5x.
2. hooks/session-start with unchanged lockfiles (fast path): target <= 3x.
3. A first offline warm of a generated 2,000-dependency monorepo: target <= 400 ms.
Usage: python benchmarks/lookup.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import compare

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="memhooks-bench-")
    try:
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        env = dict(os.environ, MEMHOOKS_DB=os.path.join(tmp, "memhooks.db"),
                   MEMHOOKS_PYTHON=sys.executable, CLAUDE_PROJECT_DIR=project,
                   MEMHOOKS_OFFLINE="1", MEMHOOKS_NO_SPAWN="1")
        subprocess.run([os.path.join(ROOT, "bin", "lc-cache-write"), "tier1", "react",
                        "/facebook/react"], env=env, check=True)
        compare("bin/lc-cache-lookup (hit)", ["bash", os.path.join(ROOT, "bin", "lc-cache-lookup"),
                                              "react"], env=env, rounds=args.rounds)
        console = shutil.which("lc-cache-lookup")
        if console:
            compare("lc-cache-lookup console script (hit)", [console, "react"], env=env,
                    rounds=args.rounds)

        from helpers_monorepo import write_monorepo  # tests/helpers_monorepo.py

        mono = os.path.join(tmp, "mono")
        write_monorepo(mono)
        env_mono = dict(env, CLAUDE_PROJECT_DIR=mono)
        start_payload = json.dumps({"session_id": "bench", "transcript_path": "/tmp/t",
                                    "cwd": mono, "hook_event_name": "SessionStart",
                                    "source": "startup"}).encode()
        hook = [os.path.join(ROOT, "hooks", "session-start")]
        t0 = time.perf_counter()
        first = subprocess.run(hook, input=start_payload, env=env_mono, capture_output=True)
        first_s = time.perf_counter() - t0
        print(f"first offline SessionStart warm of the 2,000-dependency monorepo (whole process): "
              f"{first_s * 1000:.0f} ms, {len(first.stdout)} bytes of output")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c",
                        "import time,sys;from memhooks.store.connect import connect;from memhooks.warm.resolve import warm;"
                        "c=connect();t=time.perf_counter();r=warm(c,sys.argv[1]);"
                        "print(f'  in-process warm(): {(time.perf_counter()-t)*1000:.0f} ms, "
                        "{len(r.entries)} entries from {len(r.scanned_files)} files')", mono],
                       env=dict(env_mono, MEMHOOKS_DB=os.path.join(tmp, "fresh.db")), check=True)
        compare("hooks/session-start (unchanged lockfiles)", hook, stdin=start_payload,
                env=env_mono, rounds=args.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
