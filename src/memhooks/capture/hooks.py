"""What the capture hooks do with a payload (standard library only: the capture path runs
under `python -I -S`): journal it first (nothing is lost), spool it when the journal is
unusable, start a detached ingester when there is work for one. The processes themselves
(stdin, the answer on stdout, the exit code) are memhooks.entry.post_tool_use and
memhooks.entry.session_start.
"""

import sqlite3

from memhooks.capture.payload import prepare
from memhooks.config import project_dir
from memhooks.detach import spawn_ingest as _spawn
from memhooks.log import log_error, log_exception
from memhooks.store import health
from memhooks.store.connect import connect_journal
from memhooks.store.journal import METADATA_ONLY, append, spool


def journal(db: str, raw: bytes, total: int, hook_event_name: str, tool: str | None = None,
            meta: str | None = None, then=None) -> int | None:
    """Journal one hook payload as read (`total`: its size before the cap); spool it if the
    journal is unusable. Returns the event id (None when spooled). `tool`: the tool call's
    name; `meta`: for a tool memhooks does not capture, the metadata journaled instead of
    the payload (memhooks.capture.tool_calls). `then(conn, event_id)`: a read on the same
    connection once the event is in (SessionStart asks what else is pending), so the
    journal is opened once; a SQLite error it meets is its own, never a reason to spool."""
    state: str | None = None
    error: str | None
    if meta is not None:
        payload, error, state = meta, METADATA_ONLY, "skipped"
    else:
        payload, error = prepare(raw, total)
    if not raw.strip() and error is None:
        error = "empty payload"
    project = project_dir()
    try:
        for attempt in (1, 2):
            conn = connect_journal(db)
            try:
                event_id = append(conn, payload, size=total, project=project, error=error,
                                  hook_event_name=hook_event_name, state=state, tool_name=tool)
            except sqlite3.DatabaseError as exc:
                conn.close()
                # Damaged pages met by the insert itself: move the journal aside, once.
                if attempt == 2 or not health.is_corruption(exc) or not health.heal_journal(db):
                    raise
                continue
            if then is not None:
                try:
                    then(conn, event_id)
                except sqlite3.Error:
                    pass  # the event is in: what `then` asked stays unanswered
            conn.close()  # the last connection's close checkpoints the WAL and removes it
            return event_id
        return None
    except Exception:  # noqa: BLE001 - locked/corrupt/read-only/full journal: the event is spooled
        log_exception(f"{hook_event_name}: journal failed, spooling")
        where = spool(db, payload, size=total, project=project, error=error,
                      hook_event_name=hook_event_name, state=state)
        if where is None:
            log_error(f"{hook_event_name}: no spool folder is writable; event of {total} bytes lost")
        return None


def spawn_ingest(db: str) -> bool:
    """Start a detached ingester unless one is already running (memhooks.detach). Never raises."""
    return _spawn(db)
