"""`memhooks forget`: choose documents, delete them and every copy of their text, and
remember their content hashes so they are never stored again.

What goes, for each chosen document: its row (and so its FTS entry, captures and tier2
rows), its read counts, the journal events it was captured from (their raw payloads hold
the text), any other journal event or spool file whose payload carries its URL or text,
and the free-page and WAL copies of all of that: the deletes run with
`PRAGMA secure_delete = ON`, the FTS index is merged (`optimize`, so no old segment keeps
a token), both files are VACUUMed and their WALs checkpointed with TRUNCATE. The content
hash is recorded in `forgotten` (team_done = 0: the caller sends it to the team store).

`run` is the whole command (choose, preview, confirm, forget, scrub the spool, tell the
team store through the caller's callback); `memhooks forget` only parses and renders.
"""

import json
import os
import sqlite3
import time
import zlib
from collections.abc import Callable

from memhooks.files import open_regular
from memhooks.store.compact import blob_refs, decode_ref, drop_blobs
from memhooks.store.connect import transaction
from memhooks.store.packs import PAYLOAD, RAW, REF, pack_lines, rewrite_packs
from memhooks.store.projections import drop_unused_contexts, forget_hash

# Columns of a chosen document (what a dry run shows).
COLUMNS = "id, content_hash, source_tool, title, url, library_id, project, bytes, created_at_epoch"
NEEDLE_CHARS = 120  # how much of a text is looked for in raw payloads


def drop_payload(conn, event_id: int, columns: dict) -> None:
    """An event whose every document the user forgot keeps no raw payload: its text is
    replaced by the call's metadata (inside the ingester's transaction; the journal is
    written with secure_delete, so the old bytes are zeroed)."""
    stub = {k: columns.get(k) for k in ("hook_event_name", "tool_name", "session_id",
                                         "tool_use_id", "cwd")}
    stub.update(memhooks_metadata_only=True, memhooks_forgotten=True)
    conn.execute("UPDATE events SET payload = ?, error = 'forgotten text: payload dropped'"
                 " WHERE id = ?", (json.dumps(stub, ensure_ascii=False), event_id))


class Criteria:
    """What to forget; every given criterion must hold (AND)."""

    def __init__(self, *, ids=(), url: str | None = None, library: str | None = None,
                 project: str | None = None, source: str | None = None,
                 since: float | None = None, until: float | None = None):
        self.ids = [int(i) for i in ids]
        self.url, self.library, self.project = url or None, library or None, project or None
        self.source, self.since, self.until = source or None, since, until

    def empty(self) -> bool:
        return not (self.ids or self.url or self.library or self.project or self.source
                    or self.since is not None or self.until is not None)

    def where(self) -> tuple[str, list]:
        parts: list[str] = []
        params: list = []
        if self.ids:
            parts.append(f"d.id IN ({','.join('?' * len(self.ids))})")
            params += self.ids
        if self.url:
            parts.append("substr(coalesce(d.url, d.source), 1, ?) = ?")
            params += [len(self.url), self.url]
        if self.library:
            lid = self.library.strip().rstrip("/").lower()
            parts.append("(lower(d.library_id) = ? OR substr(lower(d.library_id), 1, ?) IN (?, ?))")
            params += [lid, len(lid) + 1, lid + "/", lid + "@"]
        if self.project:
            root = self.project.rstrip("/") or "/"
            under = root if root.endswith("/") else root + "/"
            parts.append("(d.project = ? OR substr(d.project, 1, ?) = ? OR EXISTS (SELECT 1 FROM"
                         " captures c WHERE c.document_id = d.id AND (c.project = ? OR"
                         " substr(c.project, 1, ?) = ?)))")
            params += [root, len(under), under, root, len(under), under]
        if self.source:
            parts.append("(lower(d.source_tool) = ? OR lower(d.tool) = ?)")
            params += [self.source.lower(), self.source.lower()]
        if self.since is not None or self.until is not None:
            lo = self.since if self.since is not None else float("-inf")
            hi = self.until if self.until is not None else float("inf")
            parts.append("((d.created_at_epoch >= ? AND d.created_at_epoch <= ?) OR EXISTS"
                         " (SELECT 1 FROM captures c WHERE c.document_id = d.id"
                         " AND c.captured_at >= ? AND c.captured_at <= ?))")
            params += [lo, hi, lo, hi]
        return " AND ".join(parts) or "0", params


