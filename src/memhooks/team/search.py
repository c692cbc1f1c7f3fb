"""`memhooks search --team` and the MCP `scope: "team"`: full-text search on the team
database (a generated tsvector with a GIN index, `websearch_to_tsquery`, ts_rank with
titles weighted above bodies), rendered like local results: same citations, same fence.

Hits are brought into the local store (through the projection functions, within a byte
budget) so their ids work with `show` / get_document and the next search is local; each
counts one local access, which a later push adds to the team's counts.
"""

from __future__ import annotations

import time
from contextlib import closing

from memhooks.config import max_doc_bytes, project_dir
from memhooks.ingest.pipeline import open_reader
from memhooks.recall import search as local
from memhooks.recall.render import iso_utc, results_markdown
from memhooks.store import queries
from memhooks.store import team_local as tl
from memhooks.store.admission import Refused
from memhooks.store.connect import transaction
from memhooks.store.projections import upsert_document
from memhooks.store.reads import note_documents
from memhooks.team.pull import _with_team
from memhooks.team.runner import open_team
from memhooks.team.settings import team_url
from memhooks.team.store import TeamError, classify, dict_rows
from memhooks.team.trust import (
    checked_library,
    checked_member,
    checked_version,
    clamp_time,
    provenance,
    valid_hash,
)

RANK_WINDOW = 500       # ts_rank scores at most the newest this-many matches
IMPORT_MAX_BYTES = 16 * 1024 * 1024
SNIPPET_SOURCE_CHARS = 20_000
HEADLINE = ("MaxFragments=2, MinWords=8, MaxWords=28, StartSel=\"\", StopSel=\"\","
            " FragmentDelimiter=\" … \"")


def _query_text(query) -> str:
    """Any text as websearch_to_tsquery input, split into words the way the documents were
    indexed (punctuation is a separator) while keeping its syntax: "quoted phrases", a
    leading `-` (not), and `or`."""
    if not isinstance(query, str):
        query = "" if query is None else str(query)
    query = local.clean_text(query).replace("\x00", " ")[:2000]
    out = []
    for token in query.split():
        neg = token.startswith("-") and len(token) > 1
        body = token[1:] if neg else token
        words = "".join(c if c.isalnum() or c == '"' else " " for c in body).split()
        if not words:
            continue
        out.append(("-" if neg and len(words) == 1 else "") + " ".join(words))
    return " ".join(out)


def search_team(conn, pg, query, limit: int = 10, *, project: str | None = None,
                import_hits: bool = True, now: float | None = None) -> list[dict]:
    """Ranked team documents as result dicts in the local result shape (see
    memhooks.recall.search). The id is the local id of the imported copy."""
    try:
        limit = max(1, min(int(limit), local.MAX_LIMIT))
    except (TypeError, ValueError):
        limit = 10
    text = _query_text(query)
    if not text.strip():
        return []
    # The tsquery is written inline (not in a CTE) so the planner sees its value: for a
    # common word it walks the primary key backwards and stops after RANK_WINDOW matches.
    tsq = "websearch_to_tsquery('english', %(q)s)"
    with pg.transaction():
        rows = dict_rows(pg).execute(
            "SELECT r.id, r.content_hash, r.title, r.source, r.source_tool, r.type, r.url, r.library_id,"
            " r.topic, r.version, r.created_at, r.last_seen, r.bytes, r.metadata, r.rank,"
            " CASE WHEN octet_length(r.content) <= %(whole)s THEN r.content"
            f"  ELSE ts_headline('english', left(r.content, %(chars)s), {tsq}, %(opts)s) END AS headline,"
            " (SELECT count(DISTINCT m.member_id) FROM document_members m"
            "   WHERE m.content_hash = r.content_hash AND m.captured) AS members,"
            " (SELECT left(m.member_id, 64) FROM document_members m"
            "   WHERE m.content_hash = r.content_hash AND m.captured"
            "   ORDER BY m.captured_at NULLS LAST, m.member_id LIMIT 1) AS member,"
            " octet_length(r.content) AS size,"
            " (SELECT coalesce(sum(m.access_count), 0) FROM document_members m"
            "   WHERE m.content_hash = r.content_hash) AS accesses"
            f" FROM (SELECT d.*, ts_rank(d.search, {tsq}) AS rank FROM documents d"
            f"  WHERE d.id IN (SELECT id FROM documents WHERE search @@ {tsq}"
            "   ORDER BY id DESC LIMIT %(window)s)"
            "  ORDER BY rank DESC, d.id DESC LIMIT %(limit)s) r"
            " ORDER BY r.rank DESC, r.id DESC",
            {"q": text, "window": RANK_WINDOW, "limit": limit, "chars": SNIPPET_SOURCE_CHARS,
             "opts": HEADLINE, "whole": local.WHOLE_DOC_CHARS},
            prepare=False).fetchall()  # a prepared (generic) plan cannot see the words: never reuse one
    if not rows:
        return []
    local_ids, refused = _import(conn, pg, rows, project) if import_hits else ({}, set())
    results = []
    stamp = int(time.time() if now is None else now)
    for r in rows:
        digest = r["content_hash"]
        if digest in refused:
            continue  # its text does not hash to its key, or is an error text: never shown
        doc = {"id": local_ids.get(digest) or f"team:{r['id']}",
               **{k: r[k] for k in ("title", "source", "source_tool", "type", "url", "library_id",
                                    "topic", "version", "metadata", "bytes")},
               "created_at": iso_utc(r["created_at"] or 0), "created_at_epoch": r["created_at"],
               "access_count": int(r["accesses"] or 0) + (1 if digest in local_ids else 0),
               "last_accessed_epoch": stamp if digest in local_ids else None}
        out = local.public(doc)
        out["snippet"] = r["headline"] or ""
        out["score"] = round(float(r["rank"] or 0), 4)
        out["match"] = "team"
        out["team"] = {"id": r["id"], "captured_by": int(r["members"] or 0),
                       "last_seen": clamp_time(r["last_seen"], time.time()),
                       "member": checked_member(r["member"])}
        out["provenance"] = provenance(r["member"])
        results.append(out)
    return results


