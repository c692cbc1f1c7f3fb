"""What admission costs: lc-cache-write (a hot path) as a whole process, and admit_document
in process for a typical page, a 2 MiB document and a 40 MiB import row.

    python benchmarks/admission.py [--rounds 20] [--other-root /path/to/a/checkout]

The whole-process figures alternate `python -c pass`, this checkout's `bin/lc-cache-write`
and, with --other-root, another checkout's (say one without admission), each writing a
tier2 body of 10 KiB into its own temporary store; medians of >= 20 rounds, as ratios to
`python -c pass`. The in-process figures are medians of 20 calls.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import BASELINE, PYTHON, run_once  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BODY = ("### Routing\n\nSource: https://docs.example.org/routing\n\n"
        + "Define routes with the router; each route has a path and a handler.\n" * 140
        + "```js\nrouter.get('/', handler)\n```\n")


def _env(tmp: str, name: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMHOOKS_"))}
    env.update(MEMHOOKS_DB=os.path.join(tmp, name, "memhooks.db"), MEMHOOKS_PYTHON=PYTHON,
               MEMHOOKS_OFFLINE="1", CLAUDE_PROJECT_DIR=tmp)
    return env


def whole_process(rounds: int, other_root: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        body = os.path.join(tmp, "body.md")
        with open(body, "w") as f:
            f.write(BODY)
        roots = {"this checkout": ROOT}
        if other_root:
            roots["other checkout"] = other_root
        cmds = {}
        for label, root in roots.items():
            env = _env(tmp, label.replace(" ", "-"))
            argv = ["bash", os.path.join(root, "bin", "lc-cache-write"), "tier2", "/bench/lib"]
            # one write creates and migrates the store; the rounds then write into it
            subprocess.run([*argv, "warm-up", body], env=env, check=False)
            cmds[label] = (argv, env)
        times: dict = {"python -c pass": []} | {label: [] for label in cmds}
        for i in range(rounds):
            times["python -c pass"].append(run_once(BASELINE))
            for label, (argv, env) in cmds.items():
                times[label].append(run_once([*argv, f"topic {i}", body], env=env))
        base = statistics.median(times["python -c pass"])
        for label, values in times.items():
            m = statistics.median(values)
            print(f"lc-cache-write tier2 (10 KiB), {label}: {m * 1000:.1f} ms = {m / base:.2f}x "
                  f"`python -c pass` ({rounds} rounds)")


def in_process() -> None:
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from memhooks.store.admission import admit_document, content_hash

    cases = {
        "10 KiB page": (BODY, None),
        "2 MiB document": ("### Big\n\n" + "word " * (2 * 1024 * 1024 // 5), None),
        "40 MiB import row (hash checked)": ("### Huge\n\n" + "word " * (40 * 1024 * 1024 // 5), "hash"),
    }
    for label, (text, claimed) in cases.items():
        digest = content_hash(text) if claimed else None
        runs = []
        for _ in range(20 if len(text) < 4_000_000 else 5):
            start = time.perf_counter()
            admit_document(project="/p", source="/bench/lib", source_tool="context7", content=text,
                           provenance="import" if claimed else "capture", claimed_hash=digest)
            runs.append(time.perf_counter() - start)
        print(f"admit_document, {label}: median {statistics.median(runs) * 1000:.1f} ms "
              f"({len(runs)} runs)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--other-root", help="another checkout to compare lc-cache-write with")
    args = ap.parse_args()
    whole_process(max(20, args.rounds), args.other_root)
    in_process()


if __name__ == "__main__":
    main()
