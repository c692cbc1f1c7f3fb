"""Team store benchmark against a real PostgreSQL 16 (pgserver): push and pull throughput
for 10,000 documents, and team search latency (p50/p95) over 100,000 documents.

    python benchmarks/team.py [--docs 10000] [--search-docs 100000] [--queries 200]

* push: one local store with N generated documents (1-6 KB markdown over 20 libraries,
  with tier1 and library rows), pushed with memhooks.team.push.push (COPY + INSERT … ON
  CONFLICT, 500 documents or 8 MiB per transaction). A second push (nothing new) is timed
  too.
* pull: a second local store whose project's tier1 names those 20 libraries pulls all N
  documents through the projection functions (FTS5 triggers included).
* search: the team database is filled to --search-docs documents (pushed in-process from
  more local stores), then memhooks.team.search.search_team runs a fixed query set (rare
  and common words, two-word, phrase, negation), hits imported locally as `search --team`
  does; p50/p95 in ms. The whole `memhooks search --team` process is timed as well, with
  the interpreter floor.

Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import floor_line, once

from memhooks.store.connect import connect, transaction
from memhooks.store.projections import upsert_document, upsert_library, upsert_tier1

LIBS = ["react", "next.js", "query", "flask", "django", "fastapi", "sqlalchemy", "pydantic", "tokio",
        "serde", "vue", "svelte", "express", "prisma", "zod", "vite", "jest", "pytest", "numpy", "pandas"]
WORDS = ("state effect hook render component props context reducer memo callback ref suspense "
         "server client route handler middleware request response session cookie cache query "
         "mutation schema model field validator migration index transaction connection pool "
         "async await future stream channel runtime spawn task timeout retry error panic result "
         "option vector array frame series column merge join group filter select insert update "
         "delete config plugin build bundle module import export test fixture mock assert").split()
QUERIES = ["useEffect cleanup", "connection pool timeout", "schema validator", "middleware",
           '"server component"', "transaction -rollback", "render props", "fixture assert",
           "zzqx rare token", "stream channel runtime spawn", "cache", "react hook state"]


def _doc(rng: random.Random, i: int, tag: str) -> tuple[str, str, str, str]:
    lib = LIBS[i % len(LIBS)]
    lid = f"/org-{lib.replace('.', '-')}/{lib.replace('.', '-')}"
    topic = " ".join(rng.choices(WORDS, k=3))
    paras = []
    for _ in range(rng.randint(3, 18)):
        paras.append(" ".join(rng.choices(WORDS, k=rng.randint(20, 50))) + ".")
        if rng.random() < 0.3:
            paras.append("```js\n" + f"const {rng.choice(WORDS)} = use{rng.choice(WORDS).title()}({i});\n```")
    body = f"### {topic} ({lid}) [{tag} {i}]\n\n" + "\n\n".join(paras)
    return lid, lib, topic, body


def build_local(db: str, n: int, seed: int, tag: str, project: str) -> None:
    rng = random.Random(seed)
    conn = connect(db)
    try:
        with transaction(conn):
            for lib in LIBS:
                lid = f"/org-{lib.replace('.', '-')}/{lib.replace('.', '-')}"
                upsert_library(conn, provenance="capture", library_id=lid, title=lib, origin="capture")
                upsert_tier1(conn, provenance="capture", project=project, name=lib, library_id=lid, origin="capture",
                             ttl_s=86400)
        for start in range(0, n, 1000):
            with transaction(conn):
                for i in range(start, min(n, start + 1000)):
                    lid, _lib, topic, body = _doc(rng, i, tag)
                    upsert_document(conn, provenance="capture", project=project, source=lid, source_tool="context7",
                                    content=body, title=f"{lid} — {topic}", library_id=lid,
                                    topic=topic, type="library-docs")
    finally:
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--search-docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()

    import pgserver

    from memhooks.team.pull import pull
    from memhooks.team.push import push
    from memhooks.team.runner import open_team
    from memhooks.team.search import search_team

    tmp = tempfile.mkdtemp(prefix="memhooks-team-bench.")
    srv = pgserver.get_server(os.path.join(tmp, "pg"), cleanup_mode="delete")
    url = srv.get_uri()
    print(floor_line())
    print(f"PostgreSQL: {srv.psql('SHOW server_version;').split()[2]} (pgserver, unix socket, same machine)")
    os.environ["MEMHOOKS_TEAM_URL"] = url

    # -------------------------------------------------------------- push
    a_db = os.path.join(tmp, "a", "memhooks.db")
    t = time.perf_counter()
    build_local(a_db, args.docs, 1, "a", "/bench/a")
    print(f"built local store A: {args.docs} documents in {time.perf_counter() - t:.1f}s")
    conn = connect(a_db)
    pg = open_team(url)
    t = time.perf_counter()
    s = push(conn, pg, budget_s=3600)
    dt = time.perf_counter() - t
    print(f"push: {s['documents']} documents ({s['bytes'] / 1e6:.1f} MB) in {dt:.2f}s = "
          f"{s['documents'] / dt:,.0f} documents/s ({s['batches']} transactions)")
    t = time.perf_counter()
    s2 = push(conn, pg, budget_s=3600)
    print(f"push again (nothing new): {s2['documents']} documents in {time.perf_counter() - t:.3f}s")
    pg.close()
    conn.close()

    # -------------------------------------------------------------- pull
    b_db = os.path.join(tmp, "b", "memhooks.db")
    conn = connect(b_db)
    with transaction(conn):
        for lib in LIBS:
            upsert_tier1(conn, provenance="capture", project="/bench/b", name=lib, library_id=None, origin="warm-api", ttl_s=60)
    pg = open_team(url)
    t = time.perf_counter()
    s = pull(conn, pg, project="/bench/b", budget_s=3600, max_bytes=1 << 40, list_limit=args.docs * 2)
    dt = time.perf_counter() - t
    print(f"pull: {s['documents']} documents ({s['bytes'] / 1e6:.1f} MB), {s['tier1']} tier1 entries in "
          f"{dt:.2f}s = {s['documents'] / dt:,.0f} documents/s")
    pg.close()
    conn.close()

    # -------------------------------------------------------------- search at 100k
    have = args.docs
    k = 0
    while have < args.search_docs:
        k += 1
        n = min(20_000, args.search_docs - have)
        db = os.path.join(tmp, f"fill{k}", "memhooks.db")
        build_local(db, n, 100 + k, f"fill{k}", f"/bench/fill{k}")
        c, p = connect(db), open_team(url)
        push(c, p, budget_s=3600)
        c.close()
        p.close()
        os.unlink(db)
        have += n
    pg = open_team(url)
    total = pg.execute("SELECT count(*), pg_size_pretty(pg_total_relation_size('documents')) FROM documents").fetchone()
    pg.execute("ANALYZE documents")
    print(f"team documents: {total[0]:,} (documents table with indexes: {total[1]})")
    c_db = os.path.join(tmp, "c", "memhooks.db")
    conn = connect(c_db)
    times: dict[str, list[float]] = {q: [] for q in QUERIES}
    rounds = max(1, args.queries // len(QUERIES))
    for _ in range(rounds):
        for q in QUERIES:
            t = time.perf_counter()
            search_team(conn, pg, q, 10, project="/bench/c")
            times[q].append(time.perf_counter() - t)
    allt = sorted(x for v in times.values() for x in v)
    p50 = statistics.median(allt) * 1000
    p95 = allt[int(0.95 * (len(allt) - 1))] * 1000
    print(f"search_team over {total[0]:,} documents, {len(allt)} queries: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    for q, v in times.items():
        print(f"  {q!r}: median {statistics.median(v) * 1000:.1f} ms")
    pg.close()
    conn.close()
    env = dict(os.environ, MEMHOOKS_DB=c_db)
    once("memhooks search --team 'connection pool timeout' (whole process)",
         [sys.executable, "-m", "memhooks.cli.main", "search", "--team", "connection pool timeout"],
         env=env, rounds=20)
    srv.cleanup()


if __name__ == "__main__":
    main()
