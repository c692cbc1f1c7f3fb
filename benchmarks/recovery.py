"""Benchmark: corrupt-store recovery time (damaged projections file -> rebuilt from the journal).

For each kind of damage (garbage header, truncated file, corrupted pages) on a store with N
captured Context7 documents: damage memhooks.db, then time the whole process of one
`memhooks stats` run after it (the reader heals: moves the file aside and rebuilds every
projection from journal.db), until the store has N documents again. Reported as medians with
`python -c pass` as the floor. Usage: python benchmarks/recovery.py [--events N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))


def payload(i: int) -> str:
    text = (f"### Topic {i}\n\nSource: https://example.org/{i}\n\nBody of document {i}.\n\n"
            "```js\nconst x = 1;\n```\n") * 20
    return json.dumps({
        "session_id": "bench", "cwd": ROOT, "hook_event_name": "PostToolUse",
        "tool_name": "mcp__context7__query-docs",
        "tool_input": {"libraryId": "/facebook/react", "query": f"topic {i}"},
        "tool_response": [{"type": "text", "text": text}], "tool_use_id": f"toolu_{i}",
    })


def build(db: str, n: int) -> None:
    from memhooks.ingest.pipeline import ingest_pending
    from memhooks.store.connect import connect
    from memhooks.store.journal import append

    conn = connect(db)
    conn.execute("BEGIN IMMEDIATE")
    for i in range(n):
        append(conn, payload(i), size=1, project=ROOT, hook_event_name="PostToolUse")
    conn.execute("COMMIT")
    ingest_pending(conn, db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def damage(db: str, how: str) -> None:
    with open(db, "rb") as fh:
        data = bytearray(fh.read())
    if how == "garbage-header":
        data[:100] = b"garbage!" * 12 + b"junk"
    elif how == "truncated":
        data = data[: len(data) // 2 + 100]
    else:
        for off in range(8192, len(data), 4096 * 3):
            data[off:off + 64] = os.urandom(64)
    with open(db, "wb") as fh:
        fh.write(bytes(data))


def docs(db: str) -> int:
    try:
        conn = sqlite3.connect(db)
        try:
            return conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return -1


def timed(argv, env) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    floor = statistics.median(timed([sys.executable, "-c", "pass"], os.environ) for _ in range(20))
    print(f"floor: python -c pass = {floor * 1000:.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        pristine = os.path.join(tmp, "pristine")
        os.mkdir(pristine)
        build(os.path.join(pristine, "memhooks.db"), args.events)
        for how in ("garbage-header", "truncated", "corrupted-pages"):
            runs, passes = [], []
            for r in range(args.rounds):
                work = os.path.join(tmp, f"{how}-{r}")
                os.mkdir(work)
                for name in ("memhooks.db", "journal.db"):
                    with open(os.path.join(pristine, name), "rb") as src, \
                            open(os.path.join(work, name), "wb") as dst:
                        dst.write(src.read())
                db = os.path.join(work, "memhooks.db")
                damage(db, how)
                env = dict(os.environ, MEMHOOKS_DB=db, MEMHOOKS_OFFLINE="1",
                           XDG_STATE_HOME=os.path.join(work, "state"))
                t0 = time.perf_counter()
                n = 0
                while docs(db) != args.events and n < 3:
                    subprocess.run([sys.executable, "-m", "memhooks.cli.main", "stats"], env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                    n += 1
                runs.append(time.perf_counter() - t0)
                passes.append(n)
                assert docs(db) == args.events, (how, docs(db))
            med = statistics.median(runs)
            print(f"{how:16s} {args.events} events: recovered in {med * 1000:.0f} ms median"
                  f" ({med / floor:.0f}x floor), `memhooks stats` runs needed: {sorted(set(passes))}")


if __name__ == "__main__":
    main()
