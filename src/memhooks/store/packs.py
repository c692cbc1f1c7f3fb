"""Packs (standard library only): settled journal events moved out of `events` into
compressed blocks, and back when a reindex or a heal asks for them again. See
memhooks.store.compact for the journal's compacted forms as a whole; this module reads and
writes `event_packs`, `pack_sessions` and `pack_tally`."""

from __future__ import annotations

import base64
import hashlib
import json
import lzma
import time
import zlib

from memhooks.store.compact import (
    STUB_PREFIX,
    compact_text,
    decode_ref,
    encode_ref,
    link_documents,
    store_blobs,
)
from memhooks.store.journal import requeue_packs as requeue_packs  # (a reindex asks the packs)
from memhooks.store.queries import packed_states as packed_states  # (read with the packs)
from memhooks.store.sqlite_file import transaction

# A pack is one xz block of up to PACK_EVENTS settled events, written in one transaction:
# a content repeated in it costs a back-reference, its first appearance in each pack its
# reference in full. Packs are never merged.
PACK_EVENTS = 1000
PACK_BYTES = 8 * 1024 * 1024  # uncompressed lines per pack
DICT_BYTES = 4 * 1024 * 1024  # xz's dictionary: the decoder's memory (the encoder's ~12x)
XZ_PRESET = 6
# Settled events before the ingester packs. Until they are packed, the raw payloads a hook
# journaled leave their pages sparse (a row shrinks to a reference, the page stays), so the
# rows not packed yet cost about their raw size.
PACK_MIN = 64
COLUMNS = ("id", "received_at", "hook_event_name", "session_id", "tool_name", "tool_use_id",
           "cwd", "project", "payload", "bytes", "state", "error", "processed_at")
PAYLOAD = COLUMNS.index("payload")
RAW, REF = 0, 1  # a pack line's payload: the journaled text, or a reference event (dict)
# Columns the ingester fills from the payload: a pack line leaves them out when they agree.
_DERIVED = ("hook_event_name", "session_id", "tool_name", "tool_use_id", "cwd")
_KEPT = ("id", "received_at", "project", "bytes", "state", "error", "processed_at")
_XZ_MAGIC = b"\xfd7zXZ\x00"
# Packs keep tool_use ids whole. Packs written by earlier versions hold 48 bits of the id's
# SHA-256 instead (`#` and 8 base64url characters), in the column and in the payload: the
# transcript import compares ids in that form (tool_use_digest), which fits both.
DIGEST_PREFIX, _DIGEST_CHARS = "#", 9


def tool_use_digest(tool_use_id: str) -> str:
    """`#` and 8 base64url characters (48 bits of the id's SHA-256); a digest stays itself.
    The form in which ids are compared with the ones older packs hold."""
    if tool_use_id.startswith(DIGEST_PREFIX) and len(tool_use_id) == _DIGEST_CHARS:
        return tool_use_id
    digest = hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).digest()[:6]
    return DIGEST_PREFIX + base64.urlsafe_b64encode(digest).decode("ascii")


# ----------------------------------------------------------------------------- packs

def _derived_source(payload):
    """The event a payload holds: a reference dict as it is, small JSON text parsed."""
    if isinstance(payload, str) and payload.startswith("{") and len(payload) < 65536:
        try:
            return json.loads(payload)
        except (ValueError, RecursionError):
            return None
    return payload


def _derived(payload) -> list:
    """The columns the ingester fills from a payload (a reference dict, or small JSON text)."""
    event = _derived_source(payload)
    if not isinstance(event, dict):
        return [None] * len(_DERIVED)
    return [event.get(k) if isinstance(event.get(k), str) else None for k in _DERIVED]


def ms_time(t):  # a time as packs keep it (and the ingester reads every event's)
    return round(t, 3) if isinstance(t, float) else t


def _line(row, conn, now: float) -> tuple[str, str | None]:
    """One pack line for an events row (its long strings moved to the blobs; times kept to
    the millisecond; the columns the payload gives left out), and its session."""
    values = dict(zip(COLUMNS, row, strict=True))
    payload = values["payload"]
    kind = RAW
    if isinstance(payload, bytes):
        try:
            payload, kind = decode_ref(payload), REF
        except (zlib.error, ValueError, UnicodeDecodeError, RecursionError):
            payload = None  # unreadable: nothing to keep
    elif isinstance(payload, str):
        # Not compacted when it was ingested (an lc-cache-write, a failed event): now.
        split = compact_text(payload)
        if split is not None:
            ref, blobs = split
            store_blobs(conn, blobs, now)
            link_documents(conn, blobs.keys(), values["id"])
            payload, kind = decode_ref(ref), REF
    cols = [values[k] for k in _DERIVED]
    line = [values[k] if k not in ("received_at", "processed_at") else ms_time(values[k]) for k in _KEPT]
    line += [kind, payload, 0 if cols == _derived(payload) else cols]
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")), values["session_id"]