def choose(conn, criteria: Criteria) -> list:
    """The documents the criteria name (sqlite3.Row-like tuples of COLUMNS), oldest first."""
    if criteria.empty():
        return []
    where, params = criteria.where()
    conn.row_factory = _row
    try:
        return conn.execute(f"SELECT {COLUMNS} FROM documents d WHERE {where} ORDER BY d.id",
                            params).fetchall()
    finally:
        conn.row_factory = None


def _row(cursor, values):
    return dict(zip((c[0] for c in cursor.description), values, strict=True))


def _json_fragment(text: str) -> str:
    """`text` as it appears inside a JSON string of a raw payload."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def needles(conn, docs: list) -> list[str]:
    """The strings whose presence in a raw payload means it carries one of `docs`: its URL
    and the start of its text, as JSON writes them (both escapings: raw and \\u-escaped)."""
    out = set()
    for doc in docs:
        row = conn.execute("SELECT document_text(body) FROM documents WHERE id = ?", (doc["id"],)).fetchone()
        texts = [doc.get("url") or ""]
        if row and row[0]:
            texts.append(row[0].strip()[:NEEDLE_CHARS])
        for text in texts:
            if len(text) >= 12:
                out.add(_json_fragment(text))
                out.add(json.dumps(text)[1:-1])
    return sorted(out)


def plan(conn, docs: list) -> dict:
    """What forgetting `docs` removes: counts and the journal event ids (a dry run prints it)."""
    ids = [d["id"] for d in docs]
    events = set()
    captures = tier2 = 0
    for chunk in _chunks(ids):
        marks = ",".join("?" * len(chunk))
        events |= {r[0] for r in conn.execute(
            f"SELECT DISTINCT event_id FROM captures WHERE document_id IN ({marks})", chunk)}
        captures += conn.execute(f"SELECT count(*) FROM captures WHERE document_id IN ({marks})",
                                 chunk).fetchone()[0]
        tier2 += conn.execute(f"SELECT count(*) FROM tier2 WHERE document_id IN ({marks})",
                              chunk).fetchone()[0]
    found = needles(conn, docs)
    for chunk in _chunks(found, 200):
        # Other events carrying the text, that no capture links to it: a repeat captured
        # after an earlier forget of the same text (never projected), a failed or skipped
        # call, a cache write, one still pending.
        clause = " OR ".join("instr(payload, ?) > 0" for _ in chunk)
        events |= {r[0] for r in conn.execute(
            "SELECT id FROM events WHERE coalesce(hook_event_name, '') <> 'SessionStart'"
            " AND NOT EXISTS (SELECT 1 FROM captures c WHERE c.event_id = events.id)"
            f" AND ({clause})", chunk)}
    # The journal's compacted forms (memhooks.store.compact): the bodies kept once, and
    # the references and packed events that hold a needle or point at such a body.
    blobs, compacted = _carriers(conn, found, {d["content_hash"] for d in docs})
    events |= compacted
    return {"documents": len(docs), "bytes": sum(d["bytes"] or 0 for d in docs),
            "captures": captures, "tier2": tier2, "events": sorted(events), "needles": found,
            "blobs": sorted(blobs)}


def _carriers(conn, needles, content_hashes) -> tuple[set, set]:
    """For `memhooks forget`: (blob ids, event ids) that carry one of `needles` (strings as
    JSON writes them: a URL, the start of a text) or come from one of `content_hashes`: the
    blobs whose text holds one or that gave such a document, and every event (a reference
    payload in `events`, a packed one) that holds a needle or refers to one of those blobs.
    Reads every blob and pack: a forget is rare and must leave no copy."""
    needles = [n for n in needles if n]
    hashes = list(content_hashes)
    blobs: set = set()
    for part in _chunks(hashes):
        blobs |= {r[0] for r in conn.execute(
            f"SELECT blob FROM blob_docs WHERE content_hash IN ({','.join('?' * len(part))})", part)}
    if needles:
        for blob, data in conn.execute("SELECT id, data FROM blobs"):
            text = zlib.decompress(data).decode("utf-8", "surrogatepass")
            forms = (json.dumps(text, ensure_ascii=False), json.dumps(text))
            if any(n in f for n in needles for f in forms):
                blobs.add(blob)
    shas = set()
    for blob in blobs:
        row = conn.execute("SELECT sha256 FROM blobs WHERE id = ?", (blob,)).fetchone()
        if row:
            shas.add(row[0])

    def carries(kind: int, payload) -> bool:
        if kind == RAW:
            return isinstance(payload, str) and any(n in payload for n in needles)
        digests: set = set()
        blob_refs(payload, digests)
        if digests & shas:
            return True
        forms = (json.dumps(payload, ensure_ascii=False), json.dumps(payload))
        return any(n in f for n in needles for f in forms)

    events: set = set()
    for event_id, payload in conn.execute("SELECT id, payload FROM events WHERE typeof(payload) = 'blob'"):
        try:
            ref = decode_ref(payload)
        except (zlib.error, ValueError, UnicodeDecodeError, RecursionError):
            continue
        if carries(REF, ref):
            events.add(event_id)
    for (data,) in conn.execute("SELECT data FROM event_packs"):
        for values, kind in pack_lines(data):
            if carries(kind, values[PAYLOAD]):
                events.add(values[0])
    return blobs, events


def _chunks(items: list, size: int = 500):
    for i in range(0, len(items), size):
        yield items[i:i + size]


def forget(conn, docs: list, now: float | None = None) -> dict:
    """Delete `docs` and what carries their text (see the module docstring) in one
    transaction, then scrub the free pages and WALs. Returns the plan with `hashes` and
    `scrubbed` (whether both WALs were truncated)."""
    now = time.time() if now is None else now
    conn.execute("PRAGMA main.secure_delete = ON")
    conn.execute("PRAGMA journal.secure_delete = ON")
    with transaction(conn):
        done = plan(conn, docs)  # inside the write lock: no capture sneaks in between
        hashes = sorted({d["content_hash"] for d in docs})
        for digest in hashes:
            forget_hash(conn, digest, now=now)
        # and every context no capture uses (one a prune left, say) with its project path
        drop_unused_contexts(conn)
        for chunk in _chunks(hashes):
            conn.execute(f"DELETE FROM document_reads WHERE content_hash IN ({','.join('?' * len(chunk))})",
                         chunk)
        gone = set(done["events"])
        rewrite_packs(conn, lambda ev: ev["id"] not in gone)  # packed ones come back, then go
        for chunk in _chunks(done["events"]):
            conn.execute(f"DELETE FROM events WHERE id IN ({','.join('?' * len(chunk))})", chunk)
        drop_blobs(conn, done["blobs"])
        conn.execute("INSERT INTO documents_fts (documents_fts) VALUES ('optimize')")
        conn.execute("INSERT INTO sections_fts (sections_fts) VALUES ('optimize')")
    done["hashes"] = hashes
    done["scrubbed"] = scrub(conn)
    return done


def scrub(conn, attempts: int = 20) -> bool:
    """Leave no deleted byte in either file or its WAL: VACUUM both (fresh pages, free
    pages gone), then checkpoint each WAL and truncate it to zero bytes. A hook writing at
    that moment holds the journal's WAL briefly: retried for a few seconds. Returns whether
    both WALs were truncated."""
    for schema in ("main", "journal"):
        for attempt in range(attempts):
            try:
                conn.execute(f"VACUUM {schema}")
                break
            except sqlite3.OperationalError:
                if attempt == attempts - 1:
                    raise
                time.sleep(0.1)
    clean = True
    for schema in ("main", "journal"):
        for _attempt in range(attempts):
            busy, _, _ = conn.execute(f"PRAGMA {schema}.wal_checkpoint(TRUNCATE)").fetchone()
            if not busy:
                break
            time.sleep(0.1)
        else:
            clean = False
    return clean


def scrub_spool(folders: list[str], found: list[str]) -> list[str]:
    """Delete the spool files (in `folders` and their `failed/`) whose payload carries one of
    `found`; the paths deleted. Spool files are memhooks' own: regular files only."""
    gone: list[str] = []
    if not found:
        return gone
    for folder in folders:
        for where in (folder, os.path.join(folder, "failed")):
            try:
                names = os.listdir(where)
            except OSError:
                continue
            for name in names:
                if not name.endswith(".json"):
                    continue
                path = os.path.join(where, name)
                fd = open_regular(path, os.O_RDONLY)
                if fd is None:
                    continue
                try:
                    data = _read_all(fd)
                finally:
                    os.close(fd)
                if _carries(data, found):
                    try:
                        _overwrite(path)
                        os.unlink(path)
                        gone.append(path)
                    except OSError:
                        pass
    return gone


