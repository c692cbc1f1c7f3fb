"""Journal compaction (standard library only): the journal stays the source of truth, but a
repeat is not kept whole and settled events are kept compressed.

Both steps are lossless: a payload comes back as the same JSON value (not the same bytes).
- References. When the ingester settles an event (done or skipped), every string of
  BLOB_MIN characters or more in its payload (a docs body, a fetched page, a search result)
  is stored once in `blobs` (zlib), keyed by its SHA-256, and the payload is stored back as
  a reference: the event with `{"memhooks_blob": "<sha256>"}` in each such place, as a
  BLOB (zlib of its JSON; a hook only ever journals text, so that storage class marks a
  payload as ours). So the first event of a content keeps it, and a repeat is a small row:
  time, session, tool, tool_input, tool_use_id and the hashes. `blob_docs` says which documents each blob gave (by content_hash), so a pruned
  or forgotten document's raw body can go too; the references to it stay, and project
  nothing any more (`skipped`, PRUNED).
- Packs. Settled events below the first pending one are moved out of `events` into
  `event_packs`: up to 1,000 rows as JSON lines, xz-compressed together at one preset (a
  repeat then costs tens of bytes); packs are never merged. The row with the highest id stays in `events` (new ids
  continue after it). `pack_sessions` lists each pack's sessions (the transcript import
  asks which tool calls a session journaled) and `pack_tally` counts its events by
  project, state and reason (the stats).

`memhooks reindex` (and a heal after damage) sets every pack `pending`: the next ingest
puts one pending pack at a time back into `events`, projects those events like any other
(their bodies read back from the blobs) and packs them again, so a reindex never holds more
than one pack's rows unpacked.

Only this module reads or writes the journal's compacted forms.
"""

from __future__ import annotations

import hashlib
import json
import zlib

BLOB_MIN = 1024  # characters: shorter strings stay in the payload
MARK = "memhooks_blob"
PRUNED = "content pruned from the journal"
STUB_PREFIX = '{"memhooks_stub": true'


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def split_blobs(event) -> tuple[object, dict] | None:
    """(the event with every long string replaced by a reference, {sha256: text}); None
    when it has no long string, or holds a key of ours already (then it is kept whole)."""
    found: dict = {}

    def walk(value):
        if isinstance(value, str):
            if len(value) < BLOB_MIN:
                return value
            digest = _sha(value)
            found[digest] = value
            return {MARK: digest}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            if MARK in value:
                raise ValueError("a payload with our marker key")
            return {k: walk(v) for k, v in value.items()}
        return value

    try:
        out = walk(event)
    except (ValueError, RecursionError):
        return None
    return (out, found) if found else None


def blob_refs(value, out: set) -> None:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if len(v) == 1 and isinstance(v.get(MARK), str):
                out.add(v[MARK])
            else:
                stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def _restore(value, texts: dict):
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get(MARK), str):
            return texts[value[MARK]]
        return {k: _restore(v, texts) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v, texts) for v in value]
    return value


def store_blobs(conn, blobs: dict, now: float) -> None:
    """Keep each text once (zlib), inside the caller's transaction."""
    for digest, text in blobs.items():
        if conn.execute("SELECT 1 FROM blobs WHERE sha256 = ?", (digest,)).fetchone():
            continue
        data = text.encode("utf-8", "surrogatepass")
        conn.execute("INSERT OR IGNORE INTO blobs (sha256, data, bytes, created_at) VALUES (?, ?, ?, ?)",
                     (digest, zlib.compress(data, 6), len(data), now))


def blob_texts(conn, digests) -> dict:
    """{sha256: text} of the blobs still kept (a pruned one is missing)."""
    out = {}
    digests = list(digests)
    for i in range(0, len(digests), 500):
        part = digests[i:i + 500]
        for digest, data in conn.execute(
                f"SELECT sha256, data FROM blobs WHERE sha256 IN ({','.join('?' * len(part))})",
                part):
            out[digest] = zlib.decompress(data).decode("utf-8", "surrogatepass")
    return out


