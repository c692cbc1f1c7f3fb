"""`memhooks stats`: what the store holds and how well it is used.

`gather()` returns a dict with stable keys (documented in docs/stats-json.md and checked by
the pydantic model in memhooks.recall.stats_model); memhooks.recall.stats_render shows it
to people (rich tables, a terminal chart, an HTML page). The queries are in
memhooks.store.queries.

With `project`, the project-scoped parts (documents, captures, top documents,
tier1, counters, events) only count that project: captures and events by their
project column, documents captured in that project (or first stored for it),
tier1 entries and counters by project. tier2 and the DB size are global.
"""

from __future__ import annotations

import calendar
import os
import time

from memhooks.config import max_store_bytes
from memhooks.recall import stats_providers
from memhooks.recall.render import iso_utc
from memhooks.recall.stats_model import check
from memhooks.store import fallback_log, provider_calls, stats_queries
from memhooks.store.prune import cap_unmet
from memhooks.store.serve_log import summary as serving
from memhooks.store.vacuum import incremental_mode, store_files

EVENT_STATES = ("pending", "done", "failed", "skipped")
TOP_DOCUMENTS = 10
SCHEMA_VERSION = 1
DAYS = 30  # the per-day chart


def _day(epoch: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(epoch))


def _daily(conn, project: str | None, now: float, days: int, served: dict) -> dict:
    """Per UTC day for the last `days` days, oldest first: captures, agent reads, the user's
    own reads, calls avoided (served from the store)."""
    names = [_day(now - 86400 * i) for i in range(days - 1, -1, -1)]
    start = calendar.timegm(time.strptime(names[0], "%Y-%m-%d"))
    series = {k: dict.fromkeys(names, 0) for k in ("captures", "agent_reads", "user_reads",
                                                   "calls_avoided")}
    for r in stats_queries.stats_daily_captures(conn, project, start):
        if r["day"] in series["captures"]:
            series["captures"][r["day"]] = r["count"]
    for r in stats_queries.stats_daily_reads(conn, project, names[0]):
        key = "agent_reads" if r["origin"] == "agent" else "user_reads"
        if r["day"] in series[key]:
            series[key][r["day"]] = r["reads"] or 0
    for row in served.get("by_day") or []:
        if row.get("day") in series["calls_avoided"]:
            series["calls_avoided"][row["day"]] = row.get("calls_avoided") or 0
    return {"days": names, **{k: list(v.values()) for k, v in series.items()}}


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _rate(hits: int, misses: int) -> float | None:
    total = hits + misses
    return round(hits / total, 4) if total else None


