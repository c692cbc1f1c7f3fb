"""Hook entry points (standard library only on the capture path).

`post_tool_use`: journal the raw payload, start a detached ingester, print
nothing. `session_start`: journal, warm the cache, print one JSON object.
Both exit 0 on anything; errors go to memhooks.log beside the DB.
"""

from __future__ import annotations

import os
import sys

ENTRY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_entry.py")


def _journal_stdin(hook_event_name: str) -> tuple[str, int | None]:
    """Read stdin and journal it; spool it if the store is unusable. Returns (db, id)."""
    from memhooks.config import db_path, project_dir
    from memhooks.capture.journal import prepare, read_capped

    db = db_path()
    raw, total = read_capped(sys.stdin.buffer)
    payload, error = prepare(raw, total)
    if not raw.strip() and error is None:
        error = "empty payload"
    project = project_dir()
    try:
        from memhooks.capture.journal import append
        from memhooks.store.connect import connect

        conn = connect(db)
        try:
            event_id = append(conn, payload, size=total, project=project, error=error,
                              hook_event_name=hook_event_name)
        finally:
            conn.close()
        return db, event_id
    except Exception:  # noqa: BLE001 - locked/corrupt/read-only store: spool it
        from memhooks.capture.journal import spool
        from memhooks.log import log_exception

        log_exception(f"{hook_event_name}: journal failed, spooling")
        spool(db, payload, size=total, project=project, error=error,
              hook_event_name=hook_event_name)
        return db, None


def spawn_ingest(db: str) -> bool:
    """Start a detached ingester unless one is already running. Never raises."""
    if os.environ.get("MEMHOOKS_NO_SPAWN", "") == "1":
        return False
    try:
        import fcntl

        lock = db + ".ingest.lock"
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a running ingester re-checks for pending events before it exits
        finally:
            os.close(fd)
        python = os.environ.get("MEMHOOKS_PYTHON", "").strip() or sys.executable
        env = dict(os.environ)
        env["MEMHOOKS_DB"] = db
        null = os.devnull
        os.posix_spawn(
            python,
            [python, ENTRY, "ingest", "--background"],
            env,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
            ],
            setsid=True,
        )
        return True
    except Exception:  # noqa: BLE001
        from memhooks.log import log_exception

        log_exception("spawn ingest")
        return False


def post_tool_use() -> int:
    try:
        db, _ = _journal_stdin("PostToolUse")
        spawn_ingest(db)
    except BaseException:  # noqa: BLE001 - a hook never breaks the session
        try:
            from memhooks.log import log_exception

            log_exception("post-tool-use")
        except BaseException:  # noqa: BLE001
            pass
    return 0


def session_start() -> int:
    out = None
    try:
        db, _ = _journal_stdin("SessionStart")
        from memhooks.config import project_dir
        from memhooks.warm.fastpath import session_start_output

        out = session_start_output(db, project_dir())
        spawn_ingest(db)
    except BaseException:  # noqa: BLE001
        try:
            from memhooks.log import log_exception

            log_exception("session-start")
        except BaseException:  # noqa: BLE001
            pass
    if out:
        try:
            sys.stdout.write(out)
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001
            pass
    return 0
