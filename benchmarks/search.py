"""Recall benchmark: how well search finds the right page, and how fast.

    python benchmarks/search.py [--pages 1000] [--library] [--json OUT]
    python benchmarks/search.py --latency [--docs 50000] [--rebuild] [--store PATH]

Relevance (the default): the three documentation sets of benchmarks/search_corpus (pages of
openly licensed projects' docs, their licences beside them) are stored as `memhooks add`
stores pages, with generated filler pages up to `--pages` in all, and every question of
benchmarks/search_corpus/questions.json (graded 3/2/1 by hand) is asked through
search.search_documents. A result names a page by its URL (without the #anchor); the
first five distinct pages are judged. Printed: Recall@5, MRR (over the top 5), nDCG@5
(gain 2^grade - 1) and Hit@1/3/5, overall, per intent and per library, and the query
p50/p95; then the same for each half of the questions. The split is by question: those at
even positions of questions.json (0, 2, 4, ...) are the tuning half, on which ranking
parameters are chosen (the [semantic] extra's K and BETA, its embedded text); those at odd
positions are the check half, never tuned on. `--library` passes the question's library as
the library argument; `--semantic` turns on the [semantic] extra's hybrid ranking.

Latency (`--latency`): search latency over 50,000 documents, storage overhead,
and `memhooks mcp` start-up.

Builds (once; cached at /tmp/memhooks-bench/search-<docs>.db) a store of
realistic generated markdown documents of mixed sizes (1–20 KB, skewed towards
small), inserted through projections.upsert_document in batched transactions.
Then it times search.search_documents in-process over a fixed query set
(access counting included), prints p50/p95, the DB bytes per unique content
byte (as built, and after PRAGMA optimize + VACUUM), and the time from
spawning `memhooks mcp` to its `initialize` response.

Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from memhooks.recall.search import search_documents
from memhooks.store.connect import connect, transaction
from memhooks.store.projections import upsert_document

LIBRARIES = [
    ("/facebook/react", "react"), ("/vercel/next.js", "next.js"), ("/tanstack/query", "query"),
    ("/pallets/flask", "flask"), ("/django/django", "django"), ("/tiangolo/fastapi", "fastapi"),
    ("/sqlalchemy/sqlalchemy", "sqlalchemy"), ("/pydantic/pydantic", "pydantic"),
    ("/rust-lang/rust", "rust"), ("/tokio-rs/tokio", "tokio"), ("/serde-rs/serde", "serde"),
    ("/vuejs/core", "vue"), ("/sveltejs/svelte", "svelte"), ("/expressjs/express", "express"),
    ("/prisma/prisma", "prisma"), ("/microsoft/typescript", "typescript"),
    ("/golang/go", "go"), ("/gin-gonic/gin", "gin"), ("/rails/rails", "rails"),
    ("/laravel/framework", "laravel"), ("/tailwindlabs/tailwindcss", "tailwindcss"),
    ("/vitejs/vite", "vite"), ("/pytest-dev/pytest", "pytest"), ("/numpy/numpy", "numpy"),
    ("/pandas-dev/pandas", "pandas"), ("/psf/requests", "requests"), ("/encode/httpx", "httpx"),
    ("/redis/redis-py", "redis"), ("/mongodb/mongo-python-driver", "pymongo"),
    ("/upstash/context7", "context7"),
]

COMMON = ("the a to of and in is for with you that this it on be can are as use your from an by "
          "or will not when if function component data value return request response example "
          "file configuration server client type error default options state hook query cache "
          "update create using call set new used object string list async await import module "
          "api route page render props event handler test run build install version").split()

CODE = [
    "```js\nuseEffect(() => {\n  const c = connect(url);\n  return () => c.disconnect();\n}, [url]);\n```",
    "```python\n@app.get(\"/items/{item_id}\")\nasync def read_item(item_id: int):\n    return {\"id\": item_id}\n```",
    "```ts\nexport async function middleware(req: NextRequest) {\n  return NextResponse.redirect(new URL('/login', req.url))\n}\n```",
    "```rust\n#[tokio::main]\nasync fn main() -> Result<(), Box<dyn Error>> {\n    let v: Value = serde_json::from_str(s)?;\n    Ok(())\n}\n```",
    "```sql\nSELECT id, name FROM users WHERE created_at > now() - interval '1 day';\n```",
    "```bash\npip install 'fastapi[standard]' && uvicorn main:app --reload\n```",
    "```cpp\nstd::vector<int> v{1, 2, 3};\nfor (auto& x : v) std::cout << x << '\\n';\n```",
]


def _vocabulary(rng: random.Random, n: int = 20000) -> list[str]:
    syll = ["ka", "lo", "mi", "ne", "ru", "ta", "zo", "pe", "qu", "ix", "an", "or", "el", "st",
            "tr", "ch", "sh", "ver", "con", "pro", "ble", "ment", "tion", "ing", "er", "ize"]
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(syll) for _ in range(rng.randint(2, 4))))
    return COMMON + sorted(words)


def _zipf_weights(n: int) -> list[float]:
    acc, out = 0.0, []
    for i in range(n):
        acc += 1.0 / (i + 1) ** 1.05
        out.append(acc)
    return out


def _size(rng: random.Random) -> int:
    # log-uniform between 1 and 20 KB
    return int(1024 * 20 ** rng.random())


def _doc(rng: random.Random, vocab: list[str], cum: list[float], i: int) -> dict:
    lib, repo = LIBRARIES[i % len(LIBRARIES)]
    target = _size(rng)
    topic_words = rng.choices(vocab, cum_weights=cum, k=3)
    title = f"{repo} {' '.join(topic_words)}"
    parts = [f"### {title} ({lib})", "", f"Source: https://docs.example.com/{repo}/{'-'.join(topic_words)}/{i}", ""]
    size = sum(len(p) + 1 for p in parts)
    while size < target:
        if rng.random() < 0.2:
            block = rng.choice(CODE)
        else:
            words = rng.choices(vocab, cum_weights=cum, k=rng.randint(25, 90))
            if rng.random() < 0.3:
                words.insert(rng.randrange(len(words)), repo)
            block = " ".join(words).capitalize() + "."
        parts.append(block)
        parts.append("")
        size += len(block) + 2
        if rng.random() < 0.08:
            h = f"### {' '.join(rng.choices(vocab, cum_weights=cum, k=3))}"
            parts.append(h)
            size += len(h) + 1
    content = "\n".join(parts)
    kind = rng.random()
    if kind < 0.7:
        return dict(source=lib, source_tool="context7", type="library-docs", library_id=lib,
                    topic=" ".join(topic_words), title=title, content=content, tool="query-docs")
    url = f"https://blog.example.org/{repo}/{i}"
    if kind < 0.85:
        return dict(source=url, source_tool="exa", type="web-page", url=url, title=title,
                    content=content, tool="web_fetch_exa")
    return dict(source=url, source_tool="webfetch", type="web-page", url=url, title=title,
                content=content, tool="WebFetch")


def build(path: str, n: int, seed: int = 7) -> float:
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    cum = _zipf_weights(len(vocab))
    conn = connect(path)
    t0 = time.perf_counter()
    batch = 1000
    now = time.time() - 86400 * 30
    for start in range(0, n, batch):
        with transaction(conn):
            for i in range(start, min(n, start + batch)):
                d = _doc(rng, vocab, cum, i)
                upsert_document(conn, provenance="capture", project="/bench/project", now=now + i, **d)
        if (start // batch) % 10 == 0:
            print(f"  built {min(n, start + batch):,}/{n:,} documents "
                  f"({time.perf_counter() - t0:.0f}s)", file=sys.stderr)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return time.perf_counter() - t0


QUERIES = [
    # common words
    "function", "return value", "the", "configuration options", "error handling",
    # rare (generated) words, single and multi-word
    "kalomi", "verconment", "shixtr", "protion chble",
    # library names and IDs
    "react", "next.js", "@tanstack/react-query", "/facebook/react", "fastapi", "tokio serde",
    # multi-word, code-like
    "useEffect cleanup disconnect", "async def read_item", "NextResponse.redirect middleware",
    "std::vector", "c++",
    # short, 2-char and odd
    "go", "ui", "qu", "=>", "SELECT id FROM users",
    # hostile
    '"unterminated', "NEAR(a b) OR *", "x" * 2000,
]


def bench_queries(conn, rounds: int) -> tuple[list[float], dict[str, float], dict[str, int]]:
    times: list[float] = []
    per: dict[str, list[float]] = {q: [] for q in QUERIES}
    counts: dict[str, int] = {}
    for q in QUERIES:  # warm-up round
        counts[q] = len(search_documents(conn, q, 10))
    for _ in range(rounds):
        for q in QUERIES:
            t = time.perf_counter()
            search_documents(conn, q, 10)
            dt = (time.perf_counter() - t) * 1000
            times.append(dt)
            per[q].append(dt)
    return times, {q: statistics.median(v) for q, v in per.items()}, counts


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    k = max(0, min(len(s) - 1, round(p / 100 * (len(s) - 1))))
    return s[k]


def db_bytes(path: str) -> int:
    return sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))


def mcp_startup(path: str, runs: int = 5) -> list[float]:
    entry = os.path.join(ROOT, "src", "memhooks", "_entry.py")
    env = {**os.environ, "MEMHOOKS_DB": path}
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}}) + "\n"
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.Popen([sys.executable, entry, "mcp"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(init)
        proc.stdin.flush()
        line = proc.stdout.readline()
        out.append((time.perf_counter() - t) * 1000)
        assert '"result"' in line, line
        proc.stdin.close()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return out


def python_startup(runs: int = 5) -> float:
    vals = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        vals.append((time.perf_counter() - t) * 1000)
    return statistics.median(vals)


CORPUS = os.path.join(ROOT, "benchmarks", "search_corpus")
SETS = {  # set: (library ID, URL of a page given its docs path without extension)
    "sqlite-utils": ("/simonw/sqlite-utils", "https://sqlite-utils.datasette.io/en/stable/{}.html"),
    "llm": ("/simonw/llm", "https://llm.datasette.io/en/stable/{}.html"),
    "pipx": ("/pypa/pipx", "https://pipx.pypa.io/stable/{}/"),
}


def page_url(page: str) -> str:
    """`set/file` (questions.json's page names) -> the page's URL."""
    name, stem = page.split("/", 1)
    return SETS[name][1].format(stem.replace("__", "/"))


def page_title(text: str) -> str | None:
    for line in text.split("\n"):
        if line.startswith("# "):
            title = line[2:]
            return title.split(" {#", 1)[0].strip() or None
    return None


def build_relevance(path: str, pages: int, seed: int = 11) -> tuple[int, int]:
    """The documentation sets as `memhooks add` keeps pages, then filler up to `pages`."""
    for suffix in ("", "-wal", "-shm", ".journal", ".journal-wal", ".journal-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    conn = connect(path)
    now = time.time() - 86400
    real = 0
    with transaction(conn):
        for name, (lid, _) in SETS.items():
            folder = os.path.join(CORPUS, name)
            for fn in sorted(os.listdir(folder)):
                if not fn.endswith(".md"):
                    continue
                with open(os.path.join(folder, fn), encoding="utf-8") as fh:
                    text = fh.read()
                url = page_url(f"{name}/{fn[:-3]}")
                upsert_document(conn, project="", source=url, source_tool="web", tool="memhooks-add",
                                content=text, title=page_title(text) or url, type="library-docs",
                                url=url, library_id=lid, provenance="added", now=now + real)
                real += 1
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    cum = _zipf_weights(len(vocab))
    with transaction(conn):
        for i in range(max(0, pages - real)):
            upsert_document(conn, provenance="capture", project="/bench/project", now=now + real + i,
                            **_doc(rng, vocab, cum, i))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return real, max(0, pages - real)


def judged(results: list[dict], k: int = 5) -> list[str]:
    """The first `k` distinct pages of a result list, by URL without its fragment."""
    out: list[str] = []
    for r in results:
        url = (r.get("url") or r.get("source") or "").split("#", 1)[0]
        if url and url not in out:
            out.append(url)
        if len(out) == k:
            break
    return out


def scores(got: list[str], rel: dict[str, int], k: int = 5) -> dict[str, float]:
    top = got[:k]
    hits = [u for u in top if u in rel]
    first = next((i for i, u in enumerate(top) if u in rel), None)
    dcg = sum((2 ** rel[u] - 1) / math.log2(i + 2) for i, u in enumerate(top) if u in rel)
    ideal = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(sorted(rel.values(), reverse=True)[:k]))
    return {"recall@5": len(hits) / len(rel), "mrr": 0.0 if first is None else 1.0 / (first + 1),
            "ndcg@5": dcg / ideal if ideal else 0.0,
            "hit@1": float(first is not None and first < 1), "hit@3": float(first is not None and first < 3),
            "hit@5": float(first is not None)}


METRICS = ("recall@5", "mrr", "ndcg@5", "hit@1", "hit@3", "hit@5")


def _mean(rows: list[dict]) -> dict[str, float]:
    return {m: statistics.fmean(r[m] for r in rows) for m in METRICS}


HALVES = {"tuning half (even positions)": 0, "check half (odd positions)": 1}


def relevance(conn, questions: list[dict], by_library: bool, rounds: int = 3) -> dict:
    per: list[dict] = []
    times: list[float] = []
    for n, q in enumerate(questions):
        rel = {page_url(p): g for p, g in q["rel"].items()}
        kwargs: dict[str, Any] = {"library": SETS[q["library"]][0]} if by_library else {}
        results = search_documents(conn, q["q"], 10, **kwargs)
        for _ in range(rounds):
            t = time.perf_counter()
            search_documents(conn, q["q"], 10, **kwargs)
            times.append((time.perf_counter() - t) * 1000)
        got = judged(results)
        per.append({**scores(got, rel), "q": q["q"], "intent": q["intent"], "library": q["library"],
                    "got": got, "half": n % 2, "ms": times[-rounds:]})
    out = _summary(per)
    out["questions"] = per
    out["halves"] = {name: _summary([r for r in per if r["half"] == h]) for name, h in HALVES.items()}
    return out


def _summary(per: list[dict]) -> dict:
    times = [t for r in per for t in r["ms"]]
    out: dict[str, Any] = {"all": _mean(per), "n": len(per), "p50_ms": pct(times, 50), "p95_ms": pct(times, 95),
                           "intent": {}, "library": {}}
    for key in ("intent", "library"):
        for value in sorted({r[key] for r in per}):
            rows = [r for r in per if r[key] == value]
            out[key][value] = {**_mean(rows), "n": len(rows)}
    return out


def print_relevance(res: dict) -> None:
    head = f"{'':24}{'n':>4}" + "".join(f"{m:>10}" for m in METRICS)
    print(head)

    def line(name: str, row: dict, n: int) -> None:
        print(f"{name:24}{n:>4}" + "".join(f"{row[m]:>10.3f}" for m in METRICS))
    line("all", res["all"], res["n"])
    for key in ("intent", "library"):
        for value, row in res[key].items():
            line(f"{key} {value}", row, row["n"])
    print(f"query p50 {res['p50_ms']:.1f} ms   p95 {res['p95_ms']:.1f} ms")


def main_relevance(args) -> int:
    with open(os.path.join(CORPUS, "questions.json"), encoding="utf-8") as fh:
        questions = json.load(fh)["questions"]
    path = args.store or f"/tmp/memhooks-bench/relevance-{args.pages}.db"
    if args.weights:
        from memhooks.store import queries
        w = [float(x) for x in args.weights.split(",")]
        queries.SECTION_WEIGHTS = (w[0], w[1], w[2])
    if args.semantic:
        os.environ["MEMHOOKS_SEMANTIC"] = "1"
    real, filler = build_relevance(path, args.pages)
    conn = connect(path)
    if args.semantic:
        from memhooks.recall import semantic
        t = time.perf_counter()
        n = semantic.ensure_vectors(conn)
        print(f"semantic: {n:,} section vectors in {time.perf_counter() - t:.1f}s ({semantic.MODEL})")
    print(f"{real} documentation pages + {filler} filler pages; {len(questions)} questions"
          f"{' (library argument given)' if args.library else ''}{' (hybrid)' if args.semantic else ''}")
    res = relevance(conn, questions, args.library)
    sizes = {t: conn.execute(f"SELECT coalesce(sum(length(block)), 0) FROM {t}_data").fetchone()[0]
             for t in ("documents_fts", "sections_fts")}
    body = conn.execute("SELECT sum(length(body)) FROM documents").fetchone()[0]
    n_sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    conn.close()
    print(f"{n_sections:,} sections; compressed texts {body / 2**20:.1f} MiB, documents_fts "
          f"{sizes['documents_fts'] / 2**20:.1f} MiB, sections_fts {sizes['sections_fts'] / 2**20:.1f} MiB")
    print_relevance(res)
    for name, half in res["halves"].items():
        print(f"\n{name}")
        print_relevance(half)
    if args.verbose:
        for r in res["questions"]:
            if r["hit@1"] < 1 or r["recall@5"] < 1:
                print(f"  R@5 {r['recall@5']:.2f} RR {r['mrr']:.2f}  {r['q']!r}")
                for u in r["got"]:
                    print(f"      {u}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=1)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", action="store_true", help="the 50,000-document latency benchmark")
    ap.add_argument("--pages", type=int, default=1000)
    ap.add_argument("--library", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--semantic", action="store_true", help="the [semantic] extra's hybrid ranking")
    ap.add_argument("--weights", default=None, help="title,headings,body BM25 weights to try")
    ap.add_argument("--docs", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--store", default=None)
    ap.add_argument("--no-vacuum", action="store_true")
    args = ap.parse_args()
    if not args.latency:
        return main_relevance(args)
    path = args.store or f"/tmp/memhooks-bench/search-{args.docs}.db"
    if args.rebuild or not os.path.exists(path):
        print(f"building {args.docs:,} documents at {path} …", file=sys.stderr)
        secs = build(path, args.docs)
        print(f"built in {secs:.1f}s")
    else:
        print(f"reusing {path} (--rebuild to rebuild)")

    conn = connect(path)
    n, content_bytes = conn.execute("SELECT count(*), sum(bytes) FROM documents").fetchone()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    built = db_bytes(path)
    print(f"documents: {n:,}; unique content: {content_bytes / 2**20:,.1f} MiB; "
          f"mean {content_bytes / max(n, 1) / 1024:.1f} KiB")
    print(f"DB bytes per content byte (as built): {built / content_bytes:.3f} "
          f"({built / 2**20:,.1f} MiB)")
    if not args.no_vacuum:
        t = time.perf_counter()
        conn.execute("PRAGMA optimize")
        conn.execute("INSERT INTO documents_fts (documents_fts) VALUES ('optimize')")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        after = db_bytes(path)
        print(f"DB bytes per content byte (after FTS optimize + VACUUM, {time.perf_counter() - t:.0f}s): "
              f"{after / content_bytes:.3f} ({after / 2**20:,.1f} MiB)")

    times, per, counts = bench_queries(conn, args.rounds)
    print(f"\nsearch_documents (limit 10, {len(QUERIES)} queries × {args.rounds} rounds, "
          f"access counting included):")
    print(f"  p50 {pct(times, 50):.2f} ms   p95 {pct(times, 95):.2f} ms   max {max(times):.2f} ms")
    for q in QUERIES:
        shown = q if len(q) <= 40 else q[:37] + "…"
        print(f"  {per[q]:8.2f} ms  {counts[q]:3d} hits  {shown!r}")
    conn.close()

    base = python_startup()
    mcp = mcp_startup(path)
    print(f"\nmemhooks mcp spawn → initialize response: median {statistics.median(mcp):.0f} ms "
          f"(min {min(mcp):.0f}, max {max(mcp):.0f}); `python -c pass` {base:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
