"""The local side of team sync: every SQLite query the team package needs (standard library
only). Writes to projection tables still go through memhooks.store.projections.

State lives in `team_state` (key → value, until, failures): the member id, the team
database's id (a different team database resets what counts as pushed), push watermarks
for libraries and tier1, and back-off entries (`backoff.push`, `backoff.pull`).
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid

BACKOFF_BASE_S = 30.0
BACKOFF_MAX_S = 1800.0
PUSH_ORIGINS = ("capture", "write", "warm-api")  # tier1 knowledge this member found itself


def _rows(conn, sql: str, params=()):
    """A cursor whose rows are sqlite3.Row, whatever the connection's row factory."""
    cur = conn.execute(sql, params)
    cur.row_factory = sqlite3.Row
    return cur


# ----------------------------------------------------------------------------- key/value state

def get_state(conn, key: str) -> sqlite3.Row | None:
    """The state row (value, until, failures) for `key`, read by name, or None."""
    return _rows(conn, "SELECT value, until, failures FROM team_state WHERE key = ?", (key,)).fetchone()


def set_state(conn, key: str, value: str | None, *, until: float | None = None,
              failures: int = 0, now: float | None = None) -> None:
    conn.execute(
        "INSERT INTO team_state (key, value, until, failures, updated_at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value, until = excluded.until,"
        " failures = excluded.failures, updated_at = excluded.updated_at",
        (key, value, until, failures, time.time() if now is None else now),
    )


def del_state(conn, key: str) -> None:
    conn.execute("DELETE FROM team_state WHERE key = ?", (key,))


def member_id(conn) -> str:
    """This store's random member id (no user or host name leaves the machine)."""
    row = get_state(conn, "member_id")
    if row and row["value"]:
        return row["value"]
    mid = uuid.uuid4().hex
    conn.execute("INSERT OR IGNORE INTO team_state (key, value, updated_at) VALUES ('member_id', ?, ?)",
                 (mid, time.time()))
    row = get_state(conn, "member_id")  # ours, or another process's that won the insert
    return row["value"] if row else mid


def bind_team(conn, team_id: str) -> bool:
    """Record which team database we push to. A different one resets the push state.
    Returns whether it was reset."""
    row = get_state(conn, "team_id")
    if row and row["value"] == team_id:
        return False
    conn.execute("DELETE FROM team_pushed")
    for key in ("push.libraries", "push.tier1", "pull.forgotten"):
        del_state(conn, key)
    set_state(conn, "team_id", team_id)
    return bool(row)


# ----------------------------------------------------------------------------- back-off

def backoff_until(conn, op: str, now: float | None = None) -> tuple[float, str] | None:
    """(until, reason) when `op` ('push' or 'pull') is backing off, else None."""
    now = time.time() if now is None else now
    try:
        row = get_state(conn, f"backoff.{op}")
    except sqlite3.Error:  # a store from before team sync (no team_state table)
        return None
    if row and row["until"] and row["until"] > now:
        return row["until"], row["value"] or "failed"
    return None


def record_failure(conn, ops, reason: str, now: float | None = None) -> float:
    """Back `ops` off: 30 s after the first failure, doubling up to 30 min. Returns until."""
    now = time.time() if now is None else now
    until = now
    for op in ops:
        row = get_state(conn, f"backoff.{op}")
        failures = (row["failures"] if row else 0) + 1
        until = now + min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** (failures - 1))
        set_state(conn, f"backoff.{op}", reason[:300], until=until, failures=failures, now=now)
    return until


def record_success(conn, op: str, summary: dict | None = None, now: float | None = None) -> None:
    now = time.time() if now is None else now
    del_state(conn, f"backoff.{op}")
    set_state(conn, f"last.{op}", json.dumps(summary or {}, sort_keys=True), until=now, now=now)


def status_rows(conn) -> dict:
    out = {}
    for row in _rows(
            conn, "SELECT key, value, until, failures, updated_at FROM team_state"
            " WHERE key LIKE 'backoff.%' OR key LIKE 'last.%' OR key IN ('member_id', 'team_id')"):
        out[row["key"]] = {"value": row["value"], "until": row["until"], "failures": row["failures"],
                           "updated_at": row["updated_at"]}
    return out


# ----------------------------------------------------------------------------- push: selection

_DOC_COLS = ("id", "content_hash", "project", "source", "source_tool", "title", "content", "type",
             "metadata", "url", "library_id", "topic", "version", "bytes", "truncated",
             "created_at_epoch", "access_count", "last_accessed_epoch", "tool")