def _unline(line: str) -> tuple[list, int]:
    kept = json.loads(line)
    kind, payload, cols = kept[len(_KEPT):]
    values = dict(zip(_KEPT, kept[:len(_KEPT)], strict=True))
    values.update(zip(_DERIVED, _derived(payload) if cols == 0 else cols, strict=True))
    values["payload"] = payload
    return [values[k] for k in COLUMNS], kind


def _compress(data: bytes) -> bytes:
    """xz at one preset (~2.5x smaller than zlib on packs)."""
    return lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32,
                         filters=[{"id": lzma.FILTER_LZMA2, "preset": XZ_PRESET, "dict_size": DICT_BYTES}])


def _decompress(data: bytes) -> bytes:
    if data.startswith(_XZ_MAGIC):
        return lzma.decompress(data, format=lzma.FORMAT_XZ)
    return zlib.decompress(data)  # a pack written where Python lacked lzma


def pack_limit(conn) -> int | None:
    """Events below this id may be packed: all are settled, and the highest row stays."""
    top = conn.execute("SELECT max(id) FROM events").fetchone()[0]
    if top is None:
        return None
    pending = conn.execute("SELECT min(id) FROM events WHERE state = 'pending'").fetchone()[0]
    return top if pending is None else min(top, pending)


def pack_settled(conn, *, upto: int | None = None, min_events: int = PACK_MIN,
                 now: float | None = None) -> int:
    """Move settled events into packs, one transaction per pack (at most `upto`, and only
    when at least `min_events` wait). Returns how many events were packed."""
    now = time.time() if now is None else now
    limit = pack_limit(conn)
    if limit is None:
        return 0
    if upto is not None:
        limit = min(limit, upto + 1)
    waiting = conn.execute("SELECT count(*) FROM events WHERE id < ?", (limit,)).fetchone()[0]
    if waiting == 0 or waiting < min_events:
        return 0
    cols = ", ".join(COLUMNS)
    packed = 0
    while True:
        with transaction(conn):
            limit = pack_limit(conn)  # again, under the write lock
            if limit is None:
                return packed
            if upto is not None:
                limit = min(limit, upto + 1)
            rows = conn.execute(f"SELECT {cols} FROM events WHERE id < ? ORDER BY id LIMIT ?",
                                (limit, PACK_EVENTS)).fetchall()
            if not rows:
                return packed
            lines: list[str] = []
            sessions: set = set()
            tally: dict = {}
            size = 0
            for row in rows:
                text, session = _line(row, conn, now)
                lines.append(text)
                if session is not None:
                    sessions.add(session)
                size += len(text)
                key = (row[COLUMNS.index("project")], row[COLUMNS.index("state")],
                       row[COLUMNS.index("error")])
                n, oldest = tally.get(key, (0, row[1]))
                tally[key] = (n + 1, min(oldest, row[1]))
                if size >= PACK_BYTES:
                    break
            first, last = rows[0][0], rows[len(lines) - 1][0]
            data = _compress("\n".join(lines).encode("utf-8", "surrogatepass"))
            pack = conn.execute(
                "INSERT INTO event_packs (first_id, last_id, events, pending, data, packed_at)"
                " VALUES (?, ?, ?, 0, ?, ?)", (first, last, len(lines), data, now)).lastrowid
            conn.executemany("INSERT OR IGNORE INTO pack_sessions (session_id, pack) VALUES (?, ?)",
                             [(s, pack) for s in sessions])
            conn.executemany(
                "INSERT INTO pack_tally (pack, project, state, error, n, oldest) VALUES (?, ?, ?, ?, ?, ?)",
                [(pack, p, s, e, n, o) for (p, s, e), (n, o) in tally.items()])
            conn.execute("DELETE FROM events WHERE id >= ? AND id <= ?", (first, last))
            packed += len(lines)


def pack_lines(data: bytes):
    """The events of one pack: (column values, payload kind) in id order."""
    for line in _decompress(data).decode("utf-8", "surrogatepass").split("\n"):
        if line:
            yield _unline(line)


def _requeued(values: list, kind: int) -> bool:
    """Whether a reindex projects this event again (journal.requeue_derived's rule)."""
    state = values[COLUMNS.index("state")]
    if state in ("done", "skipped"):
        return True
    payload = values[PAYLOAD]
    return state == "failed" and not (kind == RAW and isinstance(payload, str)
                                      and payload.startswith(STUB_PREFIX))


def drop_pack(conn, pack: int) -> None:
    conn.execute("DELETE FROM event_packs WHERE id = ?", (pack,))
    conn.execute("DELETE FROM pack_sessions WHERE pack = ?", (pack,))
    conn.execute("DELETE FROM pack_tally WHERE pack = ?", (pack,))


