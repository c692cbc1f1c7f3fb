"""What the capture hooks do with a payload (standard library only: the capture path runs
under `python -I -S`): journal it first (nothing is lost), spool it when the journal is
unusable, start a detached ingester when there is work for one. The processes themselves
(stdin, the answer on stdout, the exit code) are memhooks.entry.post_tool_use and
memhooks.entry.session_start.
"""

import sqlite3

from memhooks.capture.payload import metadata_only, prepare, tool_name_of
from memhooks.config import project_dir
from memhooks.detach import spawn_ingest as _spawn
from memhooks.log import log_error, log_exception
from memhooks.store import health
from memhooks.store.connect import closing, connect_journal
from memhooks.store.journal import METADATA_ONLY, TOOL_HOOKS, append, spool, spool_waiting
from memhooks.store.queries import has_pending
from memhooks.store.reads import Taken


def _journal(db: str, raw: bytes, total: int, hook_event_name: str, whole: bool = False) -> int | None:
    """Journal one payload; spool it if the journal is unusable. Returns the event id (None
    when spooled). A call of a tool memhooks does not capture is journaled as metadata only;
    `whole`: the caller has found the call captured by what it does (a Bash command that is
    a Context7 CLI lookup), whatever its tool's name says."""
    state: str | None = None
    error: str | None
    tool = tool_name_of(raw) if hook_event_name in TOOL_HOOKS else None
    meta = None if whole else metadata_only(raw, total, hook_event_name, tool)
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


def journal(db: str, raw: bytes, total: int, hook_event_name: str, whole: bool = False) -> int | None:
    """Journal one hook payload as read (`total`: its size before the cap). The event id, or
    None when it was spooled. `whole`: journal its content even though its tool's name is
    not a captured one (see `_journal`)."""
    return _journal(db, raw, total, hook_event_name, whole)


def other_work(db: str, event_id: int | None) -> bool:
    """Whether an ingester has anything to do beyond SessionStart events (this one and
    earlier ones add no answer and wait for the next ingest): other pending events, a reads
    log to fold, spooled events. A session that answered from tier1 then starts no process."""
    if event_id is None or Taken(db).pending() or spool_waiting(db):
        return True
    try:
        with closing(connect_journal(db)) as conn:
            return has_pending(conn, besides=event_id, answers_only=True)
    except sqlite3.Error:  # when in doubt, ingest
        return True


def spawn_ingest(db: str) -> bool:
    """Start a detached ingester unless one is already running (memhooks.detach). Never raises."""
    return _spawn(db)