def unpushed_documents(conn, after_id: int, limit: int) -> list[dict]:
    """Documents new to the team, or whose access count changed since the last push, by id."""
    cols = ", ".join("document_text(d.body) AS content" if c == "content" else f"d.{c}" for c in _DOC_COLS)
    rows = _rows(
        conn,
        f"SELECT {cols}, (SELECT max(captured_at) FROM captures c WHERE c.document_id = d.id) AS captured,"
        " p.content_hash IS NOT NULL AS known"
        " FROM documents d LEFT JOIN team_pushed p ON p.content_hash = d.content_hash"
        " WHERE d.id > ? AND (p.content_hash IS NULL OR p.access_count != d.access_count)"
        " ORDER BY d.id LIMIT ?",
        (after_id, limit),
    ).fetchall()
    out = []
    for r in rows:
        doc = {c: r[c] for c in _DOC_COLS}
        captured = r["captured"]
        # A document that only came from the team (pull, team search) was not captured here.
        doc["captured"] = captured is not None or not str(doc["tool"] or "").startswith("team-")
        doc["captured_at"] = captured or doc["created_at_epoch"] or time.time()
        doc["known"] = bool(r["known"])
        out.append(doc)
    return out


def has_unpushed(conn) -> bool:
    return conn.execute(
        "SELECT 1 FROM documents d WHERE NOT EXISTS (SELECT 1 FROM team_pushed p"
        " WHERE p.content_hash = d.content_hash AND p.access_count = d.access_count) LIMIT 1"
    ).fetchone() is not None


def document_projects(conn, doc_ids: list[int]) -> dict[int, set[str]]:
    """Every project that captured each document (its first project included)."""
    out: dict[int, set[str]] = {i: set() for i in doc_ids}
    for start in range(0, len(doc_ids), 500):
        chunk = doc_ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for row in _rows(
                conn, f"SELECT document_id, project FROM captures WHERE document_id IN ({marks})"
                f" UNION SELECT id, project FROM documents WHERE id IN ({marks})", (*chunk, *chunk)):
            if row["project"]:
                out.setdefault(row["document_id"], set()).add(row["project"])
    return out


def mark_pushed(conn, docs: list[tuple[str, int]], now: float | None = None) -> None:
    now = time.time() if now is None else now
    conn.executemany(
        "INSERT INTO team_pushed (content_hash, access_count, pushed_at) VALUES (?, ?, ?)"
        " ON CONFLICT (content_hash) DO UPDATE SET access_count = excluded.access_count,"
        " pushed_at = excluded.pushed_at",
        [(h, n, now) for h, n in docs],
    )


_LIB_COLS = ("library_id", "title", "description", "code_snippets", "reputation", "trust_score",
             "benchmark_score", "versions", "source", "last_seen")


def libraries_after(conn, mark, limit: int) -> list[dict]:
    ts, key = mark if mark else (-1.0, "")
    rows = _rows(
        conn, f"SELECT {', '.join(_LIB_COLS)} FROM libraries WHERE (last_seen, library_id) > (?, ?)"
        " ORDER BY last_seen, library_id LIMIT ?", (ts, key, limit)).fetchall()
    return [dict(r) for r in rows]


_T1_COLS = ("project", "name_key", "loose_key", "name", "ecosystem", "library_id", "version",
            "versioned_id", "matched", "origin", "resolved_at", "expires_at")


def tier1_after(conn, mark, limit: int) -> list[dict]:
    ts, project, key = mark if mark else (-1.0, "", "")
    marks = ",".join("?" * len(PUSH_ORIGINS))
    rows = _rows(
        conn, f"SELECT {', '.join(_T1_COLS)} FROM tier1 WHERE origin IN ({marks})"
        " AND (resolved_at, project, name_key) > (?, ?, ?)"
        " ORDER BY resolved_at, project, name_key LIMIT ?",
        (*PUSH_ORIGINS, ts, project, key, limit)).fetchall()
    return [dict(r) for r in rows]


def get_mark(conn, key: str):
    row = get_state(conn, key)
    if not row or not row["value"]:
        return None
    try:
        return json.loads(row["value"])
    except ValueError:
        return None


def set_mark(conn, key: str, mark) -> None:
    set_state(conn, key, json.dumps(mark))


# ----------------------------------------------------------------------------- forgotten

def pending_forgets(conn) -> list[str]:
    return [r["content_hash"] for r in _rows(conn, "SELECT content_hash FROM forgotten WHERE team_done = 0")]


def mark_forgets_done(conn, hashes: list[str]) -> None:
    conn.executemany("UPDATE forgotten SET team_done = 1 WHERE content_hash = ?", [(h,) for h in hashes])


