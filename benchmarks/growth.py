"""Benchmark: how the store grows with repeated captures, and whether the size cap holds.

Growth: N captured events (default 20,000) of which a share (default 80%) repeat one of 500
distinct documents (Context7 query-docs and resolve-library-id, WebFetch, EXA search, about
6.5 KB each). Each event goes through the capture hook's own journaling code
(`capture.hooks._journal`: redaction, metadata, the journal insert), in-process to keep it
affordable; the detached ingester's `main` (what a hook starts) runs every `--ingest-every`
events. Prints bytes on disk per file of the store folder and bytes on disk per unique
content byte (the sum of the stored documents' bytes); then runs `memhooks reindex`'s code
and checks it gives the same documents (content_hash set), tier1, tier2 and captures.

Cap (`--cap`): ingests 3x the cap's worth of distinct documents with MEMHOOKS_MAX_SIZE set,
reading one document and keeping one of a pinned version as it goes, and checks that the
store folder is within 10% of the cap and that both documents remain.

Reads log: a `--reads-log` MB (default 512) reads.log folded in a child process; prints its
peak RSS (VmHWM).

Usage: python benchmarks/growth.py [--events N] [--repeat 0.8] [--distinct 500]
       [--cap 20MB] [--reads-log 512] [--skip-growth] [--skip-cap] [--keep DIR]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

WORDS = ("the a of to and in is for that with on as are be this by it or from at an can use "
         "component state effect hook render props context router query cache server client "
         "request response stream handler middleware config option value default return "
         "function async await promise error retry timeout token session cookie header body "
         "schema model field index table migration transaction commit rollback lock journal "
         "install package version import export module build test deploy container image "
         "cluster node worker queue event listener callback subscribe publish channel topic "
         "layout style theme color font size width height grid flex align justify margin "
         "padding border shadow animation transition keyframe selector element attribute").split()
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
IDENTS = ("useEffect useState useMemo createStore fetchData parseConfig connectDb runQuery "
          "handleSubmit renderList withRetry openSession closePool mapRows reduceState "
          "buildRouter loadModule").split()


def _sentence(rng: random.Random) -> str:
    n = rng.randint(8, 22)
    s = " ".join(rng.choice(WORDS) for _ in range(n))
    return s[0].upper() + s[1:] + "."


def _code(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(3, 9)):
        fn, arg = rng.choice(IDENTS), rng.choice(WORDS)
        lines.append(f"  const {arg}{rng.randint(0, 99)} = await {fn}({arg}, {rng.randint(0, 999)});")
    return "```js\n" + "\n".join(lines) + "\n```"


@functools.lru_cache(maxsize=4096)
def doc_text(i: int, size: int = 6500) -> str:
    """A distinct documentation body of about `size` bytes (sections: heading, source, prose,
    code), deterministic in `i`."""
    rng = random.Random(i)
    parts = []
    total = 0
    k = 0
    while total < size:
        sec = (f"### {rng.choice(IDENTS)} {rng.choice(WORDS)} {i}.{k}\n\n"
               f"Source: https://docs.example.org/lib{i % 50}/page{i}/{k}\n\n"
               + " ".join(_sentence(rng) for _ in range(rng.randint(2, 5))) + "\n\n" + _code(rng))
        parts.append(sec)
        total += len(sec) + 34
        k += 1
    return "\n\n--------------------------------\n\n".join(parts)


def _resolve_text(i: int) -> str:
    rng = random.Random(-i - 1)
    blocks = []
    for j in range(rng.randint(8, 14)):
        blocks.append(
            f"- Title: Lib{i}x{j}\n- Context7-compatible library ID: /org{i}/lib{i}-{j}\n"
            f"- Description: {_sentence(rng)} {_sentence(rng)}\n"
            f"- Code Snippets: {rng.randint(10, 5000)}\n- Source Reputation: High\n"
            f"- Benchmark Score: {rng.randint(10, 99)}.{rng.randint(0, 9)}\n"
            f"- Versions: v{rng.randint(1, 9)}.{rng.randint(0, 20)}.0, v{rng.randint(10, 19)}.0.0")
    return "Available Libraries:\n\n" + "\n----------\n".join(blocks)


def content(i: int) -> tuple[str, dict, object]:
    """(tool_name, tool_input, tool_response) of distinct content `i`: 80% query-docs, 10%
    resolve-library-id, 5% WebFetch, 5% EXA web search."""
    kind = i % 20
    if kind < 16:
        return ("mcp__context7__query-docs",
                {"libraryId": f"/org{i % 50}/lib{i % 50}", "query": f"how to use feature {i}"},
                [{"type": "text", "text": doc_text(i)}])
    if kind < 18:
        return ("mcp__context7__resolve-library-id",
                {"libraryName": f"lib{i}", "query": f"feature {i}"},
                [{"type": "text", "text": _resolve_text(i)}])
    if kind == 18:
        url = f"https://docs.example.org/guide/{i}"
        return ("WebFetch", {"url": url, "prompt": "Summarise the page"},
                {"bytes": 6500, "code": 200, "codeText": "OK", "result": doc_text(i),
                 "durationMs": 100, "url": url})
    results = []
    for j in range(3):
        results.append(f"Title: Result {i}.{j}\nURL: https://site{j}.example.org/{i}\n"
                       f"Published: N/A\nAuthor: N/A\nText: {doc_text(i * 10 + j, 2100)}")
    return ("mcp__exa__web_search_exa", {"query": f"search {i}", "numResults": 3},
            [{"type": "text", "text": "\n\n---\n\n".join(results)}])


def event(n: int, i: int, cwd: str, rng: random.Random) -> bytes:
    tool, tool_input, response = content(i)
    tool_input = dict(tool_input)
    if "query" in tool_input and rng.random() < 0.2:
        tool_input["query"] += f" (asked again {n % 3})"  # the same answer to another wording
    # ids as random as Claude Code's: a uuid4 per session (~100 calls), toolu_01 + 22 base62
    srng = random.Random(n // 100)
    session = "-".join("".join(srng.choice("0123456789abcdef") for _ in range(k)) for k in (8, 4, 4, 4, 12))
    tool_use_id = "toolu_01" + "".join(rng.choice(B62) for _ in range(22))
    return json.dumps({
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/-home-dev-proj/{session}.jsonl",
        "cwd": cwd, "permission_mode": "default", "hook_event_name": "PostToolUse",
        "tool_name": tool, "tool_input": tool_input, "tool_response": response,
        "tool_use_id": tool_use_id,
    }).encode()


def sequence(events: int, repeat: float, distinct: int, seed: int = 7) -> list[int]:
    """Which content each event carries: every distinct one first appears once; the rest
    (a `repeat` share of the events) repeat earlier ones."""
    rng = random.Random(seed)
    fresh = max(1, min(distinct, round(events * (1 - repeat))))
    seq: list[int] = []
    nxt = 0
    for n in range(events):
        left = events - n
        if nxt < fresh and (rng.random() < (fresh - nxt) / left or nxt == 0):
            seq.append(nxt)
            nxt += 1
        else:
            seq.append(rng.randrange(nxt))
    return seq


def folder_sizes(folder: str) -> dict[str, int]:
    out = {}
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            out[os.path.relpath(path, folder)] = st.st_blocks * 512
    return out


def journal_events(db: str, raw_list) -> None:
    """What the capture hook does with each payload (capture.hooks._journal: metadata for
    a tool not captured, redaction, the size cap, one insert), on one journal connection."""
    from memhooks.capture.payload import prepare
    from memhooks.capture.tool_calls import metadata_only
    from memhooks.store.connect import closing, connect_journal
    from memhooks.store.journal import append

    with closing(connect_journal(db)) as conn:
        for raw in raw_list:
            meta = metadata_only(raw, len(raw), "PostToolUse")
            payload, error = (meta, None) if meta is not None else prepare(raw, len(raw))
            append(conn, payload, size=len(raw), project=ROOT, error=error,
                   hook_event_name="PostToolUse", state="skipped" if meta else None)


def run_ingester() -> None:
    from memhooks.capture import ingester

    ingester.main(["--background"])


def snapshot(db: str) -> dict:
    from memhooks.store.connect import closing, connect

    with closing(connect(db)) as conn:
        docs = sorted(r[0] for r in conn.execute("SELECT content_hash FROM documents"))
        tier1 = sorted(tuple(r) for r in conn.execute(
            "SELECT project, name_key, library_id, origin FROM tier1"))
        tier2 = sorted(tuple(r) for r in conn.execute(
            "SELECT t.library_key, t.topic_key, d.content_hash FROM tier2 t"
            " JOIN documents d ON d.id = t.document_id"))
        captures = sorted(tuple(r) for r in conn.execute(  # every capture, by content (its
            # captured_at is the ingest's time for a live event: a reindex dates it anew)
            "SELECT c.event_id, d.content_hash, c.project, c.session_id, c.tool_name"
            " FROM captures c JOIN documents d ON d.id = c.document_id"))
        unique = conn.execute("SELECT coalesce(sum(bytes), 0) FROM documents").fetchone()[0]
    return {"docs": docs, "tier1": tier1, "tier2": tier2, "captures": captures, "unique": unique}


def breakdown(folder: str) -> None:
    """The largest tables and indexes of each file (SQLite's dbstat, when compiled in)."""
    import sqlite3

    for name in ("memhooks.db", "journal.db"):
        conn = sqlite3.connect(os.path.join(folder, name))
        try:
            rows = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"
                                " ORDER BY 2 DESC LIMIT 10").fetchall()
            free = conn.execute("PRAGMA freelist_count").fetchone()[0] * conn.execute(
                "PRAGMA page_size").fetchone()[0]
        except sqlite3.Error:
            return
        finally:
            conn.close()
        print(f"  {name}: " + ", ".join(f"{n} {b:,}" for n, b in rows) + f"; free pages {free:,}")


