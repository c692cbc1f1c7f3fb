"""Hook entry points (standard library only on the capture path).

`post_tool_use`: journal the raw payload, start a detached ingester, and print nothing,
or, when the live call failed and the store has the answer, one JSON object giving the
model that answer (memhooks.recall.fallback). `session_start`: journal, warm the cache,
print one JSON object.
Both exit 0 on anything; errors go to memhooks.log beside the DB.
"""

import os
import sys


def _journal_stdin(hook_event_name: str) -> tuple[str | None, int | None, bytes]:
    """Read stdin and journal it; spool it if the journal is unusable. Returns (db, id, the
    payload as read when it was read whole, else b''); (None, None, b'') for a project
    excluded from capture, or while memhooks is paused (memhooks.gate): nothing is journaled."""
    # lazy: the capture hook runs under `python -I -S`; in this module each function imports
    # what it uses when it runs, so a hook loads only its own path's modules.
    from memhooks.capture.payload import read_capped
    from memhooks.config import db_path
    from memhooks.gate import blocked, hook_project

    raw, total = read_capped(sys.stdin.buffer)
    db = db_path()
    if blocked(db, hook_project(raw)):
        return None, None, b""
    return db, _journal(db, raw, total, hook_event_name), raw if total == len(raw) else b""


def _journal(db: str, raw: bytes, total: int, hook_event_name: str) -> int | None:
    """Journal one payload; spool it if the journal is unusable. Returns the event id (None
    when spooled). A call of a tool memhooks does not capture is journaled as metadata only."""
    # lazy: hot path (see _journal_stdin); health and the spool only when the journal fails
    from memhooks.capture.payload import metadata_only, prepare, tool_name_of
    from memhooks.config import project_dir
    from memhooks.store.journal import TOOL_HOOKS

    state: str | None = None
    error: str | None
    tool = tool_name_of(raw) if hook_event_name in TOOL_HOOKS else None
    meta = metadata_only(raw, total, hook_event_name, tool)
    if meta is not None:
        from memhooks.store.journal import METADATA_ONLY

        payload, error, state = meta, METADATA_ONLY, "skipped"
    else:
        payload, error = prepare(raw, total)
    if not raw.strip() and error is None:
        error = "empty payload"
    project = project_dir()
    try:
        from memhooks.store.connect import connect_journal
        from memhooks.store.journal import append

        for attempt in (1, 2):
            conn = connect_journal(db)
            try:
                event_id = append(conn, payload, size=total, project=project, error=error,
                                  hook_event_name=hook_event_name, state=state, tool_name=tool)
            except Exception as exc:
                conn.close()
                # Damaged pages met by the insert itself: move the journal aside, once.
                from memhooks.store import health

                if attempt == 2 or not health.is_corruption(exc) or not health.heal_journal(db):
                    raise
                continue
            _leave_open(conn)
            return event_id
        return None
    except Exception:  # noqa: BLE001 - locked/corrupt/read-only/full journal: spool it
        from memhooks.log import log_exception
        from memhooks.store.journal import spool

        log_exception(f"{hook_event_name}: journal failed, spooling")
        where = spool(db, payload, size=total, project=project, error=error,
                      hook_event_name=hook_event_name, state=state)
        if where is None:
            from memhooks.log import log_error

            log_error(f"{hook_event_name}: no spool folder is writable; event of {total} bytes lost")
        return None


_LEFT_OPEN: list = []


def _leave_open(conn) -> None:
    """Keep the journal connection of a hook that is about to end (memhooks._launch._leave
    exits without the interpreter's teardown). The event is committed; what closing would
    add is the last connection's WAL checkpoint: two fsyncs and the removal of the -wal and
    -shm files, which the next hook then creates again (two more fsyncs): ~4 ms of a ~20 ms
    hook. The ingester this hook starts checkpoints when it closes; a process that ends
    without closing is a case SQLite is built for (the WAL is the commit). When no ingester
    is started, _trim_journal keeps the WAL small instead."""
    _LEFT_OPEN.append(conn)


def _trim_journal(db: str) -> None:
    """No ingester was started (none needed, one running already, or MEMHOOKS_NO_SPAWN): a
    journal WAL past HOOK_WAL_BYTES is checkpointed and truncated by this hook (store.
    sqlite_file.trim_wal), or the hooks after it would each re-read it whole."""
    if not _LEFT_OPEN:
        return
    # lazy: hot path (-I -S): loaded already by the journal's open
    from memhooks.config import journal_path
    from memhooks.store.sqlite_file import trim_wal

    try:
        trim_wal(_LEFT_OPEN[-1], journal_path(db))
    except Exception:  # noqa: BLE001 - the event is committed; a later hook or the ingester trims
        pass