def _read_all(fd: int, limit: int = 64 * 1024 * 1024) -> bytes:
    chunks, size = [], 0
    while size < limit:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _carries(data: bytes, found: list[str]) -> bool:
    """Whether a spool file (a JSON record whose `payload` is the raw payload text) carries
    one of the needles."""
    try:
        record = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        record = None
    payload = record.get("payload") if isinstance(record, dict) else None
    if isinstance(payload, str):
        return any(n in payload for n in found)
    text = data.decode("utf-8", "replace")
    return any(n in text for n in found)


def _overwrite(path: str) -> None:
    """Zero a file's bytes before it is unlinked (its blocks go back to the file system,
    not to memhooks' folder, but a copy-on-write or journaling file system may keep them;
    this is what can be done from here)."""
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
    try:
        size = os.fstat(fd).st_size
        block = b"\0" * min(size, 1 << 20)
        done = 0
        while done < size:
            done += os.write(fd, block[:size - done])
        os.fsync(fd)
    finally:
        os.close(fd)


def _brief(doc: dict) -> dict:
    return {k: doc[k] for k in ("id", "source_tool", "url", "library_id", "title", "bytes")}


def run(conn, criteria: Criteria, *, dry_run: bool = False, now: float | None = None,
        spool_folders: tuple[str, ...] | list[str] = (),
        review: Callable[[list, dict], None] | None = None,
        tell_team: Callable[[object], str | None] | None = None) -> dict:
    """`memhooks forget` as a library call: choose the documents `criteria` name, preview
    what goes, let `review(docs, preview)` show it (and raise to stop), then forget them,
    delete the spool files that carry them and let `tell_team(conn)` send the hashes to
    the team store ('done', None for no team store, or why not yet). Returns the result
    (`memhooks forget --json`'s keys) plus `docs` (the chosen rows), `forgotten` (how many
    went) and `spool` (the paths deleted)."""
    now = time.time() if now is None else now
    docs = choose(conn, criteria)
    result: dict = {"dry_run": dry_run, "documents": [_brief(d) for d in docs], "bytes": 0,
                    "captures": 0, "tier2": 0, "events": 0, "spool_files": 0, "hashes": [],
                    "wal_truncated": None, "team": None, "docs": docs, "forgotten": 0, "spool": []}
    if not docs:
        return result
    preview = plan(conn, docs)
    result.update(bytes=preview["bytes"], captures=preview["captures"], tier2=preview["tier2"],
                  events=len(preview["events"]))
    if review is not None:
        review(docs, preview)
    if dry_run:
        return result
    done = forget(conn, docs, now)
    team = tell_team(conn) if tell_team is not None else None
    spool = scrub_spool(list(spool_folders), done["needles"])
    result.update(captures=done["captures"], tier2=done["tier2"], events=len(done["events"]),
                  spool_files=len(spool), hashes=done["hashes"], wal_truncated=done["scrubbed"],
                  team=team, forgotten=done["documents"], spool=spool)
    return result
