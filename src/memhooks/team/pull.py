"""Pull: what the team knows about this project's libraries, into the local store.

For the project's ranked libraries (its last scan) and its tier1 names: the team's tier1
answers, the libraries' metadata, and the documents captured for those libraries, newest
first, that are not here yet. Everything is written through the store's projection
functions with provenance `team:<member>`, so the next lookup is local.

Team rows are outside text (memhooks.team.trust): a document whose content does not hash
to its content_hash, or that is an error text, is refused; timestamps are clamped to now
and expiry comes from this machine's TTLs; a team tier1 answer is taken only when this
machine's own knowledge agrees with it, else kept as an unverified team suggestion. The
pull is bounded by a time budget (also each statement's statement_timeout) and a byte
budget counted on the bytes PostgreSQL holds (octet_length), never on what a row claims.
Documents the user forgot, or that the team forgot, never come back.
"""

from __future__ import annotations

import json
import math
import os
import time
from contextlib import contextmanager

from memhooks import config
from memhooks.names import library_base, library_key, topic_key
from memhooks.store import team_local as tl
from memhooks.store.admission import Refused
from memhooks.store.connect import transaction
from memhooks.store.projections import (
    forget_hash,
    upsert_document,
    upsert_library,
    upsert_tier2,
)
from memhooks.team.pull_tier1 import pull_tier1
from memhooks.team.store import dict_rows, driver, statement_timeout_ms
from memhooks.team.trust import (
    checked_library,
    checked_member,
    checked_version,
    clamp_time,
    provenance,
    valid_hash,
)
from memhooks.warm.rank import rank
from memhooks.warm.scan import scan_project

DEFAULT_BUDGET_S = 10.0
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
LIST_LIMIT = 5000
FETCH_CHUNK = 100
FETCH_BYTES = 4 * 1024 * 1024  # content bytes asked for in one statement (as listed)
LIBRARY_LIMIT = 2000


class _OutOfTime(Exception):
    """The pull's time budget ran out inside a statement (statement_timeout fired)."""


