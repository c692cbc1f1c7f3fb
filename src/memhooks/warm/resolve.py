"""Warming: scan the project's lockfiles, rank, resolve to Context7 IDs, write tier1.

Resolution order per name: a fresh tier1 entry, then global knowledge
(libraries captured or searched before, other projects' tier1), then the
Context7 API inside one overall time budget. Entries that came from captures
or explicit writes are never replaced by a warm.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from memhooks import config
from memhooks.recall.lc_cache import find_tier1
from memhooks.names import normalize, pick_library, versioned_id
from memhooks.store.projections import upsert_library, upsert_tier1
from memhooks.store.connect import transaction
from memhooks.warm.fastpath import api_blocked, build_context

RETRY_KEY = "context7.retry_after"


@dataclass
class Resolved:
    name: str
    ecosystem: str
    version: str | None
    kind: str
    library_id: str | None = None
    versioned_id: str | None = None
    # tier1 | warm-local | warm-api | not-found | api-error | api-timeout | api-rate-limited
    # | unresolved (not asked: budget, 429 earlier, offline)
    how: str = "unresolved"


@dataclass
class WarmResult:
    project: str
    entries: list[Resolved] = field(default_factory=list)
    scanned_files: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    api_requests: int = 0
    rate_limited: bool = False
    unreachable: bool = False
    seconds: float = 0.0
    context: str = ""

    @property
    def resolved(self) -> list[Resolved]:
        return [e for e in self.entries if e.library_id]


def _known_versions(conn, library_id: str) -> list[str]:
    row = conn.execute("SELECT versions FROM libraries WHERE library_id = ?", (library_id,)).fetchone()
    try:
        return json.loads(row[0]) if row and row[0] else []
    except ValueError:
        return []


def _fresh_project_entry(conn, project: str, key: str, now: float):
    return conn.execute(
        "SELECT library_id, matched FROM tier1 WHERE project = ? AND name_key = ? AND expires_at > ?",
        (project, key, now),
    ).fetchone()


def warm(conn, project: str, *, budget_s: float | None = None, top_n: int | None = None,
         progress=None, retry_unreachable: bool = False, api_progress=None) -> WarmResult:
    from memhooks.warm.rank import rank
    from memhooks.warm.fingerprint import fingerprint
    from memhooks.warm.scan import scan_project

    started = time.monotonic()
    budget_s = config.warm_budget_s() if budget_s is None else budget_s
    top_n = config.top_n() if top_n is None else top_n
    result = WarmResult(project=project)
    scan = scan_project(project)
    result.scanned_files, result.errors = list(scan.files), list(scan.errors)
    candidates = rank(scan.deps, top_n=max(top_n * 3, top_n + 20))
    now = time.time()
    todo: list[Resolved] = []
    entries: list[Resolved] = []
    for dep in candidates:
        r = Resolved(dep.name, dep.ecosystem, dep.version, dep.kind)
        key = normalize(dep.name, dep.ecosystem)
        row = _fresh_project_entry(conn, project, key, now)
        if row is not None and retry_unreachable and row[0] is None and row[1] == "error":
            row = None  # a warm a person asked for retries recent failures
        if row is not None:
            r.library_id = row[0]
            r.how = "tier1" if row[0] else ("api-error" if row[1] == "error" else "not-found")
        else:
            known = find_tier1(conn, dep.name, project, now)
            if known:
                r.library_id, r.how = known["library_id"], "warm-local"
        entries.append(r)
        if r.how == "unresolved":
            todo.append(r)
        if progress:
            progress(r)

    missing = max(0, min(top_n, len(entries)) - sum(1 for e in entries[:top_n] if e.library_id))
    run = None
    if todo and missing and not api_blocked(conn, now, retry_unreachable=retry_unreachable):
        from memhooks.warm.context7_api import search_many

        remaining = budget_s - (time.monotonic() - started)
        # Backfill: ask in rank order until enough of the top names resolve.
        run = search_many([r.name for r in todo], budget_s=remaining, want=missing,
                          query_for=lambda n: f"{n} library documentation", on_answer=api_progress)
        result.api_requests = len(run.answers)
        result.rate_limited = run.retry_after_s is not None
        result.unreachable = run.unreachable
    now = time.time()
    with transaction(conn):
        if run is not None:
            if run.retry_after_s is not None or run.unreachable:
                # Back off across sessions: Retry-After after a 429, a few minutes when
                # the API could not be reached at all.
                conn.execute(
                    "INSERT INTO api_state (key, value, until) VALUES (?, ?, ?)"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value, until = excluded.until",
                    (RETRY_KEY, "429" if run.retry_after_s is not None else "unreachable",
                     now + (run.retry_after_s if run.retry_after_s is not None
                            else config.tier1_error_ttl_s())),
                )
            for r in todo:
                answer = run.answers.get(r.name)
                if answer is None:
                    continue
                if answer.status == "found":
                    for res in answer.results:
                        upsert_library(conn, library_id=res["id"], title=res.get("title"),
                                       origin="api", description=res.get("description"),
                                       code_snippets=_int(res.get("totalSnippets")),
                                       trust_score=_float(res.get("trustScore")),
                                       benchmark_score=_float(res.get("benchmarkScore")),
                                       versions=[v for v in res.get("versions") or []
                                                 if isinstance(v, str)], now=now)
                    idx, how = pick_library(r.name, [(x["id"], x.get("title")) for x in answer.results])
                    r.library_id, r.how = answer.results[idx]["id"], "warm-api"
                elif answer.status != "not-found":
                    r.how = f"api-{answer.status}"  # error, timeout or rate-limited: retried later
                    if answer.status in ("error", "timeout"):
                        # Remember the failure briefly: the pool is tiny, and an unreachable
                        # API must not cost every session its whole budget again.
                        upsert_tier1(conn, project=project, name=r.name, ecosystem=r.ecosystem,
                                     library_id=None, version=r.version, origin="warm-api",
                                     matched="error", ttl_s=config.tier1_error_ttl_s(), now=now)
                else:
                    r.how = "not-found"
                    upsert_tier1(conn, project=project, name=r.name, ecosystem=r.ecosystem,
                                 library_id=None, version=r.version, origin="warm-api",
                                 matched="none", ttl_s=config.tier1_negative_ttl_s(), now=now)
        for r in entries:
            if r.how in ("warm-local", "warm-api"):
                r.versioned_id = versioned_id(r.library_id, r.version, _known_versions(conn, r.library_id))
                upsert_tier1(conn, project=project, name=r.name, ecosystem=r.ecosystem,
                             library_id=r.library_id, version=r.version, versioned_id=r.versioned_id,
                             origin=r.how, matched="warm", ttl_s=config.tier1_ttl_s(), now=now)
            elif r.how == "tier1" and r.library_id:
                r.versioned_id = versioned_id(r.library_id, r.version, _known_versions(conn, r.library_id))
                conn.execute(
                    "UPDATE tier1 SET version = coalesce(?, version),"
                    " versioned_id = coalesce(?, versioned_id)"
                    " WHERE project = ? AND name_key = ? AND library_id = ?",
                    (r.version, r.versioned_id, project, normalize(r.name, r.ecosystem), r.library_id),
                )
        chosen = _choose(entries, top_n)
        conn.execute(
            "INSERT INTO warm_state (project, fingerprint, files, dirs, ranked, warmed_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (project) DO UPDATE SET"
            " fingerprint = excluded.fingerprint, files = excluded.files, dirs = excluded.dirs,"
            " ranked = excluded.ranked, warmed_at = excluded.warmed_at",
            (project, fingerprint(project, scan.files, scan.dirs), json.dumps(scan.files),
             json.dumps(scan.dirs),
             json.dumps([{"name": r.name, "ecosystem": r.ecosystem, "version": r.version}
                         for r in chosen]), now),
        )
    result.entries = chosen
    result.context = build_context([
        {"name": r.name, "version": r.version, "library_id": r.library_id,
         "versioned_id": r.versioned_id} for r in chosen])
    result.seconds = time.monotonic() - started
    return result


def _choose(entries: list[Resolved], top_n: int) -> list[Resolved]:
    """The top N in rank order, backfilled: resolved names first claim the N slots,
    then unresolved ones in rank order fill what is left."""
    picked = [e for e in entries if e.library_id][:top_n]
    if len(picked) < top_n:
        rest = [e for e in entries if not e.library_id][: top_n - len(picked)]
        picked += rest
    order = {id(e): i for i, e in enumerate(entries)}
    return sorted(picked, key=lambda e: order[id(e)])


def _int(v):
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def _float(v):
    try:
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None
