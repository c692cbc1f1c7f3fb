"""Benchmark: a capped store under a flood keeps what is read and ends every pass under the cap.

With MEMHOOKS_MAX_SIZE set, one document is read 25 times and another once (through
`lc-cache-lookup-docs`, the shim an agent runs); then 3x the cap's worth of distinct pages
is captured, a page a pass (as each capture starts an ingester): each pass runs the PostToolUse
hook (a process) on it, projects it (the ingester's ingest) and runs the detached
ingester (`capture.ingester.main`: its upkeep holds the cap). After every pass the first page
captured in it is read once, so the last-read documents are known.

Two kinds of text: high-entropy (what minified JavaScript, hashes and base64 look like: every
token new, the full-text index as large as the text) and prose (a 2,000-word vocabulary).

The store folder is measured (every file in it, allocated blocks) after the journal writes,
after the ingest and after the upkeep of each pass, and sampled every 10 ms while the pass
runs (what a transaction holds for a moment: WAL pages, pages not yet given back). Checks: at the end of every pass the
folder is within the cap, at every measure and every sample within 110% of it, and at the end the document
read 25 times and the last three read are served.

Usage: python benchmarks/cap.py [--cap 6MB] [--kind entropy|prose|both] [--pages-per-pass 1]
       [--flood 3] [--quiet]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from memhooks.capture import ingester
from memhooks.config import parse_size
from memhooks.ingest.pipeline import ingest_pending
from memhooks.store.connect import closing, connect
from memhooks.store.prune import cap_unmet
from memhooks.store.vacuum import store_bytes as folder_bytes

LOOKUP_DOCS = os.path.join(ROOT, "bin", "lc-cache-lookup-docs")
POST_TOOL_USE = os.path.join(ROOT, "hooks", "post-tool-use")
HOT_READS = 25


def vocabulary(n: int = 2000, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(n)]


def page_text(kind: str, n: int, size: int, words: list[str]) -> str:
    """About `size` characters of distinct text: base64 of random bytes in 76-column lines
    (entropy), or sentences drawn from `words` (prose)."""
    rng = random.Random(n)
    if kind == "entropy":
        raw = base64.b64encode(rng.randbytes(size * 3 // 4)).decode()
        lines = [raw[i:i + 76] for i in range(0, len(raw), 76)]
    else:
        lines, total = [], 0
        while total < size:
            line = " ".join(rng.choice(words) for _ in range(14)) + "."
            lines.append(line)
            total += len(line) + 1
    return f"### Page {n}\n\n" + "\n".join(lines)


def payload(n: int, text: str, project: str) -> bytes:
    return json.dumps({
        "session_id": f"flood-{n // 40}", "cwd": project, "hook_event_name": "PostToolUse",
        "tool_name": "mcp__context7__query-docs",
        "tool_input": {"libraryId": f"/org/page{n}", "query": f"topic {n}"},
        "tool_response": [{"type": "text", "text": text}],
        "tool_use_id": f"toolu_flood_{n:08d}"}).encode()


def journal(db: str, raws: list[bytes]) -> None:
    """Each payload through the PostToolUse hook, run as Claude Code runs it (a process of
    its own; MEMHOOKS_NO_SPAWN keeps it from starting the ingester, which the pass runs)."""
    for raw in raws:
        r = subprocess.run([POST_TOOL_USE], input=raw, capture_output=True, timeout=60)
        if r.returncode != 0 or r.stdout:
            raise RuntimeError(f"the hook said {r.returncode} {r.stdout[:200]!r} {r.stderr[:200]!r}")


def served(n: int, env: dict) -> bool:
    """Whether `lc-cache-lookup-docs` answers page n's call (and logs the read, as it does)."""
    out = subprocess.run([LOOKUP_DOCS, f"/org/page{n}", f"topic {n}"], env=env,
                         capture_output=True, timeout=60).stdout
    return len(out) > 0


@dataclass
class Pass:
    number: int
    before: int  # the folder after journal and ingest, before the upkeep
    after: int
    peak: int  # the largest of the pass's measures
    evicted: int
    documents: int
    sampled: int = 0  # the largest size sampled while the pass ran (every few milliseconds)


@dataclass
class Result:
    kind: str
    cap: int
    passes: list = field(default_factory=list)
    hot_served: bool = False
    last_read_served: list = field(default_factory=list)
    unmet: str | None = None

    @property
    def ok(self) -> bool:
        return (all(p.after <= self.cap for p in self.passes)
                and all(max(p.peak, p.sampled) <= 1.1 * self.cap for p in self.passes)
                and self.hot_served and all(self.last_read_served))


class Sampler:
    """The folder's size measured every `interval_s` in a thread while a pass runs (the hook's
    process, the ingest, the upkeep): the peak between the pass's three measures too."""

    INTERVAL_S = 0.01

    def __init__(self, db: str, interval_s: float = INTERVAL_S) -> None:
        self.db, self.interval_s, self.peak = db, interval_s, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, folder_bytes(self.db))
            self._stop.wait(self.interval_s)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def documents(db: str) -> int:
    with closing(connect(db)) as conn:
        return conn.execute("SELECT count(*) FROM documents").fetchone()[0]