class _Budget:
    """The pull's deadline: checked before each step, and given to PostgreSQL as the
    statement_timeout of every statement, so no single query can outlast it."""

    def __init__(self, budget_s: float, summary: dict):
        self.deadline = time.monotonic() + budget_s
        self.summary = summary

    def out(self) -> bool:
        if time.monotonic() >= self.deadline:
            self.summary["complete"] = False
            return True
        return False

    @contextmanager
    def query(self, pg):
        """A transaction whose statements stop at the deadline; a cursor with dict rows."""
        left_ms = int((self.deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            self.summary["complete"] = False
            raise _OutOfTime
        errors = driver().errors
        try:
            with pg.transaction():
                cur = dict_rows(pg)
                cur.execute("SELECT set_config('statement_timeout', %s, true)",
                            (str(max(1, min(left_ms, statement_timeout_ms()))),))
                yield cur
        except errors.QueryCanceled:
            if time.monotonic() < self.deadline - 0.05:
                raise  # the server's own statement_timeout: slow, reported as such
            self.summary["complete"] = False
            raise _OutOfTime from None


def _refuse(summary: dict, why: str) -> None:
    summary["refused"] += 1
    reasons = summary.setdefault("refusals", {})
    reasons[why] = reasons.get(why, 0) + 1


def pull(conn, pg, *, project: str, budget_s: float | None = None, max_bytes: int | None = None,
         libraries: list[str] | None = None, list_limit: int = LIST_LIMIT) -> dict:
    budget_s = DEFAULT_BUDGET_S if budget_s is None else budget_s
    max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    summary = {"project": project, "tier1": 0, "suggested": 0, "libraries": 0, "documents": 0,
               "bytes": 0, "bytes_read": 0, "forgotten": 0, "skipped_forgotten": 0, "refused": 0,
               "complete": True}
    budget = _Budget(budget_s, summary)
    try:
        _pull(conn, pg, project, budget, max_bytes, libraries, list_limit, summary)
    except _OutOfTime:
        summary["complete"] = False
    return summary


def _pull(conn, pg, project, budget, max_bytes, libraries, list_limit, summary) -> None:
    now = time.time()
    _pull_forgotten(conn, pg, budget, now, summary)

    # tier1: the team's answers for this project's names.
    names = tl.project_names(conn, project) if project else []
    if project and not names:
        names = _scan_names(project)
    bases: set[str] = set()
    for lid in libraries or []:
        base = library_base(lid)
        if base:
            bases.add(base)
    if names:
        bases |= pull_tier1(conn, pg, project, names, budget, now, summary)
    for lid in tl.project_library_ids(conn, project) if project else []:
        base = library_base(lid)
        if base:
            bases.add(base)
    if names:
        # Libraries no member resolved by name yet: the repository part of the ID equals the
        # package name (`react` -> /facebook/react), as local lookups match an ID's tail.
        tails = sorted({t for n in names for t in (n["name"].strip().lower(),
                                                   n["name"].strip().lower().rsplit("/", 1)[-1]) if t})
        with budget.query(pg) as cur:
            for row in cur.execute(
                    "SELECT DISTINCT library_base FROM libraries"
                    " WHERE lower(split_part(library_base, '/', 3)) = ANY(%s) OR lower(title) = ANY(%s)"
                    " UNION SELECT DISTINCT library_base FROM documents"
                    " WHERE lower(split_part(library_base, '/', 3)) = ANY(%s) LIMIT 200",
                    (tails, tails, tails)).fetchall():
                base = library_base(row["library_base"]) if isinstance(row["library_base"], str) else None
                if base and len(base) <= 260:
                    bases.add(base)
    if not bases or budget.out():
        return
    base_list = sorted(bases)
    _pull_libraries(conn, pg, base_list, budget, now, summary)
    if budget.out():
        return
    _pull_documents(conn, pg, project, base_list, budget, now, max_bytes, list_limit, summary)


def _pull_forgotten(conn, pg, budget, now: float, summary: dict) -> None:
    """Forgotten by anyone in the team since the last pull: forget here too. The mark never
    moves past now (a row dated in the future cannot hide the forgets after it)."""
    mark = tl.get_mark(conn, "pull.forgotten") or 0.0
    with budget.query(pg) as cur:
        gone = cur.execute(
            "SELECT content_hash, forgotten_at FROM forgotten WHERE forgotten_at > %s"
            " AND length(content_hash) = 64 ORDER BY forgotten_at LIMIT 10000", (mark,)).fetchall()
    gone = [g for g in gone if valid_hash(g["content_hash"])]
    if gone:
        with transaction(conn):
            for row in gone:
                summary["forgotten"] += forget_hash(conn, row["content_hash"], team_done=True)
            last = clamp_time(gone[-1]["forgotten_at"], now)
            if last is not None:
                tl.set_mark(conn, "pull.forgotten", max(float(mark), last))


def _pull_libraries(conn, pg, base_list: list[str], budget, now: float, summary: dict) -> None:
    """Library metadata for these bases: new rows only (origin `team`); a library this
    machine learnt itself is never rewritten by the team's copy."""
    with budget.query(pg) as cur:
        libs = cur.execute(
            "SELECT library_id, left(title, 300) AS title, left(description, 2000) AS description,"
            " code_snippets, left(reputation, 40) AS reputation, trust_score, benchmark_score,"
            " left(versions, 8000) AS versions, left(source, 300) AS source, last_seen"
            " FROM libraries WHERE library_base = ANY(%s) AND length(library_id) <= 330 LIMIT %s",
            (base_list, LIBRARY_LIMIT)).fetchall()
    checked = [(lid, lib) for lib in libs if (lid := checked_library(lib["library_id"]))]
    if not checked:
        return
    origins = tl.library_origins(conn, [lid for lid, _lib in checked])
    with transaction(conn):
        for lid, lib in checked:
            if origins.get(lid, "team") != "team":
                continue
            try:
                vers = json.loads(lib["versions"]) if lib["versions"] else []
            except ValueError:
                vers = []
            vers = [v for v in vers if checked_version(v)][:100] if isinstance(vers, list) else []
            try:
                upsert_library(conn, library_id=lid, title=lib["title"], origin="team",
                               description=lib["description"], code_snippets=_int(lib["code_snippets"]),
                               reputation=lib["reputation"], trust_score=_num(lib["trust_score"]),
                               benchmark_score=_num(lib["benchmark_score"]), versions=vers,
                               source=lib["source"], now=clamp_time(lib["last_seen"], now) or now,
                               provenance=provenance(None))
            except Refused as exc:
                _refuse(summary, f"admission: {exc.reason}")
                continue
            summary["libraries"] += 1


def _pull_documents(conn, pg, project: str, base_list: list[str], budget, now: float, max_bytes: int,
                    list_limit: int, summary: dict) -> None:
    """Documents for those libraries that are not here yet, newest first, within the byte
    budget counted on the bytes PostgreSQL holds (octet_length), never on the `bytes` column
    a member sent; a row over the per-document cap is never transferred."""
    row_cap = config.max_doc_bytes()
    with budget.query(pg) as cur:
        listing = cur.execute(
            "SELECT id, content_hash, octet_length(content) AS size FROM documents"
            " WHERE library_base = ANY(%s) AND length(content_hash) = 64 AND octet_length(content) <= %s"
            " ORDER BY least(last_seen, %s) DESC, id DESC LIMIT %s",
            (base_list, row_cap, now, list_limit)).fetchall()
    hashes = [r["content_hash"] for r in listing]
    have = tl.local_hashes(conn, hashes)
    forgotten = tl.forgotten_among(conn, hashes)
    summary["skipped_forgotten"] = len(forgotten)
    wanted, total = [], 0
    for entry in listing:
        digest, size = entry["content_hash"], int(entry["size"] or 0)
        if digest in have or digest in forgotten:
            continue
        if total + size > max_bytes:
            summary["complete"] = False
            break
        wanted.append((entry["id"], size))
        total += size
    ttl2 = config.tier2_ttl_s()
    start = 0
    while start < len(wanted) and not budget.out():
        chunk: list[int] = []
        chunk_bytes = 0
        while start < len(wanted) and len(chunk) < FETCH_CHUNK and (not chunk or chunk_bytes + wanted[start][1] <= FETCH_BYTES):
            chunk.append(wanted[start][0])
            chunk_bytes += wanted[start][1]
            start += 1
        left = max_bytes - summary["bytes_read"]
        if left <= 0:
            summary["complete"] = False
            break
        # The running sum bounds what this statement can return, whatever the rows became
        # since the listing: at most `left` bytes of content, each row at most row_cap.
        with budget.query(pg) as cur:
            rows = cur.execute(
                "SELECT d.content_hash, left(d.source, 2000) AS source, left(d.source_tool, 40) AS source_tool,"
                " left(d.title, 1000) AS title, d.content, left(d.type, 40) AS type,"
                " left(d.metadata, 16384) AS metadata, left(d.url, 4096) AS url,"
                " left(d.library_id, 330) AS library_id, left(d.topic, 1000) AS topic,"
                " left(d.version, 100) AS version, d.last_seen,"
                " (SELECT count(DISTINCT m.member_id) FROM document_members m"
                "   WHERE m.content_hash = d.content_hash AND m.captured) AS members,"
                " (SELECT left(m.member_id, 64) FROM document_members m"
                "   WHERE m.content_hash = d.content_hash AND m.captured"
                "   ORDER BY m.captured_at NULLS LAST, m.member_id LIMIT 1) AS member"
                " FROM (SELECT id, sum(octet_length(content)) OVER (ORDER BY id) AS running"
                "   FROM documents WHERE id = ANY(%s) AND octet_length(content) <= %s) s"
                " JOIN documents d ON d.id = s.id WHERE s.running <= %s",
                (chunk, row_cap, left)).fetchall()
        with transaction(conn):
            for row in rows:
                read = len(row["content"].encode("utf-8", "surrogatepass")) if isinstance(row["content"], str) else 0
                summary["bytes_read"] += read
                _take_document(conn, project, row, now, ttl2, summary)
        if summary["bytes_read"] >= max_bytes:
            break


def _take_document(conn, project: str, row: dict, now: float, ttl2: float, summary: dict) -> None:
    if not valid_hash(row["content_hash"]) or not isinstance(row["content"], str):
        _refuse(summary, "malformed row")
        return
    content, dtype, topic = row["content"], row["type"], row["topic"]
    lid = checked_library(row["library_id"])  # else kept as a document, never as a tier2 answer
    member = checked_member(row["member"])
    metadata = _with_team(row["metadata"], row["members"], member)
    try:
        doc_id, created = upsert_document(
            conn, project=project or "", source=row["source"] or "", source_tool=row["source_tool"] or "context7",
            content=content, title=row["title"], type=dtype, url=row["url"], library_id=lid, topic=topic,
            version=checked_version(row["version"]), metadata=metadata, tool="team-pull", now=now,
            provenance=provenance(member), claimed_hash=row["content_hash"])
    except Refused as exc:
        _refuse(summary, f"admission: {exc.reason}")
        return
    if doc_id is None:
        return
    if created:
        summary["documents"] += 1
        summary["bytes"] += len(content.encode("utf-8", "surrogatepass"))
    seen = clamp_time(row["last_seen"], now)
    if lid and topic and (dtype or "library-docs") == "library-docs" and seen \
            and not tl.fresh_tier2(conn, library_key(lid), topic_key(topic), now):
        try:
            upsert_tier2(conn, library_id=lid, topic=topic, document_id=doc_id, origin="team",
                         ttl_s=ttl2, now=seen, provenance=provenance(member))
        except Refused:
            pass  # the document stays; it is just never a tier2 answer


def _int(v):
    try:
        return int(v) if v is not None and -(2**31) < int(v) < 2**31 else None
    except (TypeError, ValueError, OverflowError):
        return None


def _num(v):
    try:
        f = float(v) if v is not None else None
    except (TypeError, ValueError):
        return None
    return f if f is not None and math.isfinite(f) else None


def _scan_names(project: str) -> list[dict]:
    """The project's ranked libraries when it was never warmed (a bounded scan)."""
    if not os.path.isdir(project):
        return []
    try:
        ranked = rank(scan_project(project).deps, top_n=config.top_n())
    except Exception:  # noqa: BLE001 - an unreadable project pulls nothing
        return []
    return [{"name": d.name, "ecosystem": d.ecosystem, "version": d.version} for d in ranked]


def _with_team(meta: str | None, members, member: str | None = None) -> str:
    """The document's metadata with what the team says about it: how many member ids
    captured it (a hint) and which member's copy this is (its provenance)."""
    try:
        data = json.loads(meta) if meta else {}
    except (ValueError, RecursionError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    team: dict[str, int | str] = {"captured_by": max(0, min(int(members or 0), 10**6))}
    if member:
        team["member"] = checked_member(member)
    data["team"] = team
    return json.dumps(data, ensure_ascii=False, sort_keys=True)
