"""Pull: what the team knows about this project's libraries, into the local store.

For the project's ranked libraries (its last scan) and its tier1 names: the team's fresh
tier1 answers (the ID most members resolved; a local fresh answer is never replaced),
the libraries' metadata, and the documents captured for those libraries, newest first,
that are not here yet. Everything is written through the store's projection functions,
so the next lookup is local. Bounded by a time budget and a byte budget; documents the
user forgot, or that the team forgot, never come back.
"""

from __future__ import annotations

import json
import os
import re
import time

from memhooks import config
from memhooks.names import library_base, library_key, lookup_keys, loose_key, normalize, topic_key
from memhooks.store import team_local as tl
from memhooks.store.admission import Refused
from memhooks.store.connect import transaction
from memhooks.store.projections import (
    forget_hash,
    upsert_document,
    upsert_library,
    upsert_tier1,
    upsert_tier2,
)
from memhooks.team.store import dict_rows
from memhooks.warm.rank import rank
from memhooks.warm.scan import scan_project

# What the team sends is outside text: a library ID must look like one before it reaches
# tier1 (and from there the SessionStart context) or the libraries table.
_ID_RE = re.compile(r"/[A-Za-z0-9][A-Za-z0-9._-]{0,99}/[A-Za-z0-9][A-Za-z0-9._-]{0,149}"
                    r"(?:[/@][A-Za-z0-9][A-Za-z0-9._+-]{0,63})?/?")
MATCHED = ("exact", "first", "none", "write", "team")

DEFAULT_BUDGET_S = 10.0
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
LIST_LIMIT = 5000
FETCH_CHUNK = 100


def valid_id(library_id) -> bool:
    return isinstance(library_id, str) and len(library_id) <= 330 and bool(_ID_RE.fullmatch(library_id))


def _keys_for(names: list[dict]) -> tuple[list[str], list[str]]:
    keys: list[str] = []
    loose: list[str] = []
    for n in names:
        keys.append(normalize(n["name"], n.get("ecosystem")))
        keys += lookup_keys(n["name"])
        loose.append(loose_key(n["name"]))
    return sorted({k for k in keys if k}), sorted({k for k in loose if k})


def _team_tier1(pg, keys: list[str], loose: list[str], now: float) -> list[dict]:
    with pg.transaction():
        return dict_rows(pg).execute(
            "SELECT name_key, library_id, max(loose_key) AS loose_key, count(DISTINCT member_id) AS members,"
            " max(resolved_at) AS resolved_at, max(expires_at) AS expires_at,"
            " (array_agg(versioned_id ORDER BY resolved_at DESC))[1] AS versioned_id,"
            " (array_agg(matched ORDER BY resolved_at DESC))[1] AS matched,"
            " (array_agg(ecosystem ORDER BY resolved_at DESC))[1] AS ecosystem"
            " FROM tier1 WHERE (name_key = ANY(%s) OR loose_key = ANY(%s)) AND expires_at > %s"
            " GROUP BY name_key, library_id"
            " ORDER BY name_key, (library_id <> '') DESC, members DESC, max(resolved_at) DESC",
            (keys, loose, now)).fetchall()


