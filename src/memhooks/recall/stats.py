"""`memhooks stats`: what the store holds and how well it is used.

`gather()` returns a dict with stable keys (documented in docs/stats-json.md);
`render()` prints it as tables for people (rich).

With `project`, the project-scoped parts (documents, captures, top documents,
tier1, counters, events) only count that project: captures and events by their
project column, documents captured in that project (or first stored for it),
tier1 entries and counters by project. tier2 and the DB size are global.
"""

from __future__ import annotations

import os
import time

EVENT_STATES = ("pending", "done", "failed", "skipped")
TOP_DOCUMENTS = 10
SCHEMA_VERSION = 1


def _iso(epoch) -> str | None:
    if epoch is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _rate(hits: int, misses: int) -> float | None:
    total = hits + misses
    return round(hits / total, 4) if total else None


def gather(conn, db_path: str, project: str | None = None, now: float | None = None) -> dict:
    now = time.time() if now is None else now
    p = project
    # documents in scope
    if p is None:
        doc_scope, doc_args = "1", ()
    else:
        doc_scope = "(project = ? OR id IN (SELECT document_id FROM captures WHERE project = ?))"
        doc_args = (p, p)
    cap_scope, cap_args = ("1", ()) if p is None else ("project = ?", (p,))
    cap_scope_c = "1" if p is None else "c.project = ?"

    by_tool = [
        {"source_tool": t, "type": ty, "count": c, "bytes": b or 0}
        for t, ty, c, b in conn.execute(
            f"SELECT source_tool, type, count(*), sum(bytes) FROM documents WHERE {doc_scope}"  # noqa: S608
            " GROUP BY source_tool, type ORDER BY count(*) DESC, source_tool, type", doc_args)
    ]
    doc_count = sum(r["count"] for r in by_tool)
    doc_bytes = sum(r["bytes"] for r in by_tool)

    cap = conn.execute(
        "SELECT count(*), count(DISTINCT c.document_id), coalesce(sum(d.bytes), 0),"
        " min(c.captured_at), max(c.captured_at)"
        f" FROM captures c JOIN documents d ON d.id = c.document_id WHERE {cap_scope_c}",  # noqa: S608
        cap_args,
    ).fetchone()
    unique_bytes = conn.execute(
        "SELECT coalesce(sum(bytes), 0) FROM documents WHERE id IN"
        f" (SELECT document_id FROM captures WHERE {cap_scope})", cap_args  # noqa: S608
    ).fetchone()[0]
    captures = {
        "count": cap[0],
        "unique_documents": cap[1],
        "captured_bytes": cap[2],
        "unique_bytes": unique_bytes,
        "dedup_saved_bytes": cap[2] - unique_bytes,
        "oldest_epoch": cap[3],
        "oldest": _iso(cap[3]),
        "newest_epoch": cap[4],
        "newest": _iso(cap[4]),
    }

    top = [
        {"id": i, "title": title, "source_tool": tool, "type": ty, "source": src,
         "access_count": ac, "last_accessed_epoch": la, "last_accessed": _iso(la)}
        for i, title, tool, ty, src, ac, la in conn.execute(
            "SELECT id, coalesce(title, source), source_tool, type, source, access_count,"
            f" last_accessed_epoch FROM documents WHERE {doc_scope} AND access_count > 0"  # noqa: S608
            " ORDER BY access_count DESC, last_accessed_epoch DESC LIMIT ?",
            (*doc_args, TOP_DOCUMENTS))
    ]
    accesses = conn.execute(
        f"SELECT coalesce(sum(access_count), 0), count(*) FROM documents WHERE {doc_scope}"  # noqa: S608
        " AND access_count > 0", doc_args).fetchone()

    counters: dict[tuple[str, str], int] = {}
    for tier, outcome, n in conn.execute(
        f"SELECT tier, outcome, sum(count) FROM counters WHERE {cap_scope}"  # noqa: S608
        " GROUP BY tier, outcome", cap_args
    ):
        counters[(tier, outcome)] = n or 0

    t1 = conn.execute(
        "SELECT count(*), coalesce(sum(expires_at > ?), 0),"
        " coalesce(sum(library_id IS NULL), 0), coalesce(sum(library_id IS NULL AND expires_at > ?), 0)"
        f" FROM tier1 WHERE {cap_scope}", (now, now, *cap_args)  # noqa: S608
    ).fetchone()
    t2 = conn.execute(
        "SELECT count(*), coalesce(sum(expires_at > ?), 0) FROM tier2", (now,)
    ).fetchone()

    def tier(name, total, fresh, negative, negative_fresh):
        hits, misses = counters.get((name, "hit"), 0), counters.get((name, "miss"), 0)
        return {"total": total, "fresh": fresh, "negative": negative,
                "negative_fresh": negative_fresh, "hits": hits, "misses": misses,
                "hit_rate": _rate(hits, misses)}

    ev_scope, ev_args = ("1", ()) if p is None else ("project = ?", (p,))
    by_state = {s: 0 for s in EVENT_STATES}
    for state, n in conn.execute(
        f"SELECT state, count(*) FROM events WHERE {ev_scope} GROUP BY state", ev_args  # noqa: S608
    ):
        by_state[state] = n
    reasons = [
        {"reason": r or "(none)", "count": n}
        for r, n in conn.execute(
            f"SELECT error, count(*) FROM events WHERE state = 'skipped' AND {ev_scope}"  # noqa: S608
            " GROUP BY error ORDER BY count(*) DESC, error LIMIT 50", ev_args)
    ]
    failures = [
        {"reason": r or "(none)", "count": n}
        for r, n in conn.execute(
            f"SELECT error, count(*) FROM events WHERE state = 'failed' AND {ev_scope}"  # noqa: S608
            " GROUP BY error ORDER BY count(*) DESC, error LIMIT 20", ev_args)
    ]

    from memhooks.store.serve_log import summary as serving

    file_bytes, wal_bytes = _size(db_path), _size(db_path + "-wal")
    return {
        "schema": SCHEMA_VERSION,
        "generated_at": _iso(now),
        "project": p,
        "db": {"path": db_path, "file_bytes": file_bytes, "wal_bytes": wal_bytes,
               "total_bytes": file_bytes + wal_bytes},
        "documents": {"count": doc_count, "bytes": doc_bytes, "by_source_tool": by_tool},
        "captures": captures,
        "access": {"total": accesses[0], "documents_accessed": accesses[1], "top": top},
        "tier1": tier("tier1", t1[0], t1[1], t1[2], t1[3]),
        "tier2": tier("tier2", t2[0], t2[1], 0, 0),
        "events": {"total": sum(by_state.values()), "by_state": by_state,
                   "skip_reasons": reasons, "failure_reasons": failures},
        "serving": serving(conn, p),
    }


