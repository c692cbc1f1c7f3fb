"""The SessionStart hook and its slow half, `session-warm`.

SessionStart runs under `python -I -S` with the standard library: it journals the event
first (one insert), then answers from tier1 when the lockfiles are unchanged, else scans and
resolves (the python with the dependencies does that, in this process or in a `session-warm`
child). One JSON object on stdout every time; exit 0 always. An ingester is started only
when there is work for one besides this event.
"""

import os
import sys

from memhooks.capture.hooks import journal, spawn_ingest
from memhooks.config import ENTRY, MAX_EVENT_BYTES, db_path, project_dir
from memhooks.entry._boundary import emit, guard
from memhooks.entry._input import read_stdin
from memhooks.gate import blocked, hook_project
from memhooks.store.journal import spool_waiting
from memhooks.store.queries import has_pending
from memhooks.store.reads import Taken
from memhooks.warm.fastpath import fast_output, status_output

NAME = "session-start"
WARM_TIMEOUT_S = 8.0  # inside the hooks.json timeout (10 s) with room for the rest
IMPORT_OFFER = "notice-import-offer"
NOTHING_CACHED = ('{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": '
                  '"memhooks: no Context7 library IDs are cached for this project yet."}}')


def _ensure_python(said: dict) -> str | None:
    """Plugin mode (the shim sets MEMHOOKS_BOOTSTRAP_STATE): find the interpreters in process
    and return the one-time notice for the user, if any. Children (the ingester, a warm) get
    the python with the dependencies through MEMHOOKS_PYTHON, or are not started yet."""
    state = os.environ.pop("MEMHOOKS_BOOTSTRAP_STATE", "")
    root = os.environ.pop("MEMHOOKS_BOOTSTRAP_ROOT", "")
    if not state or not root:
        return None
    from memhooks import bootstrap  # plugin mode only

    root = os.path.abspath(root)
    full, status, message = bootstrap.ensure(state, root)
    if full:
        os.environ["MEMHOOKS_PYTHON"] = full
    else:
        os.environ["MEMHOOKS_NO_SPAWN"] = "1"  # no python with the dependencies yet
    said["notice"] = message  # kept should the offer below fail
    offer = _import_offer(bootstrap, state, root, full, status)
    return "\n".join(m for m in (message, offer) if m) or None


def _import_offer(bootstrap, state: str, root: str, full: str | None, status: str) -> str | None:
    """Once per plugin install: one line saying how to backfill the store from past sessions
    (`memhooks import-transcripts`, never run unasked), with the exact command for this
    plugin's store and python."""
    if status not in ("ok", "building") or os.path.exists(os.path.join(state, IMPORT_OFFER)):
        return None
    if os.path.exists(os.path.join(state, bootstrap.NOTICE_VENV_FAILED)):
        return None  # its setup failed: the command would not run yet
    import shlex

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
    import importlib.util  # only off the SessionStart fast path

    return all(importlib.util.find_spec(m) is not None for m in ("httpx", "pydantic"))


def _warm_output(db: str, project: str, after_warm) -> str | None:
    """Lockfiles changed (or tier1 is incomplete): scan and resolve. In this process when it
    has the dependencies, else in the python that has them, within the hook's time."""
    if _has_dependencies():
        return _warm_here(db, project, after_warm)
    if os.environ.get("MEMHOOKS_NO_SPAWN") == "1":
        return None
    # This interpreter with its site (an install's python under -I -S lacks site-packages).
    python = os.environ.get("MEMHOOKS_PYTHON", "").strip() or sys.executable
    import subprocess

    env = dict(os.environ, MEMHOOKS_DB=db, CLAUDE_PROJECT_DIR=project)
    try:
        proc = subprocess.run([python, ENTRY, "session-warm"], stdin=subprocess.DEVNULL,
                              capture_output=True, env=env, timeout=WARM_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return None
    out = proc.stdout.decode("utf-8", "replace").strip()
    return out if out.startswith("{") else None


def _warm_here(db: str, project: str, after_warm) -> str | None:
    """Scan and resolve in this process (a python with the dependencies)."""
    from memhooks.warm.session import session_start_output  # the warm's path only

    return session_start_output(db, project, after_warm)


def _with_notice(out: str | None, notice: str | None) -> str | None:
    if not notice:
        return out
    import json  # only for the rare notice (json brings re and enum)

    data = {}
    if out:
        try:
            data = json.loads(out)
        except ValueError:
            data = {}
    return json.dumps({"systemMessage": notice, **data}, ensure_ascii=False)


def other_work(db: str, event_id: int | None, others: bool | None) -> bool:
    """Whether an ingester has anything to do beyond SessionStart events (this one and
    earlier ones add no answer and wait for the next ingest): other pending events (`others`,
    asked on the journal's connection; None when it could not say), a reads log to fold,
    spooled events. A session that answered from tier1 then starts no process."""
    return event_id is None or others is not False or Taken(db).pending() or spool_waiting(db)


def _answer(after_warm, said: dict) -> None:
    """Journal, then the hook's answer into `said["out"]` (`said["quiet"]`: excluded or
    paused, nothing is said; `said["notice"]`: the one-time notice for the user)."""
    raw, total = read_stdin(MAX_EVENT_BYTES)
    db, project = db_path(), hook_project(raw)
    if blocked(db, project):
        said["quiet"] = True
        return  # excluded or paused: nothing journaled, warmed or said
    said["notice"] = _ensure_python(said)
    asked: dict = {}

    def others(conn, event_id: int) -> None:
        asked["others"] = has_pending(conn, besides=event_id, answers_only=True)

    event_id = journal(db, raw, total, "SessionStart", then=others)

    out = fast_output(db, project)
    if out is None:
        out = _warm_output(db, project, after_warm)
        spawn_ingest(db)
    elif other_work(db, event_id, asked.get("others")):
        spawn_ingest(db)
    if out is None:  # the warm ran out of time or could not run: say what is cached

        out = status_output(db, project)
    said["out"] = out


def session_start(after_warm=None) -> int:
    """The SessionStart hook: one JSON object on stdout every time (unless the project is
    excluded or memhooks is paused), whatever failed on the way (logged once).
    `after_warm(db, project)`: the caller's work after a warm that ran (memhooks._launch: a
    detached team pull)."""
    said: dict = {"out": None, "notice": None, "quiet": False}
    guard(NAME, _answer, after_warm, said)
    if not said["quiet"]:
        emit(_with_notice(said["out"] or NOTHING_CACHED, said["notice"]))
    return 0


def session_warm(after_warm=None) -> int:
    """The slow half of SessionStart, run by a python with the dependencies: print the hook's
    JSON object (or nothing). A python without them does nothing (no doomed API attempt)."""
    def run() -> int:
        if not _has_dependencies():
            return 0
        emit(_warm_here(db_path(), project_dir(), after_warm))
        return 0

    return guard("session-warm", run)


def main(args=(), after_warm=None) -> int:
    return session_start(after_warm)


def warm_main(args=(), after_warm=None) -> int:
    return session_warm(after_warm)