def pull(conn, pg, *, project: str, budget_s: float | None = None, max_bytes: int | None = None,
         libraries: list[str] | None = None, list_limit: int = LIST_LIMIT) -> dict:
    started = time.monotonic()
    budget_s = DEFAULT_BUDGET_S if budget_s is None else budget_s
    max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    now = time.time()
    summary = {"project": project, "tier1": 0, "libraries": 0, "documents": 0, "bytes": 0,
               "forgotten": 0, "skipped_forgotten": 0, "complete": True}

    def out_of_time() -> bool:
        if time.monotonic() - started >= budget_s:
            summary["complete"] = False
            return True
        return False

    # Forgotten by anyone in the team since the last pull: forget here too.
    mark = tl.get_mark(conn, "pull.forgotten") or 0.0
    with pg.transaction():
        gone = dict_rows(pg).execute(
            "SELECT content_hash, forgotten_at FROM forgotten WHERE forgotten_at > %s"
            " ORDER BY forgotten_at LIMIT 10000", (mark,)).fetchall()
    if gone:
        with transaction(conn):
            for row in gone:
                summary["forgotten"] += forget_hash(conn, row["content_hash"], team_done=True)
            tl.set_mark(conn, "pull.forgotten", gone[-1]["forgotten_at"])

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
        keys, loose = _keys_for(names)
        best: dict[str, dict] = {}
        by_loose: dict[str, dict] = {}
        for row in _team_tier1(pg, keys, loose, now):
            if row["library_id"] and not valid_id(row["library_id"]):
                continue
            best.setdefault(row["name_key"], row)
            if row["loose_key"]:
                by_loose.setdefault(row["loose_key"], row)
        writes = []
        for n in names:
            key = normalize(n["name"], n.get("ecosystem"))
            row = best.get(key) or next((best[k] for k in lookup_keys(n["name"]) if k in best), None) \
                or by_loose.get(loose_key(n["name"]))
            if row is None:
                continue
            lid = row["library_id"] or None
            if lid:
                base = library_base(lid)
                if base:
                    bases.add(base)
            local = tl.fresh_tier1(conn, project, key, now)
            if local and (local[0] or not lid):  # local = (library_id, origin)
                continue  # a fresh local answer (or a local negative vs a team negative) stays
            writes.append((n, lid, row))
        if writes:
            with transaction(conn):
                for n, lid, row in writes:
                    resolved, expires = float(row["resolved_at"]), float(row["expires_at"])
                    if _admitted(upsert_tier1,conn, project=project, name=n["name"], ecosystem=n.get("ecosystem"),
                                    library_id=lid, origin="warm-local", ttl_s=max(1.0, expires - resolved),
                                    version=n.get("version"),
                                    versioned_id=row["versioned_id"] if lid and valid_id(row["versioned_id"]) else None,
                                    matched=row["matched"] if row["matched"] in MATCHED
                                    else ("team" if lid else "none"),
                                    now=resolved, provenance=TEAM_PROVENANCE):
                        summary["tier1"] += 1
    for lid in tl.project_library_ids(conn, project) if project else []:
        base = library_base(lid)
        if base:
            bases.add(base)
    if names:
        # Libraries no member resolved by name yet: the repository part of the ID equals the
        # package name (`react` -> /facebook/react), as local lookups match an ID's tail.
        tails = sorted({t for n in names for t in (n["name"].strip().lower(),
                                                   n["name"].strip().lower().rsplit("/", 1)[-1]) if t})
        with pg.transaction():
            for row in dict_rows(pg).execute(
                    "SELECT DISTINCT library_base FROM libraries"
                    " WHERE lower(split_part(library_base, '/', 3)) = ANY(%s) OR lower(title) = ANY(%s)"
                    " UNION SELECT DISTINCT library_base FROM documents"
                    " WHERE lower(split_part(library_base, '/', 3)) = ANY(%s) LIMIT 200",
                    (tails, tails, tails)):
                if row["library_base"]:
                    bases.add(row["library_base"])
    if not bases or out_of_time():
        return summary
    base_list = sorted(bases)

    # Library metadata.
    with pg.transaction():
        libs = dict_rows(pg).execute(
            "SELECT library_id, title, description, code_snippets, reputation, trust_score,"
            " benchmark_score, versions, source, last_seen FROM libraries WHERE library_base = ANY(%s)",
            (base_list,)).fetchall()
    if libs:
        with transaction(conn):
            for lib in libs:
                if not valid_id(lib["library_id"]):
                    continue
                try:
                    vers = json.loads(lib["versions"]) if lib["versions"] else []
                except ValueError:
                    vers = []
                _admitted(upsert_library, conn, library_id=lib["library_id"], title=lib["title"], origin="team",
                               description=lib["description"], code_snippets=lib["code_snippets"],
                               reputation=lib["reputation"], trust_score=lib["trust_score"],
                               benchmark_score=lib["benchmark_score"],
                               versions=vers if isinstance(vers, list) else [],
                               source=lib["source"], now=lib["last_seen"], provenance=TEAM_PROVENANCE)
                summary["libraries"] += 1

    # Documents for those libraries that are not here yet, newest first.
    with pg.transaction():
        listing = dict_rows(pg).execute(
            "SELECT id, content_hash, bytes FROM documents WHERE library_base = ANY(%s)"
            " ORDER BY last_seen DESC, id DESC LIMIT %s", (base_list, list_limit)).fetchall()
    hashes = [r["content_hash"] for r in listing]
    have = tl.local_hashes(conn, hashes)
    forgotten = tl.forgotten_among(conn, hashes)
    summary["skipped_forgotten"] = len(forgotten)
    wanted, total = [], 0
    for entry in listing:
        digest, size = entry["content_hash"], entry["bytes"]
        if digest in have or digest in forgotten:
            continue
        if total + (size or 0) > max_bytes:
            summary["complete"] = False
            break
        wanted.append(entry["id"])
        total += size or 0
    ttl2 = config.tier2_ttl_s()
    for start in range(0, len(wanted), FETCH_CHUNK):
        if out_of_time():
            break
        chunk = wanted[start:start + FETCH_CHUNK]
        with pg.transaction():
            rows = dict_rows(pg).execute(
                "SELECT d.content_hash, d.source, d.source_tool, d.title, d.content, d.type, d.metadata,"
                " d.url, d.library_id, d.topic, d.version, d.last_seen,"
                " (SELECT count(*) FROM document_members m WHERE m.content_hash = d.content_hash AND m.captured)"
                " AS members"
                " FROM documents d WHERE d.id = ANY(%s)", (chunk,)).fetchall()
        with transaction(conn):
            for row in rows:
                source, tool, title, content = row["source"], row["source_tool"], row["title"], row["content"]
                dtype, url, lid, topic = row["type"], row["url"], row["library_id"], row["topic"]
                version, seen = row["version"], row["last_seen"]
                metadata = _with_team(row["metadata"], row["members"])
                if lid and not valid_id(lid):
                    lid = None  # kept as a document, never as a tier2 answer
                doc_id, created = _admitted(
                    upsert_document, conn, project=project or "", source=source or "",
                    source_tool=tool or "context7",
                    content=content, title=title, type=dtype, url=url, library_id=lid, topic=topic,
                    version=version, metadata=metadata, tool="team-pull", now=now,
                    provenance=TEAM_PROVENANCE) or (None, False)
                if doc_id is None:
                    continue
                if created:
                    summary["documents"] += 1
                    summary["bytes"] += len(content.encode("utf-8"))
                if lid and topic and (dtype or "library-docs") == "library-docs" and seen \
                        and not tl.fresh_tier2(conn, library_key(lid), topic_key(topic), now):
                    _admitted(upsert_tier2, conn, library_id=lid, topic=topic, document_id=doc_id,
                              origin="team", ttl_s=ttl2, now=float(seen), provenance=TEAM_PROVENANCE)
    return summary


# Team rows name no single member yet (the team helper refines this).
TEAM_PROVENANCE = "team:unknown"


def _admitted(writer, *args, **kw):
    """A projection write; None when admission refuses the row (memhooks.store.admission)."""
    try:
        return writer(*args, **kw)
    except Refused:
        return None


def _scan_names(project: str) -> list[dict]:
    """The project's ranked libraries when it was never warmed (a bounded scan)."""
    if not os.path.isdir(project):
        return []
    try:
        ranked = rank(scan_project(project).deps, top_n=config.top_n())
    except Exception:  # noqa: BLE001 - an unreadable project pulls nothing
        return []
    return [{"name": d.name, "ecosystem": d.ecosystem, "version": d.version} for d in ranked]


def _with_team(meta: str | None, members: int) -> str:
    try:
        data = json.loads(meta) if meta else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    data["team"] = {"captured_by": int(members or 0)}
    return json.dumps(data, ensure_ascii=False, sort_keys=True)