def unpack(conn, pack: int, *, requeue: bool) -> int:
    """Put one pack's events back into `events` (inside the caller's transaction), the
    references as BLOB payloads; with `requeue`, the ones a reindex projects again are
    `pending`. Returns how many rows came back."""
    row = conn.execute("SELECT data FROM event_packs WHERE id = ?", (pack,)).fetchone()
    if row is None:
        return 0
    rows = []
    for values, kind in pack_lines(row[0]):
        again = requeue and _requeued(values, kind)
        if kind == REF:
            values[PAYLOAD] = encode_ref(values[PAYLOAD])
        elif values[PAYLOAD] is None:
            values[PAYLOAD] = "{}"
        if again:
            values[COLUMNS.index("state")] = "pending"
            values[COLUMNS.index("error")] = None
            values[COLUMNS.index("processed_at")] = None
        rows.append(values)
    conn.executemany(f"INSERT OR IGNORE INTO events ({', '.join(COLUMNS)})"
                     f" VALUES ({', '.join('?' * len(COLUMNS))})", rows)
    drop_pack(conn, pack)
    return len(rows)


def take_pending_pack(conn) -> int | None:
    """Unpack the first pending pack (and any pending one overlapping it) into `events` as
    pending rows. Returns the highest id they cover, or None when no pack is pending."""
    with transaction(conn):
        row = conn.execute("SELECT id, first_id, last_id FROM event_packs WHERE pending = 1"
                           " ORDER BY first_id LIMIT 1").fetchone()
        if row is None:
            return None
        top = row[2]
        unpack(conn, row[0], requeue=True)
        for pack, last in conn.execute("SELECT id, last_id FROM event_packs WHERE pending = 1"
                                       " AND first_id <= ? ORDER BY first_id", (top,)).fetchall():
            unpack(conn, pack, requeue=True)
            top = max(top, last)
        return top


def pending_packs(conn) -> bool:
    return conn.execute("SELECT 1 FROM event_packs WHERE pending = 1 LIMIT 1").fetchone() is not None


def session_tool_use_ids(conn, session_id: str) -> set:
    """The tool_use ids a session's packed events hold, as tool_use_digest (older packs
    keep only that form). A
    pack is read once for all its sessions (the import asks session by session, and a pack
    holds thousands of events): the last _SESSION_CACHE packs read are kept."""
    out: set = set()
    files = tuple(r[2] for r in conn.execute("PRAGMA database_list"))
    for row in conn.execute(
            "SELECT p.id, p.first_id, p.last_id, p.packed_at, length(p.data) FROM pack_sessions s"
            " JOIN event_packs p ON p.id = s.pack WHERE s.session_id = ?", (session_id,)).fetchall():
        key = (files, *row)
        by_session = _session_cache.pop(key, None)
        if by_session is None:
            data = conn.execute("SELECT data FROM event_packs WHERE id = ?", (row[0],)).fetchone()
            by_session = _ids_by_session(data[0]) if data else {}
        _session_cache[key] = by_session  # (re)inserted last: the most recent
        while len(_session_cache) > _SESSION_CACHE:
            del _session_cache[next(iter(_session_cache))]
        out |= by_session.get(session_id, set())
    return out


def tool_use_ids(conn, session_id: str) -> set:
    """The tool_use ids journaled for one session, whatever their state, as digests (the
    form packs written by earlier versions keep: tool_use_digest). Used to import a transcript's tool
    calls once, and not the ones a live hook already journaled."""
    return {tool_use_digest(r[0]) for r in conn.execute(
        "SELECT tool_use_id FROM events WHERE session_id = ? AND tool_use_id IS NOT NULL",
        (session_id,)) if isinstance(r[0], str)} | session_tool_use_ids(conn, session_id)


_SESSION_CACHE = 8
_session_cache: dict = {}  # (files, pack id, first, last, packed_at, bytes) -> {session: digests}


def _ids_by_session(data: bytes) -> dict:
    sid, tid = COLUMNS.index("session_id"), COLUMNS.index("tool_use_id")
    out: dict = {}
    for values, _kind in pack_lines(data):
        if isinstance(values[tid], str):
            out.setdefault(values[sid], set()).add(tool_use_digest(values[tid]))
    return out


def rewrite_packs(conn, keep, *, now: float | None = None) -> int:
    """Drop the packed events for which `keep(values: dict) -> bool` is false (inside the
    caller's transaction): each pack holding one is put back into `events` (its bodies
    restored), the row deleted, and packed again later. For `forget` and the like.
    Returns how many events were dropped."""
    dropped = 0
    for pack, data in conn.execute("SELECT id, data FROM event_packs").fetchall():
        gone = [values[0] for values, _ in pack_lines(data)
                if not keep(dict(zip(COLUMNS, values, strict=True)))]
        if not gone:
            continue
        pending = conn.execute("SELECT pending FROM event_packs WHERE id = ?", (pack,)).fetchone()[0]
        unpack(conn, pack, requeue=bool(pending))  # a pack awaiting a reindex stays awaited
        for i in range(0, len(gone), 500):
            part = gone[i:i + 500]
            conn.execute(f"DELETE FROM events WHERE id IN ({','.join('?' * len(part))})", part)
        dropped += len(gone)
    return dropped