def flood(kind: str, cap: int, folder: str, *, pages_per_pass: int = 1, times: float = 3.0,
          pages: int = 300) -> Result:
    """3x (`times`) the cap's worth of `kind` pages into a fresh store capped at `cap`."""
    data = os.path.join(folder, "data")
    db = os.path.join(data, "memhooks.db")
    project = os.path.join(folder, "project")
    os.makedirs(project, exist_ok=True)
    env = dict(os.environ, MEMHOOKS_DB=db, MEMHOOKS_NO_SPAWN="1", MEMHOOKS_OFFLINE="1", MEMHOOKS_PYTHON=sys.executable,
               MEMHOOKS_MAX_SIZE=str(cap), CLAUDE_PROJECT_DIR=project,
               XDG_STATE_HOME=os.path.join(folder, "state"))
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        return _flood(kind, cap, db, project, env, pages_per_pass, times, pages)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _flood(kind, cap, db, project, env, pages_per_pass, times, pages) -> Result:
    words = vocabulary()
    size = max(2000, int(cap * times / pages))
    result = Result(kind, cap)
    # The hot document (read 25 times) and one read once, then the flood.
    journal(db, [payload(n, page_text(kind, n, size, words), project) for n in (0, 1)])
    ingester.main(["--background"])
    for _ in range(HOT_READS):
        served(0, env)
    served(1, env)
    read: list[int] = []
    n, total, number = 2, 0, 0
    while total < times * cap:
        number += 1
        batch = [page_text(kind, n + k, size, words) for k in range(pages_per_pass)]
        with Sampler(db) as sampler:
            journal(db, [payload(n + k, t, project) for k, t in enumerate(batch)])
            measures = [folder_bytes(db)]
            with closing(connect(db)) as conn:
                ingest_pending(conn, db)
            measures.append(folder_bytes(db))
            docs_before = documents(db)
            ingester.main(["--background"])  # ingests what is left and holds the cap
            measures.append(folder_bytes(db))
        docs_after = documents(db)
        result.passes.append(Pass(number, measures[1], measures[2], max(measures),
                                  max(0, docs_before - docs_after), docs_after, sampler.peak))
        if served(n, env):  # a page of this pass, read once (when it is still there)
            read.append(n)
        n += pages_per_pass
        total += pages_per_pass * size
    result.hot_served = served(0, env)
    result.last_read_served = [served(i, env) for i in read[-3:]]
    state = cap_unmet(db)  # what the upkeep says when eviction cannot meet the cap
    result.unmet = state["reason"] if state else None
    return result


def table(result: Result) -> str:
    lines = [f"{result.kind}: cap {result.cap:,} bytes",
             f"{'pass':>5} {'before':>12} {'after':>12} {'peak':>7} {'sampled':>8} {'evicted':>8} {'kept':>6}"]
    for p in result.passes:
        lines.append(f"{p.number:>5} {p.before:>12,} {p.after:>12,} {p.peak / result.cap:>7.0%}"
                     f" {p.sampled / result.cap:>8.0%} {p.evicted:>8} {p.documents:>6}")
    worst_end = max(p.after for p in result.passes) / result.cap
    worst = max(max(p.peak, p.sampled) for p in result.passes) / result.cap
    last = result.passes[-1]
    lines.append(f"end of pass at most {worst_end:.0%} of the cap, at any measure {worst:.0%} "
                 f"(sampled every {Sampler.INTERVAL_S * 1000:.0f} ms); at the end {last.after / result.cap:.0%}"
                 f" with {last.documents} documents; "
                 f"read {HOT_READS} times served: {result.hot_served}; last read served: "
                 f"{result.last_read_served}" + (f"; cap not met: {result.unmet}" if result.unmet else ""))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cap", default="6MB")
    ap.add_argument("--kind", choices=("entropy", "prose", "both"), default="both")
    ap.add_argument("--pages-per-pass", type=int, default=1)
    ap.add_argument("--flood", type=float, default=3.0, help="the flood, in caps (default 3)")
    ap.add_argument("--quiet", action="store_true", help="only the last line of each table")
    args = ap.parse_args()
    cap = parse_size(args.cap)
    if cap is None:
        ap.error(f"not a size: {args.cap}")
    ok = True
    for kind in (("entropy", "prose") if args.kind == "both" else (args.kind,)):
        with tempfile.TemporaryDirectory() as tmp:
            result = flood(kind, cap, tmp, pages_per_pass=args.pages_per_pass, times=args.flood)
        text = table(result)
        print(text.splitlines()[-1] if args.quiet else text)
        print("OK" if result.ok else "FAILED")
        ok = ok and result.ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