def print_sizes(title: str, sizes: dict[str, int], unique: int) -> None:
    total = sum(sizes.values())
    print(title)
    for name in sorted(sizes):
        print(f"  {name:<28} {sizes[name]:>14,}")
    print(f"  {'total':<28} {total:>14,}")
    print(f"  unique content bytes         {unique:>14,}")
    print(f"  bytes on disk per unique content byte: {total / max(unique, 1):.2f}")


def growth(args) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        if args.keep:
            tmp = args.keep
        folder = os.path.join(tmp, "data")
        db = os.path.join(folder, "memhooks.db")
        os.environ.update(MEMHOOKS_DB=db, MEMHOOKS_NO_SPAWN="1", MEMHOOKS_OFFLINE="1",
                          CLAUDE_PROJECT_DIR=ROOT, XDG_STATE_HOME=os.path.join(tmp, "state"))
        os.environ.pop("CLAUDE_PLUGIN_DATA", None)
        seq = sequence(args.events, args.repeat, args.distinct)
        rng = random.Random(11)
        batch = []
        for n, i in enumerate(seq):
            batch.append(event(n, i, ROOT, rng))
            if len(batch) >= args.ingest_every:
                journal_events(db, batch)
                batch = []
                run_ingester()
        journal_events(db, batch)
        run_ingester()
        before = snapshot(db)
        print(f"{args.events} events, {args.repeat:.0%} repeats, {len(set(seq))} distinct contents;"
              f" {len(before['docs'])} documents, {len(before['captures'])} captures")
        print_sizes("store folder after capture + ingest:", folder_sizes(folder), before["unique"])
        breakdown(folder)
        from memhooks.ingest.pipeline import reindex
        from memhooks.store.connect import closing, connect

        with closing(connect(db)) as conn:
            reindex(conn, db)
        after = snapshot(db)
        same = {k: before[k] == after[k] for k in ("docs", "tier1", "tier2", "captures")}
        print(f"reindex gives the same: {same}")
        return all(same.values())


