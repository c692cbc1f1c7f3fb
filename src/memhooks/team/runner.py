"""Running a team operation: the URL, the connection, back-off bookkeeping in the local
store, and the detached background process (`spawn`, standard library only)."""

from __future__ import annotations

import fcntl
import os
import sys
import threading
import time

from memhooks.config import _env_num, db_path, project_dir
from memhooks.log import log_exception
from memhooks.store.connect import closing, transaction
from memhooks.store.connect import connect as connect_store
from memhooks.store.team_local import (
    backoff_until,
    del_state,
    get_mark,
    get_state,
    has_unpushed,
    libraries_after,
    pending_forgets,
    record_failure,
    record_success,
    set_state,
    tier1_after,
)
from memhooks.team.pull import pull
from memhooks.team.push import push
from memhooks.team.settings import configured, team_url
from memhooks.team.store import TeamError, classify, connect, ensure_schema

OPS = ("push", "pull")


def blocked(conn, op: str, now: float | None = None) -> tuple[float, str] | None:
    return backoff_until(conn, op, now)


def fail(conn, op: str, err) -> None:
    """Remember a failure: an unreachable or slow server backs off both push and pull; a
    read-only one only push."""
    ops = ("push", "pull") if err.blocks_pull else (op,)
    with transaction(conn):
        record_failure(conn, ops, f"{err.kind}: {err}")


def succeed(conn, op: str, summary: dict) -> None:
    with transaction(conn):
        record_success(conn, op, summary)
        if op == "push":
            # Reaching the server clears an unreachable back-off for pulls too.
            row = get_state(conn, "backoff.pull")
            if row and row["value"] and row["value"].startswith(("unreachable", "slow")):
                del_state(conn, "backoff.pull")


def open_team(url: str):
    """A connection with the schema in place."""
    pg = connect(url)
    try:
        ensure_schema(pg)
    except BaseException:
        pg.close()
        raise
    return pg


def run(op: str, conn, fn, *, url: str | None = None, respect_backoff: bool = True, **kwargs) -> dict:
    """Run `fn(conn, pg, **kwargs)` for `op`; failures are classified, recorded (back-off)
    and re-raised as TeamError. Returns fn's summary dict."""
    url = url or team_url()
    if not url:
        raise TeamError("not-configured", "no team store configured (MEMHOOKS_TEAM_URL or `memhooks team connect URL`)")
    if respect_backoff:
        hold = blocked(conn, op)
        if hold:
            raise TeamError("backing-off", f"backing off until {time.strftime('%H:%M:%S', time.localtime(hold[0]))} after: {hold[1]}")
    try:
        pg = open_team(url)
        try:
            summary = fn(conn, pg, **kwargs)
        finally:
            try:
                pg.close()
            except Exception:  # noqa: BLE001 - closing a broken connection can raise any driver error; the result stands
                pass
    except Exception as exc:  # noqa: BLE001 - every failure (driver, network, schema) becomes a classified TeamError
        err = classify(exc, url)
        if err.kind not in ("not-configured",):
            try:
                fail(conn, op, err)
            except Exception:  # noqa: BLE001 - recording the back-off is best effort; the classified error is raised
                pass
        raise err from None
    succeed(conn, op, summary)
    return summary


# ----------------------------------------------------------------------------- background

HARD_DEADLINE_S = 120.0  # a background run that has not finished by then exits


def spawn(op: str, db: str, project: str | None = None) -> bool:
    """Start a detached `push` or `pull` (stdio to /dev/null, new session). Standard library
    only; never raises; does nothing when no team store is configured or it is backing off."""
    try:
        if os.environ.get("MEMHOOKS_NO_SPAWN", "") == "1" or not configured(db):
            return False
        python = os.environ.get("MEMHOOKS_PYTHON", "").strip() or sys.executable
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        code = (f"import sys; sys.path.insert(0, {src!r}); from memhooks.team.runner import background;"
                " sys.exit(background(sys.argv[1:]))")
        env = dict(os.environ, MEMHOOKS_DB=db)
        if project:
            env["CLAUDE_PROJECT_DIR"] = project
        null = os.devnull
        os.posix_spawn(python, [python, "-c", code, op], env,
                       file_actions=[(os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0)],
                       setsid=True)
        return True
    except Exception:  # noqa: BLE001 - spawn never raises (a hook calls it); logged
        log_exception(f"spawn team {op}")
        return False


def _watchdog(seconds: float) -> None:
    def die():
        os._exit(0)

    timer = threading.Timer(seconds, die)
    timer.daemon = True
    timer.start()


def background(args: list[str]) -> int:
    """The detached process: `push` or `pull` (for CLAUDE_PROJECT_DIR), once, quietly."""
    op = args[0] if args else ""
    try:
        _watchdog(HARD_DEADLINE_S)
        if op == "push":
            return background_push()
        if op == "pull":
            with closing(connect_store(db_path())) as conn:
                if blocked(conn, "pull"):
                    return 0
                run("pull", conn, pull, project=project_dir())
    except BaseException as exc:  # noqa: BLE001 - a background run is silent; failures are in the store
        if not isinstance(exc, TeamError):
            log_exception(f"team {op}")
    return 0


def after_ingest(db: str, background: bool) -> None:
    """Called by the ingester. A detached ingester pushes itself; one a reader is waiting
    for (lc-cache-lookup on pending events) hands the push to a detached process."""
    if not configured(db):
        return
    if background:
        _watchdog(HARD_DEADLINE_S)  # ingestion is done: a server that hangs cannot keep us
        background_push(db)
        maybe_pull(db)
    else:
        spawn("push", db)


PULL_INTERVAL_S = 3600.0


def maybe_pull(db: str) -> None:
    """A session whose lockfiles never change never warms, so never pulls: the detached
    ingester pulls for its project (CLAUDE_PROJECT_DIR) when that project has not pulled for
    MEMHOOKS_TEAM_PULL_INTERVAL_S (default an hour). Never raises."""
    try:
        project = os.environ.get("CLAUDE_PROJECT_DIR", "").strip() and project_dir()
        if not project or not os.path.isdir(project):
            return
        key = f"pull.at:{project}"
        with closing(connect_store(db)) as conn:
            row = get_state(conn, key)
            if (row and row["until"] and time.time() - row["until"] < _env_num("MEMHOOKS_TEAM_PULL_INTERVAL_S", PULL_INTERVAL_S)) \
                    or blocked(conn, "pull"):
                return
            with transaction(conn):
                set_state(conn, key, None, until=time.time())  # one attempt per interval, even a failed one
            run("pull", conn, pull, project=project)
    except BaseException as exc:  # noqa: BLE001 - a background run never raises; logged
        if not isinstance(exc, TeamError):
            log_exception("team pull")


def background_push(db: str | None = None) -> int:
    """Push after an ingest, when configured and not backing off; one pusher at a time
    (others leave: the running one looks again before it exits). Never raises."""
    try:
        db = db or db_path()
        if not configured(db):
            return 0
        fd = os.open(db + ".team.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return 0
            with closing(connect_store(db)) as conn:
                if blocked(conn, "push") or not (has_unpushed(conn) or pending_forgets(conn)
                                                 or _other_work(conn)):
                    return 0
                run("push", conn, push)
        finally:
            os.close(fd)
    except BaseException as exc:  # noqa: BLE001 - a background run never raises; logged
        if not isinstance(exc, TeamError):
            log_exception("team push")
    return 0


def _other_work(conn) -> bool:
    return bool(libraries_after(conn, get_mark(conn, "push.libraries"), 1)
                or tier1_after(conn, get_mark(conn, "push.tier1"), 1))