def _bytes(n) -> str:
    n = float(n or 0)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return str(n)  # pragma: no cover


def render(data: dict, console=None) -> None:
    """Print `data` (from gather) as tables."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    scope = f"project {data['project']}" if data["project"] else "all projects"
    db = data["db"]
    console.print(f"[bold]memhooks stats[/bold] · {scope} · {db['path']} "
                  f"({_bytes(db['file_bytes'])} + WAL {_bytes(db['wal_bytes'])} = "
                  f"{_bytes(db['total_bytes'])})")

    docs = Table(title=f"Documents: {data['documents']['count']:,} "
                       f"({_bytes(data['documents']['bytes'])})", title_justify="left")
    for col, just in (("source tool", "left"), ("type", "left"), ("documents", "right"),
                      ("bytes", "right")):
        docs.add_column(col, justify=just)
    for r in data["documents"]["by_source_tool"]:
        docs.add_row(r["source_tool"], r["type"] or "", f"{r['count']:,}", _bytes(r["bytes"]))
    console.print(docs)

    c = data["captures"]
    cap = Table(title="Captures and dedup", title_justify="left", show_header=False)
    cap.add_column(justify="left")
    cap.add_column(justify="right")
    cap.add_row("captures", f"{c['count']:,}")
    cap.add_row("unique documents", f"{c['unique_documents']:,}")
    cap.add_row("bytes captured", _bytes(c["captured_bytes"]))
    cap.add_row("bytes stored (unique)", _bytes(c["unique_bytes"]))
    cap.add_row("saved by dedup", _bytes(c["dedup_saved_bytes"]))
    cap.add_row("oldest capture", c["oldest"] or "-")
    cap.add_row("newest capture", c["newest"] or "-")
    console.print(cap)

    a = data["access"]
    top = Table(title=f"Most read documents ({a['total']:,} reads of "
                      f"{a['documents_accessed']:,} documents)", title_justify="left")
    for col, just in (("id", "right"), ("title", "left"), ("tool", "left"), ("reads", "right"),
                      ("last read", "left")):
        top.add_column(col, justify=just, overflow="ellipsis", max_width=60 if col == "title" else None)
    for r in a["top"]:
        top.add_row(str(r["id"]), " ".join(str(r["title"] or "").split())[:120], r["source_tool"],
                    f"{r['access_count']:,}", r["last_accessed"] or "-")
    console.print(top)

    tiers = Table(title="Cache", title_justify="left")
    for col in ("tier", "entries", "fresh", "negative", "hits", "misses", "hit rate"):
        tiers.add_column(col, justify="left" if col == "tier" else "right")
    for name in ("tier1", "tier2"):
        t = data[name]
        rate = "-" if t["hit_rate"] is None else f"{t['hit_rate'] * 100:.1f}%"
        tiers.add_row(name, f"{t['total']:,}", f"{t['fresh']:,}", f"{t['negative']:,}",
                      f"{t['hits']:,}", f"{t['misses']:,}", rate)
    console.print(tiers)

    sv = data.get("serving") or {}
    if sv.get("calls_avoided") or sv.get("insisted"):
        served = Table(title=f"Served from the store: {sv['calls_avoided']:,} calls avoided, "
                             f"{_bytes(sv['bytes_served'])} served, ~{sv['tokens_saved_est']:,} tokens "
                             f"saved, {sv['insisted']:,} repeats let through", title_justify="left")
        for col in ("by", "calls avoided", "bytes served", "tokens saved (est.)"):
            served.add_column(col, justify="left" if col == "by" else "right")
        for key, rows in (("tool", sv["by_tool"]), ("library_id", sv["by_library"]), ("day", sv["by_day"])):
            for r in rows:
                served.add_row(f"{key.split('_')[0]} {r[key]}", f"{r['calls_avoided']:,}",
                               _bytes(r["bytes_served"]), f"{r['tokens_saved_est']:,}")
        console.print(served)

    e = data["events"]
    ev = Table(title=f"Events: {e['total']:,}", title_justify="left")
    ev.add_column("state")
    ev.add_column("events", justify="right")
    for state, n in e["by_state"].items():
        ev.add_row(state, f"{n:,}")
    console.print(ev)
    for title, key in (("Skip reasons", "skip_reasons"), ("Failure reasons", "failure_reasons")):
        if e[key]:
            reasons = Table(title=title, title_justify="left")
            reasons.add_column("reason", overflow="fold")
            reasons.add_column("events", justify="right")
            for r in e[key]:
                reasons.add_row(r["reason"], f"{r['count']:,}")
            console.print(reasons)