def link_documents(conn, digests, event_id: int) -> None:
    """Record which documents the blobs of one event gave (the event's captures)."""
    if not digests:
        return
    hashes = [r[0] for r in conn.execute(
        "SELECT DISTINCT d.content_hash FROM captures c JOIN documents d ON d.id = c.document_id"
        " WHERE c.event_id = ?", (event_id,))]
    if not hashes:
        return
    part = list(digests)
    ids = [r[0] for r in conn.execute(
        f"SELECT id FROM blobs WHERE sha256 IN ({','.join('?' * len(part))})", part)]
    conn.executemany("INSERT OR IGNORE INTO blob_docs (content_hash, blob) VALUES (?, ?)",
                     [(h, b) for h in hashes for b in ids])


# ----------------------------------------------------------------------------- reference payloads

def encode_ref(event) -> bytes:
    """A reference event as an `events.payload` BLOB (zlib of its JSON)."""
    text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 6)


def decode_ref(payload: bytes):
    return json.loads(zlib.decompress(payload).decode("utf-8", "surrogatepass"))


def expand(conn, payload: bytes) -> str | None:
    """The full payload text of a reference (an `events.payload` BLOB), its long strings back
    from the blobs; None when one of them was pruned (or the reference is unreadable)."""
    try:
        ref = decode_ref(payload)
    except (zlib.error, ValueError, UnicodeDecodeError, RecursionError):
        return None
    digests: set = set()
    blob_refs(ref, digests)
    texts = blob_texts(conn, digests)
    if len(texts) < len(digests):
        return None
    return json.dumps(_restore(ref, texts))


def compact_text(text: str) -> tuple[bytes, dict] | None:
    """(the reference payload, {sha256: text}) for a journaled payload with long strings;
    None when it has none (or is not a JSON object, or is a stub)."""
    if not text.startswith("{") or text.startswith(STUB_PREFIX):
        return None
    try:
        event = json.loads(text)
    except (ValueError, RecursionError):
        return None
    split = split_blobs(event) if isinstance(event, dict) else None
    if split is None:
        return None
    return encode_ref(split[0]), split[1]


# ----------------------------------------------------------------------------- bodies of gone documents

def drop_bodies(conn, content_hashes) -> int:
    """Forget the raw bodies that gave only documents now gone (pruned, forgotten): their
    blobs are deleted, the events referring to them stay as references (a reindex marks
    them skipped). Inside the caller's transaction. Returns the blobs deleted."""
    hashes = list(content_hashes)
    blobs: set = set()
    for i in range(0, len(hashes), 500):
        part = hashes[i:i + 500]
        marks = ",".join("?" * len(part))
        blobs |= {r[0] for r in conn.execute(
            f"SELECT blob FROM blob_docs WHERE content_hash IN ({marks})", part)}
        conn.execute(f"DELETE FROM blob_docs WHERE content_hash IN ({marks})", part)
    gone = 0
    for blob in blobs:
        still = conn.execute(
            "SELECT 1 FROM blob_docs b JOIN documents d ON d.content_hash = b.content_hash"
            " WHERE b.blob = ? LIMIT 1", (blob,)).fetchone()
        if still:
            continue
        conn.execute("DELETE FROM blob_docs WHERE blob = ?", (blob,))
        gone += conn.execute("DELETE FROM blobs WHERE id = ?", (blob,)).rowcount
    return gone


def orphan_blobs(conn, older_than: float | None = None) -> list[tuple[int, int]]:
    """(id, compressed bytes) of the blobs that gave no document still stored (the bodies
    of events that yielded none), oldest first."""
    sql = ("SELECT b.id, length(b.data) FROM blobs b WHERE NOT EXISTS (SELECT 1 FROM blob_docs x"
           " JOIN documents d ON d.content_hash = x.content_hash WHERE x.blob = b.id)")
    args: tuple = ()
    if older_than is not None:
        sql, args = sql + " AND b.created_at < ?", (older_than,)
    return conn.execute(sql + " ORDER BY b.created_at, b.id", args).fetchall()


def drop_blobs(conn, ids) -> int:
    n = 0
    for blob in ids:
        conn.execute("DELETE FROM blob_docs WHERE blob = ?", (blob,))
        n += conn.execute("DELETE FROM blobs WHERE id = ?", (blob,)).rowcount
    return n
