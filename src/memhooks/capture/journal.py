"""The events journal: raw hook payloads, appended first (standard library only).

Nothing a hook receives is lost: a payload is redacted and journaled as raw
text; one over the size cap becomes a stub marked failed; when the store
cannot be written (locked past the busy timeout, read-only, corrupt) the
payload is spooled to a file beside the DB and journaled by the next ingest.
"""

from __future__ import annotations

import os
import time

from memhooks.config import MAX_EVENT_BYTES, STUB_HEAD_BYTES
from memhooks.redact import redact_bytes

SPOOL_DIR = "spool"


def read_capped(stream, cap: int = MAX_EVENT_BYTES) -> tuple[bytes, int]:
    """Read up to `cap` bytes; drain and count the rest. Returns (data, total)."""
    data = stream.read(cap + 1)
    if data is None:
        return b"", 0
    total = len(data)
    if total <= cap:
        return data, total
    while True:
        chunk = stream.read(1024 * 1024)
        if not chunk:
            break
        total += len(chunk)
    return data[:cap], total


def _as_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def prepare(raw: bytes, total: int) -> tuple[str, str | None]:
    """(payload text, error) for a raw payload: redacted, or a stub when too big."""
    if total > MAX_EVENT_BYTES:
        import json

        head = _as_text(redact_bytes(raw[:STUB_HEAD_BYTES]))
        stub = json.dumps({"memhooks_stub": True, "bytes": total, "head": head})
        return stub, f"payload of {total} bytes is over the {MAX_EVENT_BYTES} byte cap"
    return _as_text(redact_bytes(raw)), None


def append(conn, payload: str, *, size: int, project: str | None, error: str | None = None,
           hook_event_name: str | None = None, received_at: float | None = None) -> int:
    """Insert one event (autocommit). A payload with an error is journaled as failed."""
    cur = conn.execute(
        "INSERT INTO events (received_at, hook_event_name, project, payload, bytes, state, error)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            received_at if received_at is not None else time.time(),
            hook_event_name,
            project or None,
            payload,
            size,
            "failed" if error else "pending",
            error,
        ),
    )
    return cur.lastrowid


def spool_dir(db: str) -> str:
    return os.path.join(os.path.dirname(db), SPOOL_DIR)


def spool(db: str, payload: str, *, size: int, project: str | None, error: str | None,
          hook_event_name: str | None) -> str | None:
    """Write an event that could not be journaled to a spool file. Never raises."""
    try:
        import json

        folder = spool_dir(db)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        name = f"{time.time_ns():020d}-{os.getpid()}.json"
        tmp = os.path.join(folder, "." + name)
        record = {
            "received_at": time.time(), "project": project, "size": size,
            "error": error, "hook_event_name": hook_event_name, "payload": payload,
        }
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
        final = os.path.join(folder, name)
        os.replace(tmp, final)
        return final
    except Exception:  # noqa: BLE001
        return None


def drain_spool(conn, db: str) -> int:
    """Journal spooled events (oldest first) and delete their files."""
    folder = spool_dir(db)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith("."))
    except OSError:
        return 0
    import json

    moved = 0
    for name in names:
        path = os.path.join(folder, name)
        try:
            with open(path, encoding="utf-8") as fh:
                rec = json.load(fh)
            payload = rec.get("payload")
            if not isinstance(payload, str):
                raise ValueError("spool file without payload")
        except (OSError, ValueError) as exc:
            payload, rec = f'{{"memhooks_spool_error": {json.dumps(str(exc))}}}', {
                "error": f"unreadable spool file {name}: {exc}"}
        conn.execute("BEGIN IMMEDIATE")
        try:
            append(conn, payload, size=int(rec.get("size") or len(payload)),
                   project=rec.get("project"), error=rec.get("error"),
                   hook_event_name=rec.get("hook_event_name"), received_at=rec.get("received_at"))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            os.unlink(path)
        except OSError:
            pass
        moved += 1
    return moved


def tool_use_ids(conn, session_id: str) -> set:
    """The tool_use ids journaled for one session, whatever their state (ingestion fills
    the session and tool_use columns from the payload). Used to import a transcript's
    tool calls once, and not the ones a live hook already journaled."""
    return {r[0] for r in conn.execute(
        "SELECT tool_use_id FROM events WHERE session_id = ? AND tool_use_id IS NOT NULL",
        (session_id,))}