def _other_work(db: str, event_id: int | None) -> bool:
    """Whether an ingester has anything to do beyond SessionStart events (this one and
    earlier ones add no answer and wait for the next ingest): other pending events, a reads
    log to fold, spooled events. A session that answered from tier1 then starts no process."""
    # lazy: hot path (SessionStart); the reads log and queries load only here
    from memhooks.store.journal import spool_waiting
    from memhooks.store.reads import Taken

    if event_id is None or not _LEFT_OPEN or Taken(db).pending() or spool_waiting(db):
        return True
    from memhooks.store.queries import has_pending

    try:
        return has_pending(_LEFT_OPEN[-1], besides=event_id, answers_only=True)
    except Exception:  # noqa: BLE001 - when in doubt, ingest
        return True


def spawn_ingest(db: str) -> bool:
    """Start a detached ingester unless one is already running (memhooks.detach). Never raises."""
    # lazy: hot path (-I -S): the spawner loads only when an ingest is started
    from memhooks.detach import spawn_ingest as spawn

    return spawn(db)


def post_tool_use() -> int:
    """Journal the event (first: nothing is lost), start the ingester, then give a fallback
    answer when the live call failed and the store has one: one JSON object, or nothing."""
    # lazy: the fallback decision once the event is safe; the log only when something failed
    out = None
    try:
        db, _, raw = _journal_stdin("PostToolUse")
        if db is not None:
            if not spawn_ingest(db):
                _trim_journal(db)
            from memhooks.recall.fallback import fallback_output

            out = fallback_output(raw, db)
    except BaseException:  # noqa: BLE001 - a hook never breaks the session
        try:
            from memhooks.log import log_exception

            log_exception("post-tool-use")
        except BaseException:  # noqa: BLE001 - not even its log
            pass
    if out:
        try:
            sys.stdout.buffer.write(out.encode("utf-8", "replace"))  # whatever the locale
            sys.stdout.buffer.flush()
        except BaseException:  # noqa: BLE001 - stdout closed: the live answer stands
            pass
    return 0


def _ensure_python() -> str | None:
    """Plugin mode (the shim sets MEMHOOKS_BOOTSTRAP_STATE): find the interpreters in process
    and return the one-time notice for the user, if any. Children (the ingester, a warm) get
    the python with the dependencies through MEMHOOKS_PYTHON, or are not started yet."""
    state = os.environ.pop("MEMHOOKS_BOOTSTRAP_STATE", "")
    root = os.environ.pop("MEMHOOKS_BOOTSTRAP_ROOT", "")
    if not state or not root:
        return None
    # lazy: bootstrap only in plugin mode (the shim set the variables above)
    from memhooks import bootstrap

    root = os.path.abspath(root)
    full, status, message = bootstrap.ensure(state, root)
    if full:
        os.environ["MEMHOOKS_PYTHON"] = full
    else:
        os.environ["MEMHOOKS_NO_SPAWN"] = "1"  # no python with the dependencies yet
    offer = None
    try:
        offer = _import_offer(state, root, full, status)
    except Exception:  # noqa: BLE001 - an offer is never worth a failed hook
        pass
    return "\n".join(m for m in (message, offer) if m) or None


IMPORT_OFFER = "notice-import-offer"


def _import_offer(state: str, root: str, full: str | None, status: str) -> str | None:
    """Once per plugin install: one line saying how to backfill the store from past sessions
    (`memhooks import-transcripts`, never run unasked), with the exact command for this
    plugin's store and python."""
    if status not in ("ok", "building") or os.path.exists(os.path.join(state, IMPORT_OFFER)):
        return None
    # lazy: once per plugin install; bootstrap, shlex and config only then
    from memhooks import bootstrap

    if os.path.exists(os.path.join(state, bootstrap.NOTICE_VENV_FAILED)):
        return None  # its setup failed: the command would not run yet
    import shlex

    from memhooks.config import db_path

    venv_memhooks = os.path.join(state, bootstrap.VENV, "bin", "memhooks")
    db = shlex.quote(db_path())
    if full is None or os.path.isfile(venv_memhooks):
        cmd = f"MEMHOOKS_DB={db} {shlex.quote(venv_memhooks)} import-transcripts"
    else:
        cmd = (f"PYTHONPATH={shlex.quote(os.path.join(root, 'src'))} MEMHOOKS_DB={db} "
               f"{shlex.quote(full)} -m memhooks.cli.main import-transcripts")
    when = " once its setup is done" if full is None else ""
    return bootstrap._notice_once(state, IMPORT_OFFER, (
        f"memhooks: to add the docs your past Claude Code sessions fetched, run in a terminal{when}: "
        f"{cmd}  (add --dry-run to preview)"))