def _import(conn, pg, rows, project) -> tuple[dict[str, int], set[str]]:
    """Bring the hits into the local store, through the same checks as a pull (content
    hashed again, error texts refused, provenance team:<member>), within IMPORT_MAX_BYTES
    counted on the bytes PostgreSQL holds. Returns (content_hash -> local id, refused hashes)."""
    hashes = [r["content_hash"] for r in rows]
    info = {r["content_hash"]: r for r in rows}
    forgotten = tl.forgotten_among(conn, hashes)
    have = {h: tl.document_id_by_hash(conn, h) for h in tl.local_hashes(conn, hashes)}
    row_cap = max_doc_bytes()
    need, total = [], 0
    for r in rows:
        if r["content_hash"] in have or r["content_hash"] in forgotten or not valid_hash(r["content_hash"]):
            continue
        size = int(r["size"] or 0)
        if size > row_cap or total + size > IMPORT_MAX_BYTES:
            continue
        need.append(r["id"])
        total += size
    fetched = []
    if need:
        with pg.transaction():
            fetched = dict_rows(pg).execute(
                "SELECT d.content_hash, left(d.source, 2000) AS source, left(d.source_tool, 40) AS source_tool,"
                " left(d.title, 1000) AS title, d.content, left(d.type, 40) AS type,"
                " left(d.metadata, 16384) AS metadata, left(d.url, 4096) AS url,"
                " left(d.library_id, 330) AS library_id, left(d.topic, 1000) AS topic,"
                " left(d.version, 100) AS version"
                " FROM (SELECT id, sum(octet_length(content)) OVER (ORDER BY id) AS running"
                "   FROM documents WHERE id = ANY(%s) AND octet_length(content) <= %s) s"
                " JOIN documents d ON d.id = s.id WHERE s.running <= %s",
                (need, row_cap, IMPORT_MAX_BYTES)).fetchall()
    refused: set[str] = set()
    with transaction(conn):
        for r in fetched:
            digest = r["content_hash"]
            member = info[digest]["member"] if digest in info else None
            try:
                doc_id, _ = upsert_document(
                    conn, project=project or "", source=r["source"] or "",
                    source_tool=r["source_tool"] or "web", content=r["content"],
                    title=r["title"], type=r["type"], url=r["url"],
                    library_id=checked_library(r["library_id"]), topic=r["topic"],
                    version=checked_version(r["version"]),
                    metadata=_with_team(r["metadata"], info[digest]["members"] if digest in info else 0, member),
                    tool="team-search", provenance=provenance(member), claimed_hash=digest)
            except Refused:
                refused.add(digest)  # admission refused it (memhooks.store.admission)
                continue
            if doc_id is not None:
                have[digest] = doc_id
        ids = [i for i in have.values() if i is not None]
    note_documents(queries.main_file(conn), queries.content_hashes(conn, ids), project)
    # A hit that was not brought in (over the byte budget) was not checked either: not shown.
    unchecked = {h for h in hashes if h not in have and h not in refused}
    return {h: i for h, i in have.items() if i is not None}, refused | unchecked


def _search(conn, query, limit):
    url = team_url()
    if not url:
        raise TeamError("not-configured", "no team store configured (MEMHOOKS_TEAM_URL or "
                        "`memhooks team connect URL`)")
    try:
        with closing(open_team(url)) as pg:
            return search_team(conn, pg, query, limit, project=project_dir())
    except Exception as exc:  # noqa: BLE001 - every driver failure becomes a classified TeamError
        raise classify(exc, url) from None


def search(conn, query, limit):
    """Team search results for `memhooks search --team`; raises TeamError when the team
    store is not configured or cannot be searched."""
    return _search(conn, query, limit)


def tool_search_team(query, limit) -> tuple[str, bool]:
    """For the MCP tool's scope "team": (markdown, is_error)."""
    with closing(open_reader()) as conn:
        try:
            results = _search(conn, query, limit)
        except TeamError as exc:
            return f"The team store cannot be searched: {exc}. Search the local cache (scope \"local\") instead.", True
    text = results_markdown(query, results)
    return (("From the team store (documents any team member captured).\n" + text) if results else text), False