def _prose(seed: int, size: int) -> str:
    rng = random.Random(seed)
    lines, total = [f"### Section {seed}"], 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(12)) + f" {seed}.{total}."
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def cap_check(args) -> bool:
    """3x the cap's worth of distinct documents through the journal and the detached
    ingester's code with MEMHOOKS_MAX_SIZE set; one document read early through the reads
    log, one of a current project's pinned version."""
    import time

    from memhooks.config import parse_size

    cap = parse_size(args.cap)
    assert cap is not None, f"not a size: {args.cap!r}"
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "data")
        db = os.path.join(folder, "memhooks.db")
        os.environ.update(MEMHOOKS_DB=db, MEMHOOKS_NO_SPAWN="1", MEMHOOKS_OFFLINE="1",
                          MEMHOOKS_MAX_SIZE=args.cap, CLAUDE_PROJECT_DIR=ROOT,
                          XDG_STATE_HOME=os.path.join(tmp, "state"))
        from memhooks.store.connect import closing, connect
        from memhooks.store.reads import note

        run_ingester()
        project = os.path.join(tmp, "project")
        with closing(connect(db)) as conn:
            now = time.time()
            conn.execute("INSERT INTO warm_state (project, fingerprint, files, dirs, ranked, warmed_at)"
                         " VALUES (?, 'f', '[]', '[]', '[]', ?)", (project, now))
            conn.execute("INSERT INTO tier1 (project, name_key, loose_key, name, library_id, version,"
                         " versioned_id, origin, resolved_at, expires_at) VALUES (?, 'pinned', 'pinned',"
                         " 'pinned', '/org/pinned', '1.2.3', '/org/pinned/v1.2.3', 'warm-api', ?, ?)",
                         (project, now, now + 86400))

        def payload(n: int, library: str, query: str) -> bytes:
            return json.dumps({
                "session_id": f"s{n // 50}", "cwd": ROOT, "hook_event_name": "PostToolUse",
                "tool_name": "mcp__context7__query-docs",
                "tool_input": {"libraryId": library, "query": query},
                "tool_response": [{"type": "text", "text": _prose(n, 60000)}],
                "tool_use_id": f"toolu_{n:08d}"}).encode()

        journal_events(db, [payload(10**7, "/org/pinned/v1.2.3", "pinned")])
        n, read_hash = 0, None
        while n * 60000 < 3 * cap:
            journal_events(db, [payload(n + k, "/org/lib", f"q{n + k}") for k in range(25)])
            n += 25
            run_ingester()
            if read_hash is None and n >= 50:
                with closing(connect(db)) as conn:
                    read_hash = conn.execute("SELECT content_hash FROM documents WHERE topic = 'q3'"
                                             ).fetchone()[0]
                note(db, "tier2", "hit", ROOT, read_hash)  # what lc-cache-lookup-docs logs
        sizes = folder_sizes(folder)
        total = sum(sizes.values())
        with closing(connect(db)) as conn:
            kept_read = conn.execute("SELECT count(*) FROM documents WHERE content_hash = ?",
                                     (read_hash,)).fetchone()[0]
            kept_pin = conn.execute("SELECT count(*) FROM documents WHERE library_id = ?",
                                    ("/org/pinned/v1.2.3",)).fetchone()[0]
            docs = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        print(f"cap {cap:,} bytes: {n * 60000:,} bytes of distinct documents ingested; store folder "
              f"{total:,} bytes ({total / cap:.0%} of the cap), {docs} documents kept; "
              f"last-read kept: {bool(kept_read)}, pinned kept: {bool(kept_pin)}")
        return total <= 1.1 * cap and kept_read and kept_pin