def _has_dependencies() -> bool:
    # lazy: importlib.util only off the SessionStart fast path
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("httpx", "pydantic"))


def _warm_output(db: str, project: str, after_warm) -> str | None:
    """Lockfiles changed (or tier1 is incomplete): scan and resolve. In this process when it
    has the dependencies, else in the python that has them, within the hook's time."""
    # lazy: the warm (scan, resolve) or a subprocess only when the fast path had no answer
    if _has_dependencies():
        from memhooks.warm.fastpath import session_start_output

        return session_start_output(db, project, after_warm)
    if os.environ.get("MEMHOOKS_NO_SPAWN") == "1":
        return None
    # This interpreter with its site (an install's python under -I -S lacks site-packages).
    python = os.environ.get("MEMHOOKS_PYTHON", "").strip() or sys.executable
    import subprocess

    from memhooks.config import ENTRY

    env = dict(os.environ, MEMHOOKS_DB=db, CLAUDE_PROJECT_DIR=project)
    try:
        proc = subprocess.run([python, ENTRY, "session-warm"], stdin=subprocess.DEVNULL,
                              capture_output=True, env=env, timeout=WARM_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return None
    out = proc.stdout.decode("utf-8", "replace").strip()
    return out if out.startswith("{") else None


WARM_TIMEOUT_S = 8.0  # inside the hooks.json timeout (10 s) with room for the rest


def _with_notice(out: str | None, notice: str | None) -> str | None:
    if not notice:
        return out
    # lazy: json (re, enum) only for the rare notice
    import json

    data = {}
    if out:
        try:
            data = json.loads(out)
        except ValueError:
            data = {}
    return json.dumps({"systemMessage": notice, **data}, ensure_ascii=False)


def session_start(after_warm=None) -> int:
    """Runs under `python -I -S` with the standard library. Journals the event first (one
    insert), then answers: from tier1 when the lockfiles are unchanged, else scan and
    resolve (the python with the dependencies does that). One JSON object on stdout every
    time. An ingester is started only when there is work for one besides this event."""
    # lazy: hot path (`python -I -S`); config, files and the fast path load here, the warm
    # and the status note only when needed, the log only on failure
    out = notice = None
    try:
        from memhooks.config import MAX_EVENT_BYTES, db_path
        from memhooks.files import read_capped

        raw, total = read_capped(sys.stdin.buffer, MAX_EVENT_BYTES)
        from memhooks.gate import blocked, hook_project

        db, project = db_path(), hook_project(raw)

        if blocked(db, project):
            return 0  # excluded or paused: nothing journaled, warmed or said
        notice = _ensure_python()
        event_id = _journal(db, raw, total, "SessionStart")
        from memhooks.warm.fastpath import fast_output

        out = fast_output(db, project)
        if out is None:
            out = _warm_output(db, project, after_warm)
            started = spawn_ingest(db)
        else:
            started = _other_work(db, event_id) and spawn_ingest(db)
        if not started:
            _trim_journal(db)
        if out is None:  # the warm ran out of time or could not run: say what is cached
            from memhooks.warm.fastpath import status_output

            out = status_output(db, project)
    except BaseException:  # noqa: BLE001 - a hook never breaks the session
        try:
            from memhooks.log import log_exception

            log_exception("session-start")
        except BaseException:  # noqa: BLE001 - not even its log
            pass
    if not out:  # one JSON object every time
        out = ('{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": '
               '"memhooks: no Context7 library IDs are cached for this project yet."}}')
    try:
        out = _with_notice(out, notice)
    except BaseException:  # noqa: BLE001 - the answer without its notice
        pass
    if out:
        try:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001 - a closed stdout
            pass
    return 0


def session_warm(after_warm=None) -> int:
    """The slow half of SessionStart, run by a python with the dependencies: print the hook's
    JSON object (or nothing). A python without them does nothing (no doomed API attempt)."""
    if not _has_dependencies():
        return 0
    # lazy: run by the python with the dependencies; the warm loads only here
    try:
        from memhooks.config import db_path, project_dir
        from memhooks.warm.fastpath import session_start_output

        out = session_start_output(db_path(), project_dir(), after_warm)
        if out:
            sys.stdout.write(out)
            sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - a hook never breaks the session
        try:
            from memhooks.log import log_exception

            log_exception("session-warm")
        except BaseException:  # noqa: BLE001 - not even its log
            pass
    return 0