def gather(conn, db_path: str, project: str | None = None, now: float | None = None) -> dict:
    """Every figure of `memhooks stats` (the keys of docs/stats-json.md), checked against
    the model before it is returned."""
    now = time.time() if now is None else now
    p = project
    by_tool = [{"source_tool": r["source_tool"], "type": r["type"], "count": r["count"],
                "bytes": r["bytes"]} for r in stats_queries.stats_documents_by_tool(conn, p)]

    cap = stats_queries.stats_captures(conn, p)
    captures = {
        "count": cap["count"],
        "unique_documents": cap["unique_documents"],
        "captured_bytes": cap["captured_bytes"],
        "unique_bytes": cap["unique_bytes"],
        "dedup_saved_bytes": cap["captured_bytes"] - cap["unique_bytes"],
        "oldest_epoch": cap["oldest"],
        "oldest": iso_utc(cap["oldest"]),
        "newest_epoch": cap["newest"],
        "newest": iso_utc(cap["newest"]),
    }

    # "Most read" is the agent's reading (MCP tools, lc-cache-lookup-docs, serving), not the
    # user's own `memhooks search`/`show` (document_reads keeps who read what, per day).
    top = [{"id": r["id"], "title": r["title"], "source_tool": r["source_tool"], "type": r["type"],
            "source": r["source"], "access_count": r["access_count"], "agent_reads": r["agent_reads"],
            "user_reads": r["user_reads"], "last_accessed_epoch": r["last_accessed_epoch"],
            "last_accessed": iso_utc(r["last_accessed_epoch"])}
           for r in stats_queries.stats_most_read(conn, p, TOP_DOCUMENTS)]
    accesses = stats_queries.stats_accesses(conn, p)
    reads = {o: {"reads": 0, "documents_read": 0} for o in ("agent", "user")}
    for r in stats_queries.stats_reads_by_origin(conn, p):
        reads[r["origin"]] = {"reads": r["reads"] or 0, "documents_read": r["documents"] or 0}

    counters = {(r["tier"], r["outcome"]): r["count"] or 0 for r in stats_queries.stats_counters(conn, p)}

    served = serving(conn, p)
    fallbacks = fallback_log.summary(conn, p)
    # A served Context7 docs call is a tier2 hit, as a lc-cache-lookup-docs hit is: both answer
    # (library, topic) from the store under the same rules, so the hit rate and the calls
    # avoided count them alike.
    served_docs = sum(r["calls_avoided"] for r in served["by_tool"] if r["tool"] == "context7-docs")

    def tier(name, row, negative: bool) -> dict:
        hits, misses = counters.get((name, "hit"), 0), counters.get((name, "miss"), 0)
        hits += served_docs if name == "tier2" else 0
        return {"total": row["total"], "fresh": row["fresh"],
                "negative": row["negative"] if negative else 0,
                "negative_fresh": row["negative_fresh"] if negative else 0,
                "hits": hits, "misses": misses, "hit_rate": _rate(hits, misses)}

    by_state = dict.fromkeys(EVENT_STATES, 0)
    for r in stats_queries.stats_events_by_state(conn, p):
        by_state[r["state"]] = r["count"]

    def reasons(state: str, limit: int) -> list[dict]:
        return [{"reason": r["reason"] or "(none)", "count": r["count"]}
                for r in stats_queries.stats_event_reasons(conn, p, state, limit)]

    file_bytes, wal_bytes = _size(db_path), _size(db_path + "-wal")
    on_disk = store_files(db_path)
    files = [{"name": label, "path": path, "bytes": n} for label, path, n in on_disk]
    report = {
        "schema": SCHEMA_VERSION,
        "generated_at": iso_utc(now),
        "project": p,
        "db": {"path": db_path, "file_bytes": file_bytes, "wal_bytes": wal_bytes,
               "total_bytes": file_bytes + wal_bytes, "files": files,
               "store_bytes": sum(n for _label, _path, n in on_disk), "cap_bytes": max_store_bytes(),
               "frees_pages": incremental_mode(conn, "main") and incremental_mode(conn, "journal"),
               "cap_unmet": cap_unmet(db_path)},
        "documents": {"count": sum(r["count"] for r in by_tool),
                      "bytes": sum(r["bytes"] for r in by_tool), "by_source_tool": by_tool},
        "captures": captures,
        "access": {"total": accesses["total"], "documents_accessed": accesses["documents"],
                   "top": top, "agent": reads["agent"], "user": reads["user"]},
        "tier1": tier("tier1", stats_queries.stats_tier1(conn, p, now), True),
        "tier2": tier("tier2", stats_queries.stats_tier2(conn, now), False),
        "events": {"total": sum(by_state.values()), "by_state": by_state,
                   "skip_reasons": reasons("skipped", 50), "failure_reasons": reasons("failed", 20)},
        "serving": served,
        "fallbacks": fallbacks,
        "daily": _daily(conn, p, now, DAYS, served),
        "providers": stats_providers.providers(conn, p, served, fallbacks),
        # the budget is Context7's, whatever the project: rate limits seen in any project count
        "budget": stats_providers.budget(conn, now, provider_calls.summary(conn)),
    }

    return check(report)