def _hashes_in(conn, table: str, hashes: list[str]) -> set[str]:
    """Which of `hashes` the table (`documents` or `forgotten`, a constant) holds."""
    found: set[str] = set()
    for start in range(0, len(hashes), 500):
        chunk = hashes[start:start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(r["content_hash"] for r in _rows(
            conn, f"SELECT content_hash FROM {table} WHERE content_hash IN ({marks})", chunk))
    return found


def forgotten_among(conn, hashes: list[str]) -> set[str]:
    return _hashes_in(conn, "forgotten", hashes)


# ----------------------------------------------------------------------------- pull: what we have

def project_names(conn, project: str) -> list[dict]:
    """The project's ranked libraries (from its last scan) and its tier1 names."""
    names: dict[str, dict] = {}
    row = _rows(conn, "SELECT ranked FROM warm_state WHERE project = ?", (project,)).fetchone()
    if row and row["ranked"]:
        try:
            for dep in json.loads(row["ranked"]):
                if isinstance(dep, dict) and isinstance(dep.get("name"), str):
                    names.setdefault(dep["name"], {"name": dep["name"], "ecosystem": dep.get("ecosystem"),
                                                   "version": dep.get("version")})
        except ValueError:
            pass
    for row in _rows(
            conn, "SELECT coalesce(name, name_key) AS name, ecosystem, version FROM tier1 WHERE project = ?",
            (project,)):
        names.setdefault(row["name"], {"name": row["name"], "ecosystem": row["ecosystem"],
                                       "version": row["version"]})
    return list(names.values())


TEAM_SUGGESTION = "team-suggestion"  # tier1.matched of an unverified team answer (memhooks.team.trust)


def project_library_ids(conn, project: str, now: float | None = None) -> list[str]:
    """The project's tier1 library IDs, team suggestions left out (unverified)."""
    return [r["library_id"] for r in _rows(
        conn, "SELECT DISTINCT library_id FROM tier1 WHERE project = ? AND library_id IS NOT NULL"
        " AND coalesce(matched, '') != ?", (project, TEAM_SUGGESTION))]


def local_hashes(conn, hashes: list[str]) -> set[str]:
    return _hashes_in(conn, "documents", hashes)


def fresh_tier1(conn, project: str, name_key: str, now: float) -> tuple[str | None, str, str | None] | None:
    """(library_id, origin, matched) of a fresh local entry for the name in this project, else None."""
    row = _rows(
        conn, "SELECT library_id, origin, matched FROM tier1 WHERE project = ? AND name_key = ? AND expires_at > ?",
        (project, name_key, now)).fetchone()
    return (row["library_id"], row["origin"], row["matched"]) if row else None


OWN_ORIGINS = ("capture", "write", "warm-api")  # tier1 answers this member found itself


def own_library_ids(conn, keys: list[str], loose: str) -> list[str]:
    """Library IDs this member itself resolved for these name keys (any project, any age):
    from a captured resolve-library-id, an lc-cache-write or its own Context7 API search."""
    keys = [k for k in keys if k][:8]
    if not keys and not loose:
        return []
    marks = ",".join("?" * len(keys)) or "NULL"
    return [r["library_id"] for r in _rows(
        conn, f"SELECT DISTINCT library_id FROM tier1 WHERE (name_key IN ({marks}) OR loose_key = ?)"
        f" AND library_id IS NOT NULL AND origin IN ({','.join('?' * len(OWN_ORIGINS))}) LIMIT 100",
        (*keys, loose, *OWN_ORIGINS))]


def seen_library_ids(conn, bare: list[str]) -> list[str]:
    """Library IDs a captured resolve-library-id output or this member's own Context7 API
    search named for these names (by title or ID tail); team-pulled rows left out."""
    bare = [b for b in bare if b][:16]
    if not bare:
        return []
    marks = ",".join("?" * len(bare))
    return [r["library_id"] for r in _rows(
        conn, f"SELECT library_id FROM libraries WHERE origin != 'team'"
        f" AND (title_key IN ({marks}) OR tail_key IN ({marks})) LIMIT 200", (*bare, *bare))]


def library_origins(conn, ids: list[str]) -> dict[str, str]:
    """library_id -> origin for the ids stored locally."""
    out: dict[str, str] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        out.update((r["library_id"], r["origin"]) for r in _rows(
            conn, f"SELECT library_id, origin FROM libraries WHERE library_id IN ({marks})", chunk))
    return out


def fresh_tier2(conn, library_key: str, topic_key: str, now: float) -> bool:
    return conn.execute(
        "SELECT 1 FROM tier2 WHERE library_key = ? AND topic_key = ? AND expires_at > ?",
        (library_key, topic_key, now)).fetchone() is not None


def document_id_by_hash(conn, digest: str) -> int | None:
    row = _rows(conn, "SELECT id FROM documents WHERE content_hash = ?", (digest,)).fetchone()
    return row["id"] if row else None


def document_hash(conn, doc_id: int) -> str | None:
    row = _rows(conn, "SELECT content_hash FROM documents WHERE id = ?", (doc_id,)).fetchone()
    return row["content_hash"] if row else None


def counts(conn) -> dict:
    row = _rows(conn, "SELECT (SELECT count(*) FROM documents) AS documents,"
                " (SELECT count(*) FROM team_pushed) AS pushed,"
                " (SELECT count(*) FROM forgotten) AS forgotten,"
                " (SELECT coalesce(sum(team_done = 0), 0) FROM forgotten) AS forgets_pending").fetchone()
    return dict(row)