FOLD = """
import sys, time
sys.path.insert(0, {src!r})
from memhooks.ingest.pipeline import fold_reads_log
from memhooks.store.connect import connect

def hwm():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) * 1024

conn = connect({db!r})
before = hwm()
t0 = time.perf_counter()
n = fold_reads_log(conn, {db!r})
print(n, before, hwm(), time.perf_counter() - t0)
"""


def reads_fold(args) -> bool:
    """A reads log of `--reads-log` MB folded in a child process: its peak RSS."""
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "data", "memhooks.db")
        env = dict(os.environ, MEMHOOKS_DB=db, MEMHOOKS_NO_SPAWN="1")
        subprocess.run([sys.executable, "-c", FOLD.format(src=os.path.join(ROOT, "src"), db=db)],
                       env=env, check=True, capture_output=True)  # the store, folding nothing
        lines = []
        for i in range(4000):
            kind = "tier1" if i % 2 else "tier2"
            lines.append(f"{kind}\thit\t{1700000000 + i}.000\t-\t/home/dev/project-{i % 50}\n")
        block = "".join(lines).encode()
        reps = args.reads_log * 1024 * 1024 // len(block) + 1
        with open(os.path.join(tmp, "data", "reads.log"), "wb") as fh:
            for _ in range(reps):
                fh.write(block)
        out = subprocess.run([sys.executable, "-c", FOLD.format(src=os.path.join(ROOT, "src"), db=db)],
                             env=env, check=True, capture_output=True, text=True).stdout
        n, before, peak, took = out.split()
        print(f"reads.log of {reps * len(block):,} bytes ({int(n):,} lines) folded in {float(took):.1f} s;"
              f" peak RSS {int(peak) / 2**20:.1f} MiB ({int(before) / 2**20:.1f} MiB before the fold)")
        return int(n) == reps * len(lines) and int(peak) < 100 * 2**20


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--repeat", type=float, default=0.8)
    ap.add_argument("--distinct", type=int, default=500)
    ap.add_argument("--ingest-every", type=int, default=100)
    ap.add_argument("--cap", default="20MB")
    ap.add_argument("--skip-growth", action="store_true")
    ap.add_argument("--skip-cap", action="store_true")
    ap.add_argument("--keep", help="build the store in this folder and leave it there")
    ap.add_argument("--reads-log", type=int, default=512, metavar="MB",
                    help="fold a reads.log this big (0: skip)")
    args = ap.parse_args()
    ok = True
    if not args.skip_growth:
        ok = growth(args) and ok
    if not args.skip_cap:
        ok = cap_check(args) and ok
    if args.reads_log:
        ok = reads_fold(args) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
