"""Serve benchmark: the PreToolUse decision over 1k, 10k and 50k documents, and the hook process.

    python benchmarks/serve.py [--sizes 1000,10000,50000] [--rounds 25] [--rebuild]

Stores (cached at /tmp/memhooks-bench/serve-<docs>.db) hold generated documents
(a quarter of their words taken from the relevance set's queries, so the words a
query looks for are common) in the shapes the capture path writes: 70 % Context7 query-docs answers (3–8
snippets each, with tier2 rows) over docs/25 libraries, one "hot" library with
250 documents (more than the decision looks at), 15 % WebFetch results and
15 % EXA page fetches; plus the labelled relevance set's 32 libraries
(tests/fixtures/serve/relevance.json).

1. Decision time in process (`serve.decide`, what the hook runs after reading
   stdin): p50/p95 over hits and misses (relevance-set queries, the hot library,
   WebFetch/EXA URLs captured and not).
2. The whole hook process (`python -I -S _entry.py pre-tool-use` with a payload on
   stdin, and the plugin's `hooks/pre-tool-use` shim with a launcher in place) on a query-docs hit and miss (a library with one document, and the hot
   library), on the largest store, as ratios of medians to
   `python -c pass` and `python -I -S -c pass`, the three run alternately.

3. The large-document case (`--large`, on by default; `--large-only` skips 1 and 2):
   a store whose library holds 4 documents of 16 MiB each (tests/bigdocs.py:
   Context7-shaped markdown with code blocks, Zipf-distributed made-up words, a few
   English topic snippets planted past the middle of each; stored by the projections'
   writer with the byte cap raised to 16 MiB, what `lc-cache-write` accepts; capture's
   own cap, MEMHOOKS_MAX_DOC_BYTES, is 2 MiB by default). Hits, misses (words the library
   lacks) and near-misses (every word present, but not in three snippets, or one word
   absent): decision p50/p99 in process (`serve.decide` with the default budget) and of
   the whole hook process (`python -I -S _entry.py pre-tool-use`), each run alternating
   with `python -c pass` (the machine floor), printed with the budget and the hook's
   timeout in hooks.json.

Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from memhooks.recall import serve
from memhooks.store.bodies import add_functions
from memhooks.store.connect import connect, transaction
from memhooks.store.projections import upsert_document, upsert_tier2

ENTRY = os.path.join(ROOT, "src", "memhooks", "_entry.py")
RELEVANCE = os.path.join(ROOT, "tests", "fixtures", "serve", "relevance.json")
HOT = "/facebook/react"
HOT_DOCS = 250
PROMPT = "Summarise the installation steps"


def vocab(rng: random.Random, n: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(n)]


def english() -> list[str]:
    """Every word of the relevance set's queries: sprinkled into the generated documents so
    the words a served query looks for have long FTS doclists (the slow case)."""
    with open(RELEVANCE, encoding="utf-8") as f:
        rel = json.load(f)
    return sorted({w.lower() for lib in rel["libraries"] for q in lib["queries"]
                   for w in q["query"].replace("?", " ").split() if w.isalpha()})


ENGLISH: list[str] = []


def text(rng: random.Random, words: list[str], n: int) -> str:
    # Zipf-like over generated words (low indexes are common), a quarter English words
    if not ENGLISH:
        ENGLISH.extend(english())
    return " ".join(rng.choice(ENGLISH) if rng.random() < 0.25 else
                    words[min(len(words) - 1, int(rng.paretovariate(1.1)) - 1)] for _ in range(n))


def context7_doc(rng, words) -> str:
    parts = []
    for _ in range(rng.randint(3, 8)):
        parts.append(f"### {text(rng, words, 4).title()}\n\nSource: https://docs.invalid/{rng.randrange(10**6)}"
                     f"\n\n{text(rng, words, rng.randint(25, 70))}\n\n```js\n{text(rng, words, 20)}\n```")
    return "\n\n--------------------------------\n\n".join(parts)


def build(path: str, docs: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    words = vocab(rng)
    conn = connect(path)
    now = time.time()
    libs = [f"/org{i}/lib{i}" for i in range(max(1, docs // 25))]
    n_c7, n_web = int(docs * 0.70), int(docs * 0.15)
    done = 0
    while done < docs:
        with transaction(conn):
            for _ in range(min(500, docs - done)):
                i = done
                done += 1
                if i < n_c7:
                    lid = HOT if i % max(1, n_c7 // HOT_DOCS) == 0 else rng.choice(libs)
                    topic = text(rng, words, 3)
                    did, _ = upsert_document(conn, provenance="capture", project="/p", source=lid, source_tool="context7",
                                             content=context7_doc(rng, words), library_id=lid, topic=topic,
                                             tool="query-docs", now=now - rng.random() * 3600)
                    assert did is not None
                    upsert_tier2(conn, provenance="capture", library_id=lid, topic=topic, document_id=did, origin="capture",
                                 ttl_s=4 * 3600, now=now - rng.random() * 3600)
                elif i < n_c7 + n_web:
                    url = f"https://site{i % 500}.invalid/page/{i}"
                    upsert_document(conn, provenance="capture", project="/p", source=url, source_tool="webfetch",
                                    content=text(rng, words, rng.randint(40, 200)), url=url,
                                    type="web-page", metadata={"prompt": PROMPT, "bytes": 20000},
                                    tool="WebFetch", now=now - rng.random() * 3600)
                else:
                    url = f"https://exa{i % 500}.invalid/doc/{i}"
                    upsert_document(conn, provenance="capture", project="/p", source=url, source_tool="exa",
                                    content=text(rng, words, rng.randint(200, 900)), url=url,
                                    title=text(rng, words, 4), type="web-page", tool="web_fetch_exa",
                                    now=now - rng.random() * 3600)
    with open(RELEVANCE, encoding="utf-8") as f:
        rel = json.load(f)
    with transaction(conn):
        for lib in rel["libraries"]:
            did, _ = upsert_document(conn, provenance="capture", project="/p", source=lib["library_id"], source_tool="context7",
                                     content=lib["content"], library_id=lib["library_id"],
                                     topic=lib["topic"], tool="query-docs", now=now)
            assert did is not None
            upsert_tier2(conn, provenance="capture", library_id=lib["library_id"], topic=lib["topic"], document_id=did,
                         origin="capture", ttl_s=4 * 3600, now=now)
    conn.execute("PRAGMA optimize")
    conn.close()


def calls(docs: int) -> tuple[list, list]:
    """(hits, misses) as (tool_name, tool_input) pairs."""
    with open(RELEVANCE, encoding="utf-8") as f:
        rel = json.load(f)
    c7 = "mcp__context7__query-docs"
    hits: list[tuple[str, dict]] = []
    misses: list[tuple[str, dict]] = []
    for lib in rel["libraries"]:
        for q in lib["queries"]:
            (hits if q["serve"] else misses).append((c7, {"libraryId": lib["library_id"], "query": q["query"]}))
    n_c7, n_web = int(docs * 0.70), int(docs * 0.15)
    for i in range(40):
        misses.append((c7, {"libraryId": HOT, "query": f"server component streaming part {i}"}))
        misses.append((c7, {"libraryId": f"/org{i}/lib{i}", "query": "configure the retry policy"}))
        j = n_c7 + (i * 37) % max(1, n_web)
        hits.append(("WebFetch", {"url": f"https://site{j % 500}.invalid/page/{j}", "prompt": PROMPT}))
        misses.append(("WebFetch", {"url": f"https://site{j % 500}.invalid/page/{j}", "prompt": "other"}))
        k = n_c7 + n_web + (i * 41) % max(1, docs - n_c7 - n_web)
        hits.append(("mcp__exa__web_fetch_exa", {"urls": [f"https://exa{k % 500}.invalid/doc/{k}"]}))
        misses.append(("mcp__exa__crawling_exa", {"url": f"https://exa{k % 500}.invalid/doc/none{i}"}))
    return hits, misses


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def decision_times(path: str, docs: int) -> dict:
    import sqlite3

    conn = sqlite3.connect(path, isolation_level=None)
    add_functions(conn)  # document_text/document_head, as every memhooks connection
    hits, misses = calls(docs)
    out = {}
    for label, batch in (("hit", hits), ("miss", misses)):
        times, served = [], 0
        for _ in range(2):
            for tool, args in batch:
                t0 = time.perf_counter()
                got = serve.decide(conn, tool, args, "/p")
                times.append((time.perf_counter() - t0) * 1000)
                served += got is not None
        out[label] = {"n": len(times), "served": served, "p50_ms": round(pct(times, 50), 2),
                      "p95_ms": round(pct(times, 95), 2), "max_ms": round(max(times), 2)}
    conn.close()
    return out


def run_once(argv, stdin=None, env=None) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                   check=False)
    return (time.perf_counter() - t0) * 1000


def process_times(path: str, docs: int, rounds: int) -> dict:
    env = dict(os.environ, MEMHOOKS_DB=path)
    hits, misses = calls(docs)
    py = sys.executable
    bases = {"python -c pass": [py, "-c", "pass"], "python -I -S -c pass": [py, "-I", "-S", "-c", "pass"]}
    hook = [py, "-I", "-S", ENTRY, "pre-tool-use"]
    # The plugin's shim as Claude Code runs it, with the launcher SessionStart writes.
    import tempfile

    state = tempfile.mkdtemp(prefix="memhooks-bench-state-")
    with open(os.path.join(state, "python.marker"), "w") as fh:
        fh.write(f"hot={py}\nfull={py}\nstamp=\n")
    shim = ["bash", os.path.join(ROOT, "hooks", "pre-tool-use")]
    shim_env = {k: v for k, v in env.items() if not k.startswith(("MEMHOOKS_PYTHON", "CLAUDE_"))}
    shim_env["CLAUDE_PLUGIN_DATA"] = state
    # a query-docs call this store really serves, and one it really does not (generated
    # documents can happen to contain every word of a "miss")
    import sqlite3

    conn = sqlite3.connect(path)
    add_functions(conn)  # document_text/document_head, as every memhooks connection

    def pick(pool, served: bool, hot: bool):
        return next(c for c in pool if c[0].endswith("query-docs") and (c[1]["libraryId"] == HOT) == hot
                    and (serve.decide(conn, c[0], c[1], "/p") is not None) == served)

    chosen = {"hit": pick(hits, True, False), "miss": pick(misses, False, False),
              f"hit, library with {HOT_DOCS} docs": pick(hits, True, True),
              f"miss, library with {HOT_DOCS} docs": pick(misses, False, True)}
    conn.close()
    out = {}
    for label, (tool, args) in chosen.items():
        times: dict[str, list[float]] = {k: [] for k in (*bases, "hook", "shim")}
        for r in range(rounds + 3):
            payload = json.dumps({"session_id": f"bench-{label}-{r}", "cwd": "/p", "tool_name": tool,
                                  "tool_input": args, "hook_event_name": "PreToolUse"}).encode()
            row = {k: run_once(v) for k, v in bases.items()}
            row["hook"] = run_once(hook, payload, env)
            row["shim"] = run_once(shim, payload.replace(b"bench-", b"bench-shim-"), shim_env)
            if r >= 3:  # warm-up rounds dropped
                for k, v in row.items():
                    times[k].append(v)
        med = {k: statistics.median(v) for k, v in times.items()}
        out[label] = {"hook_ms": round(med["hook"], 2), "shim_ms": round(med["shim"], 2),
                      **{f"{k} ms": round(med[k], 2) for k in bases},
                      **{f"ratio to {k}": round(med["hook"] / med[k], 2) for k in bases},
                      **{f"shim ratio to {k}": round(med["shim"] / med[k], 2) for k in bases},
                      "call": args, "rounds": rounds}
    return out


def hook_timeout_s() -> float:
    with open(os.path.join(ROOT, "hooks.json"), encoding="utf-8") as f:
        spec = json.load(f)
    return float(spec["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"])


def large_case(rounds: int, rebuild: bool) -> dict:
    """Decision and hook-process times on a library of 4 x 16 MiB documents."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import sqlite3

    import bigdocs
    from memhooks.recall.budget import DEFAULT_BUDGET_MS

    path = "/tmp/memhooks-bench/serve-large.db"
    if rebuild or not os.path.exists(path):
        journal = path.removesuffix(".db") + ".journal.db"
        for f in (path, journal):
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(f + suffix):
                    os.remove(f + suffix)
        t0 = time.perf_counter()
        bigdocs.build(path)
        print(f"built {path} (4 x 16 MiB documents) in {time.perf_counter() - t0:.0f} s", flush=True)
    with sqlite3.connect(path) as c:
        sizes = [r[0] for r in c.execute("SELECT bytes FROM documents WHERE library_id = ?", (bigdocs.LIBRARY,))]
    budget_ms = float(os.environ.get("MEMHOOKS_SERVE_BUDGET_MS") or DEFAULT_BUDGET_MS)
    report: dict = {"documents_bytes": sizes, "budget_ms": budget_ms, "hook_timeout_s": hook_timeout_s()}
    kinds = {"hit": bigdocs.HITS, "miss": bigdocs.MISSES, "near-miss": bigdocs.NEAR_MISSES}
    c7 = "mcp__context7__query-docs"
    py = sys.executable
    hook = [py, "-I", "-S", ENTRY, "pre-tool-use"]
    env = dict(os.environ, MEMHOOKS_DB=path)
    conn = sqlite3.connect(path, isolation_level=None)
    add_functions(conn)  # document_text/document_head, as every memhooks connection
    floor: list[float] = []
    for kind, queries_ in kinds.items():
        decide_ms, hook_ms, served, hook_served, codes = [], [], 0, 0, set()
        runs = max(rounds, 20)
        for r in range(runs + 2):
            query = queries_[r % len(queries_)]
            args = {"libraryId": bigdocs.LIBRARY, "query": query}
            t0 = time.perf_counter()
            got = serve.decide(conn, c7, args, "/p")
            d_ms = (time.perf_counter() - t0) * 1000
            payload = json.dumps({"session_id": f"large-{kind}-{r}-{time.time()}", "cwd": "/p",
                                  "tool_name": c7, "tool_input": args,
                                  "hook_event_name": "PreToolUse"}).encode()
            f_ms = run_once([py, "-c", "pass"])
            t0 = time.perf_counter()
            proc = subprocess.run(hook, input=payload, capture_output=True, env=env, check=False)
            h_ms = (time.perf_counter() - t0) * 1000
            if r < 2:
                continue  # warm-up
            decide_ms.append(d_ms)
            floor.append(f_ms)
            hook_ms.append(h_ms)
            served += got is not None
            hook_served += bool(proc.stdout.strip())
            codes.add(proc.returncode)
        report[kind] = {
            "runs": len(decide_ms), "queries": len(queries_),
            "decide_p50_ms": round(pct(decide_ms, 50), 1), "decide_p99_ms": round(pct(decide_ms, 99), 1),
            "decide_max_ms": round(max(decide_ms), 1), "decide_served": served,
            "hook_p50_ms": round(pct(hook_ms, 50), 1), "hook_p99_ms": round(pct(hook_ms, 99), 1),
            "hook_max_ms": round(max(hook_ms), 1), "hook_served": hook_served,
            "hook_exit_codes": sorted(codes),
        }
    conn.close()
    report["floor python -c pass p50_ms"] = round(statistics.median(floor), 1)
    return report


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,50000")
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--large", action=argparse.BooleanOptionalAction, default=True,
                    help="the 4 x 16 MiB library case (default on)")
    ap.add_argument("--large-only", action="store_true", help="only the large-document case")
    args = ap.parse_args()
    os.makedirs("/tmp/memhooks-bench", exist_ok=True)
    if args.large or args.large_only:
        large = large_case(args.rounds, args.rebuild)
        print(f"large documents: budget {large['budget_ms']:.0f} ms, hook timeout {large['hook_timeout_s']:.0f} s,"
              f" documents {large['documents_bytes']} bytes, machine floor (python -c pass, median of the"
              f" same alternating loop) {large['floor python -c pass p50_ms']} ms", flush=True)
        for kind in ("hit", "miss", "near-miss"):
            print(f"large documents, {kind}: {json.dumps(large[kind])}", flush=True)
        if args.large_only:
            return
    sizes = [int(s) for s in args.sizes.split(",")]
    report = {}
    for docs in sizes:
        path = f"/tmp/memhooks-bench/serve-{docs}.db"
        if args.rebuild or not os.path.exists(path):
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(path + suffix):
                    os.remove(path + suffix)
            t0 = time.perf_counter()
            build(path, docs)
            print(f"built {path} ({docs} docs) in {time.perf_counter() - t0:.0f} s", flush=True)
        report[f"decision {docs}"] = decision_times(path, docs)
        print(f"decision @ {docs} docs: {json.dumps(report[f'decision {docs}'])}", flush=True)
    big = max(sizes)
    report["process"] = process_times(f"/tmp/memhooks-bench/serve-{big}.db", big, args.rounds)
    for label, r in report["process"].items():
        print(f"hook process @ {big} docs, {label}: {json.dumps(r)}", flush=True)


if __name__ == "__main__":
    main()
